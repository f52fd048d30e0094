"""Every KG's own names, everywhere a person sees an entity (issue 28).

One small campus KG per naming style (tests/data/names): each is asked the same question by the
model-free Triad team, and the answer, its evidence and its grading must use the KG's names,
never the IRIs' local names. The same KGs are then asked through ``oxigraph serve-read-only``,
where nothing copied the names into ``rdfs:label``.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pyoxigraph
import pytest

from kgteam.eval.datasets import DatasetItem, GoldAnswer
from kgteam.eval.gold_names import named_golds
from kgteam.eval.grading import grade_answer
from kgteam.eval.metrics import Predicted
from kgteam.eval.runner import evaluate_item

DATA = Path(__file__).resolve().parents[1] / "data" / "names"
C = "http://example.org/campus/"
QUESTION = "Which students does Marisol Achterburg advise?"
ADVISEES = ["Hana Bellweather", "Jonah Pettifer"]
OPAQUE = {"Marisol Achterburg": C + "staff/4417", "Jonah Pettifer": C + "student/s-0981",
          "Hana Bellweather": C + "student/s-1204"}
# style -> (file, --label-predicate IRIs)
STYLES = {
    "schema_name": ("schema_name.ttl", ()),
    "skos_preflabel": ("skos_preflabel.ttl", ()),
    "foaf_name": ("foaf_name.ttl", ()),
    "no_names": ("no_names.ttl", ()),
    "two_languages": ("two_languages.ttl", ()),
    "own_predicate": ("own_predicate.ttl", (C + "displayName",)),
}
GRAPH = "http://kgteam.test/names/"


def iri_of(style: str, name: str) -> str:
    return C + name.replace(" ", "_") if style == "no_names" else OPAQUE[name]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("names-home")
    for style, (file, predicates) in STYLES.items():
        build_kg([DATA / file], style, home=home, progress=False, embed=False, label_predicates=predicates)
    return home


def _check_answer(answer, style: str) -> None:
    """The answer, its values and its evidence name the students as the KG does."""
    assert answer.status == "answered", answer.text
    assert answer.confidence is not None and 0.0 <= answer.confidence <= 1.0
    assert sorted(v.label for v in answer.values) == ADVISEES
    assert {v.iri for v in answer.values} == {iri_of(style, n) for n in ADVISEES}
    assert all(n in answer.text for n in ADVISEES) and "s-0981" not in answer.text
    shown = {(t.subject_label, t.object_label) for t in answer.evidence.triples}
    assert {("Marisol Achterburg", n) for n in ADVISEES} <= shown, shown
    for t in answer.evidence.triples:  # no local name anywhere a person reads
        for label in (t.subject_label, t.object_label, t.predicate_label):
            assert label and "4417" not in label and "s-" not in label and "_" not in label, t


def _grade(team, style: str, answer) -> None:
    """Gold answers given by IRI only are named by the KG, so the answer's names grade right; the
    full eval path agrees (record golds named, graded accurate, evidence grounded)."""
    tools = team.runner.kg
    golds = [GoldAnswer(iri=iri_of(style, n)) for n in ADVISEES]
    named = asyncio.run(named_golds(golds, tools))
    assert sorted(g.label for g in named) == ADVISEES
    by_name = asyncio.run(grade_answer(QUESTION, answer.text, [Predicted(label=v.label) for v in answer.values],
                                       named))
    assert (by_name.grade, by_name.decided_by) == ("accurate", "rule:string"), by_name  # matched by name
    item = DatasetItem(id=f"names-{style}", question=QUESTION, answers=golds)
    record = asyncio.run(evaluate_item(item, team.runner, tools=tools))
    assert record.grading is not None and record.grading.grade == "accurate", record.grading
    assert sorted(g.label for g in record.gold) == ADVISEES
    assert record.groundedness is not None and record.groundedness.grounded, record.groundedness


@pytest.mark.parametrize("style", list(STYLES))
def test_each_naming_style_answers_shows_evidence_and_grades_with_the_kgs_names(home, style):
    from kgteam import Team
    from kgteam.agents.trace import render_text

    with Team.default(kg=style, model="none", home=home, sessions=home / f"{style}.sqlite") as team:
        answer = team.ask(QUESTION, session="s1")
        _check_answer(answer, style)
        _grade(team, style, answer)
        trace = render_text(team.store, "s1")  # what `kgteam trace` prints
    assert "Marisol Achterburg" in trace and all(n in trace for n in ADVISEES), trace


def test_names_in_two_languages_show_the_english_one_and_find_both(home):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    with open_kg("two_languages", home=home) as kg:
        tools = KGTools.from_kg(kg, embedder=None)
        names = asyncio.run(tools.labels_for([OPAQUE["Jonah Pettifer"], C + "unit/CHEM"]))
        assert names == {OPAQUE["Jonah Pettifer"]: "Jonah Pettifer", C + "unit/CHEM": "Department of Chemistry"}
        hits = asyncio.run(tools.search_entities("Jonas Pettifer", 1))  # the German name is an alias
        assert hits[0].iri == OPAQUE["Jonah Pettifer"] and hits[0].label == "Jonah Pettifer"


def test_aliases_are_found_but_never_shown_and_the_store_keeps_the_kgs_triples(home):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    with open_kg("schema_name", home=home) as kg:
        tools = KGTools.from_kg(kg, embedder=None)
        hit = asyncio.run(tools.search_entities("J. Pettifer", 1))[0]
        assert (hit.iri, hit.label, hit.matched) == (OPAQUE["Jonah Pettifer"], "Jonah Pettifer", "J. Pettifer")
        names = asyncio.run(tools.labels_for([OPAQUE["Jonah Pettifer"], C + "course/MA-101", C + "advises"]))
        assert names == {OPAQUE["Jonah Pettifer"]: "Jonah Pettifer", C + "course/MA-101": "Calculus One",
                         C + "advises": "advises"}
        schema = asyncio.run(tools.entity_schema(OPAQUE["Marisol Achterburg"]))
        assert schema.label == "Marisol Achterburg"
        near = asyncio.run(tools.neighbors(OPAQUE["Jonah Pettifer"]))
        assert near and all(t.predicate not in tools.naming.all_predicates for t in near)
        # decided in docs/decisions.md: the KG's names are not copied into rdfs:label
        copied = kg.store.query(f"ASK {{ <{OPAQUE['Jonah Pettifer']}> "
                                "<http://www.w3.org/2000/01/rdf-schema#label> ?l }", timeout_s=5, max_rows=1)
        assert copied.boolean is False
    assert kg.manifest["label_predicates"] == []
    with open_kg("own_predicate", home=home) as kg:
        assert kg.manifest["label_predicates"] == [C + "displayName"]


# ------------------------------------------------------------------------------ endpoint


@pytest.fixture(scope="module")
def campus_server(tmp_path_factory: pytest.TempPathFactory):
    """``oxigraph serve-read-only`` with each style's file in a named graph of its own."""
    from servers import oxigraph_cli, start_oxigraph

    if oxigraph_cli() is None:
        pytest.skip("the oxigraph CLI is not installed (pip install oxigraph)")
    location = tmp_path_factory.mktemp("names-server") / "store"
    store = pyoxigraph.Store(str(location))
    for style, (file, _) in STYLES.items():
        store.load(path=str(DATA / file), format=pyoxigraph.RdfFormat.TURTLE,
                   to_graph=pyoxigraph.NamedNode(GRAPH + style))
    store.flush()
    del store
    gc.collect()
    server = start_oxigraph(location, query_timeout_s=10)
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.integration
@pytest.mark.parametrize("style", list(STYLES))
def test_the_same_through_an_oxigraph_endpoint(home, campus_server, style):
    from kgteam import Team
    from kgteam.config.defaults import default_team_spec, with_overrides
    from kgteam.config.schema import KGSpec, LabelsSpec

    kg = KGSpec(backend="sparql", endpoint=campus_server.url, options={"default_graph": GRAPH + style},
                labels=LabelsSpec(backend="tantivy", path=str(home / "kgs" / style / "labels")),
                label_predicates=list(STYLES[style][1]), embedder={"provider": "none"})
    spec = with_overrides(default_team_spec(), model="none").model_copy(update={"kg": kg})
    with Team(spec, home=home) as team:
        tools = team.runner.kg
        assert type(tools.store).__name__ == "SparqlEndpointStore"
        copied = tools.store.query("ASK { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l }", timeout_s=5,
                                   max_rows=1)
        assert copied.boolean is (style == "two_languages")  # only that KG says rdfs:label itself
        answer = team.ask(QUESTION)
        _check_answer(answer, style)
        _grade(team, style, answer)


def test_vectors_read_the_kgs_names_too(tmp_path):
    """Triple sentences embedded for similar_triples say the KG's names; naming triples, the
    user's own predicate included, are not facts."""
    from kgteam.tools.embedding.choose import build_embedder
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.loading import build_kg

    embedder = build_embedder()
    if embedder is None:
        pytest.skip("the embedded embedder is not installed")
    build_kg([DATA / "own_predicate.ttl"], "own", home=tmp_path, progress=False, embed=embedder,
             label_predicates=[C + "displayName"])
    with open_kg("own", home=tmp_path) as kg:
        assert kg.vectors is not None and kg.vectors.info.relations == 5  # advises memberOf enrolledIn seatCount offeredBy
        assert "display name" not in kg.vectors.relation_texts
        tools = KGTools.from_kg(kg, embedder=embedder)
        hits = asyncio.run(tools.similar_triples("Marisol Achterburg advises Jonah Pettifer", k=1))
        assert (hits[0].subject_label, hits[0].object_label) == ("Marisol Achterburg", "Jonah Pettifer")
