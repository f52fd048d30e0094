"""Retrieval diagnostics on a hand-made KG whose neighbourhoods were counted by hand."""

from __future__ import annotations

import pytest

from kgteam.eval.datasets import (
    METAQA_BASE,
    DatasetItem,
    EntityRef,
    GoldAnswer,
    GoldPath,
    entity_iri,
    relation_iri,
)
from kgteam.eval.diagnostics import (
    DiagnosticsConfig,
    diagnose,
    gold_topics,
    path_query,
    summarize_diagnostics,
)

KB = """\
Heat|directed_by|Michael Mann
Heat|starred_actors|Al Pacino
Heat|starred_actors|Robert De Niro
Heat|release_year|1995
Collateral|directed_by|Michael Mann
Collateral|starred_actors|Tom Cruise
Collateral|release_year|2004
Top Gun|starred_actors|Tom Cruise
Top Gun|release_year|1986
"""


def ent(name: str) -> EntityRef:
    return EntityRef(label=name, iri=entity_iri(METAQA_BASE, name))


def gold(*names: str) -> list[GoldAnswer]:
    return [GoldAnswer(label=n, iri=entity_iri(METAQA_BASE, n)) for n in names]


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("diaghome")
    (home / "kb.txt").write_text(KB, encoding="utf-8")
    build_kg([home / "kb.txt"], "films", home=home, format="metaqa", progress=False)
    kg = open_kg("films", home=home)
    t = KGTools(kg.store, kg.labels, max_rows=10_000)
    yield t
    t.close()


ITEMS = [
    DatasetItem(id="d1", question="who directed Heat", answers=gold("Michael Mann"), topic_entities=[ent("Heat")],
                gold_query=f"SELECT ?x WHERE {{ <{entity_iri(METAQA_BASE, 'Heat')}> "
                           f"<{relation_iri(METAQA_BASE, 'directed_by')}> ?x }}", tags={"hops": 1}),
    DatasetItem(id="d2", question="which films share directors with Heat", answers=gold("Collateral"),
                topic_entities=[ent("Heat")], tags={"hops": 2}),
    DatasetItem(id="d3", question="what films did Tom Cruise act in", answers=gold("Collateral", "Top Gun"),
                topic_entities=[ent("Tom Cruise")], tags={"hops": 1},
                gold_paths=[GoldPath(start=ent("Tom Cruise"), relations=["starred_actors_inverse"],
                                     relation_iris=[relation_iri(METAQA_BASE, "starred_actors")], directions=["in"])]),
]


def test_gold_topics_are_placed_in_the_question():
    (topic,) = gold_topics(ITEMS[1])
    assert (topic.text, topic.start, topic.end, topic.iris) == ("Heat", 5, 6, [entity_iri(METAQA_BASE, "Heat")])


async def test_hand_counted_neighbourhoods(tools):
    cfg = DiagnosticsConfig(max_hops=2)
    d1, d2, d3 = await diagnose(tools, ITEMS, cfg)
    assert all(d.error is None for d in (d1, d2, d3))
    assert d1.linking_rank == 1 and d3.linking_rank == 1
    # Heat touches 4 triples; hop 2 adds Collateral -directed_by-> Michael Mann (the only edge of the new nodes)
    assert [(s.triples, s.answer_recall) for s in d1.neighbourhood] == [(4, 1.0), (5, 1.0)]
    assert [(s.triples, s.answer_recall, s.all_answers) for s in d2.neighbourhood] == [(4, 0.0, False), (5, 1.0, True)]
    # Tom Cruise: 2 triples; hop 2 adds Collateral directed_by + two release_year triples
    assert [(s.triples, s.all_answers) for s in d3.neighbourhood] == [(2, True), (5, True)]
    # KERAG's filter ranks "directed by" first and finds the 2-hop answer through directed_by / ^directed_by
    assert d2.filtered[0].kept_predicates[0] == "directed by"
    assert d2.filtered[1].all_answers and "directed by / ^directed by" in d2.filtered[1].kept_predicates
    assert d3.filtered[0].kept_predicates[0] == "^starred actors" and d3.filtered[0].all_answers
    assert d1.gold_query.kind == "sparql" and d1.gold_query.exact
    assert d3.gold_query.kind == "path" and d3.gold_query.exact and d3.gold_query.rows == 2
    summary = summarize_diagnostics([d1, d2, d3])
    assert summary["linking_hit@1"] == 1.0
    assert summary["neighbourhood_right_hop"]["answer_recall"] == 1.0
    assert summary["gold_query"] == {"executed": 1.0, "recall": 1.0, "exact": 1.0}


async def test_filter_respects_triple_budget(tools):
    cfg = DiagnosticsConfig(max_hops=2, triple_budget=2, unfiltered=False)
    (d,) = await diagnose(tools, [ITEMS[1]], cfg)
    assert d.neighbourhood == [] and all(s.triples <= 2 for s in d.filtered)
    assert d.filtered[1].truncated  # the 2-hop paths hold more than 2 triples


async def test_the_filter_is_the_kerag_playbooks_own(tools, monkeypatch):
    """diagnose calls the planner/filter code the playbook runs: a change there shows here."""
    import kgteam.eval.diagnostics as diagnostics

    seen = []
    real = diagnostics.filter_hop

    async def spy(*args, **kwargs):
        seen.append(args[1])
        return await real(*args, **kwargs)

    monkeypatch.setattr(diagnostics, "filter_hop", spy)
    await diagnose(tools, [ITEMS[0]], DiagnosticsConfig(max_hops=1, unfiltered=False))
    from kgteam.roles.kerag import schema_filter
    from kgteam.roles.semantic import path_planning

    assert seen == ["who directed Heat"] and schema_filter.filter_hop is path_planning.filter_hop is real


def test_path_query_is_built_safely():
    bad = GoldPath(start=EntityRef(label="x", iri="http://x/> } DROP ALL {"), relations=["r"],
                   relation_iris=["http://x/r"], directions=["out"])
    with pytest.raises(Exception, match="invalid IRI"):
        path_query([bad])


def test_diagnose_cli(tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    from kgteam.cli.app import app
    from kgteam.eval.datasets import write_jsonl
    from kgteam.tools.loading import build_kg

    (tmp_path / "kb.txt").write_text(KB, encoding="utf-8")
    build_kg([tmp_path / "kb.txt"], "films", home=tmp_path, format="metaqa", progress=False)
    monkeypatch.setenv("KGTEAM_HOME", str(tmp_path))
    write_jsonl(ITEMS, tmp_path / "items.jsonl")
    out = tmp_path / "diag.jsonl"
    result = CliRunner().invoke(app, ["diagnose", str(tmp_path / "items.jsonl"), "--kg", "films", "--max-hops", "2",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{"):])
    assert summary["n"] == 3 and summary["linking_hit@1"] == 1.0
    assert summary["filtered_right_hop"]["all_answers"] == 1.0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3
