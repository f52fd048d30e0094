"""The shape sets (benchmarks/shapes/*.jsonl) and the grading of benchmarks/shapes.py.

The sets are checked without a KG (valid lines, known shapes, gold SPARQL that parses and whose form
fits the shape) and on the KGs they are written for (every gold query runs through the guarded
``run_sparql``; answerable shapes have an answer, unanswerable ones none). The grader is run on
constructed answers: numbers, booleans, unanswerable questions and entity sets.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path

import pytest
from rdflib.plugins.sparql import prepareQuery

from kgteam.eval.metrics import Predicted
from kgteam.tools.types import RDFTerm, SparqlResult

ROOT = Path(__file__).resolve().parents[2]
SETS = {"metaqa": ROOT / "benchmarks" / "shapes" / "metaqa.jsonl",
        "wc2014": ROOT / "benchmarks" / "shapes" / "worldcup.jsonl"}


def _load_runner():
    spec = importlib.util.spec_from_file_location("shapes_bench", ROOT / "benchmarks" / "shapes.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


shapes = _load_runner()


# ------------------------------------------------------------------------------ the set files

@pytest.mark.parametrize("name", sorted(SETS))
def test_every_line_is_a_valid_question_with_a_parsing_gold_query(name):
    path = SETS[name]
    ids = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        row = json.loads(line)
        assert set(shapes.REQUIRED) <= set(row), f"{path.name}:{n} lacks {set(shapes.REQUIRED) - set(row)}"
        assert row["shape"] in shapes.SHAPES, f"{path.name}:{n}: shape {row['shape']!r}"
        assert row["id"] not in ids, f"{path.name}:{n}: duplicate id"
        ids.add(row["id"])
        query = prepareQuery(row["sparql"])  # raises on a syntax error
        form = query.algebra.name
        if row["shape"] == "ask":
            assert form == "AskQuery", f"{row['id']}: an ask question needs an ASK query"
        else:
            assert form == "SelectQuery", f"{row['id']}: {form}"
        if row["shape"] == "count":
            assert "COUNT(" in row["sparql"].upper(), f"{row['id']}: a count question needs COUNT"
        assert "PREFIX" not in row["sparql"].upper(), f"{row['id']}: full IRIs only"
    # the reader accepts the file as the benchmark reads it
    questions = shapes.read_shape_set(path)
    per_shape = {s: sum(q.shape == s for q in questions) for s in shapes.SHAPES}
    assert all(n >= 8 for n in per_shape.values()), per_shape


def test_reader_names_the_bad_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    good = {"id": "a", "question": "Who?", "shape": "chain", "sparql": "SELECT ?x WHERE { ?x ?p ?o }"}
    cases = [
        ("{not json", "not JSON"),
        (json.dumps({**good, "shape": "riddle"}), "unknown shape 'riddle'"),
        (json.dumps({k: v for k, v in good.items() if k != "sparql"}), "missing or empty field(s): sparql"),
        (json.dumps(good) + "\n" + json.dumps(good), "duplicate id 'a'"),
    ]
    for text, message in cases:
        bad.write_text(text + "\n", encoding="utf-8")
        with pytest.raises(shapes.ShapeSetError) as err:
            shapes.read_shape_set(bad)
        assert message in str(err.value) and "bad.jsonl:" in str(err.value)


def _check_golds_on(tools, path):
    questions = shapes.read_shape_set(path)
    golds = asyncio.run(shapes.compute_gold(tools, questions))
    for q in questions:
        gold = golds[q.id]
        assert not isinstance(gold, str), f"{q.id}: {gold}"
        if q.shape == "unanswerable":
            assert gold.empty, f"{q.id}: the KG answers it: {gold.display()}"
        elif q.shape == "ask":
            assert gold.kind == "boolean", q.id
        elif q.shape == "count":
            assert gold.kind == "number" and int(gold.number) > 0, q.id
        else:
            assert gold.kind == "items" and gold.items, f"{q.id}: empty gold"
            assert all(g.label for g in gold.items if g.iri), f"{q.id}: gold IRIs without a KG label"
    asks = [golds[q.id].boolean for q in questions if q.shape == "ask"]
    assert True in asks and False in asks  # yes and no answers both occur
    return golds


def test_metaqa_golds_run_on_the_demo_kg(metaqa_demo):
    _, tools = metaqa_demo
    golds = _check_golds_on(tools, SETS["metaqa"])
    assert golds["metaqa-count-01"].number == "19"  # films directed by Ridley Scott
    assert golds["metaqa-superlative-01"].display() == ["The Counselor"]
    assert sorted(golds["metaqa-superlative-03"].display()) == ["Captain Phillips", "Killing Lincoln",
                                                                "Saving Mr. Banks"]  # ties kept


def test_wc2014_golds_run_on_wc2014(wc2014_kg):
    _, tools = wc2014_kg
    golds = _check_golds_on(tools, SETS["wc2014"])
    assert golds["wc2014-literal-01"].display() == ["23"]


# ----------------------------------------------------------------------------------- grading

def _items(*pairs):
    return shapes.Gold("items", items=[shapes.GoldAnswer(label=label, iri=iri) for label, iri in pairs])


E = "http://example.org/films/e/"
ALIEN, BLADE, GLADIATOR = (E + "Alien", E + "Blade%20Runner", E + "Gladiator")
FILMS = _items(("Alien", ALIEN), ("Blade Runner", BLADE))


def test_numbers_are_graded_numerically():
    gold = shapes.Gold("number", number="19")
    for values, text in [([Predicted("19")], "19"), ([Predicted("19.0")], ""), ([], "19 films"), ([], "19")]:
        g = shapes.grade("count", gold, status="answered", text=text, values=values)
        assert g.right and g.exact and g.outcome == "right", (values, text)
    wrong = shapes.grade("count", gold, status="answered", values=[Predicted("20")])
    assert not wrong.right and wrong.outcome == "wrong-stated"
    numbers = shapes.grade("count", gold, status="answered", values=[Predicted("19"), Predicted("22")])
    assert not numbers.right and numbers.outcome == "wrong-stated"  # a list whose first item is 19 is no count
    listed = shapes.grade("count", gold, status="answered", values=[Predicted("Alien", ALIEN)])
    assert listed.outcome == "wrong-stated"  # a list of films is not a count
    assert shapes.grade("count", gold, status="unknown", text="I don't know").outcome == "abstained"


def test_booleans_are_read_from_values_or_the_first_clause():
    yes, no = shapes.Gold("boolean", boolean=True), shapes.Gold("boolean", boolean=False)
    assert shapes.grade("ask", yes, status="answered", text="Yes, Ridley Scott directed Alien.").right
    assert shapes.grade("ask", yes, status="answered", values=[Predicted("true")]).right
    assert shapes.grade("ask", no, status="answered", text="No.").right
    assert shapes.grade("ask", no, status="answered", values=[Predicted("False")]).right
    assert shapes.grade("ask", yes, status="answered", text="No.").outcome == "wrong-stated"
    # an entity whose name starts with "No" is not a "no"
    entity = shapes.grade("ask", no, status="answered", values=[Predicted("No Country for Old Men")])
    assert not entity.right and entity.outcome == "wrong-stated"


def test_unanswerable_questions_reward_abstaining_only():
    empty = shapes.Gold("items")
    assert shapes.grade("unanswerable", empty, status="unknown", text="I don't know").outcome == "right"
    assert shapes.grade("unanswerable", empty, status="refused").right
    stated = shapes.grade("unanswerable", empty, status="answered", values=[Predicted("Ridley Scott")])
    assert not stated.right and stated.outcome == "wrong-stated"
    # an empty gold on another shape is graded the same way (the KG has no answer)
    assert shapes.grade("chain", empty, status="unknown").right
    assert shapes.grade("chain", empty, status="answered", text="Alien").outcome == "wrong-stated"
    assert shapes.grade("unanswerable", empty, status="error").outcome == "error"


def test_entity_sets_hits_at_1_and_exact():
    both = shapes.grade("chain", FILMS, status="answered", values=[Predicted("Alien", ALIEN), Predicted("x", BLADE)])
    assert both.right and both.exact
    by_label = shapes.grade("chain", FILMS, status="answered", values=[Predicted("blade runner"), Predicted("ALIEN")])
    assert by_label.right and by_label.exact  # labels match the KG's labels of the gold IRIs
    part = shapes.grade("chain", FILMS, status="answered", values=[Predicted("Alien", ALIEN)])
    assert part.right and not part.exact
    extra = shapes.grade("chain", FILMS, status="answered",
                         values=[Predicted("Alien", ALIEN), Predicted("Blade Runner", BLADE),
                                 Predicted("Gladiator", GLADIATOR)])
    assert extra.right and not extra.exact
    first_wrong = shapes.grade("superlative", FILMS, status="answered",
                               values=[Predicted("Gladiator", GLADIATOR), Predicted("Alien", ALIEN)])
    assert not first_wrong.right and first_wrong.outcome == "wrong-stated"
    text_only = shapes.grade("union", FILMS, status="answered", text="Alien and Blade Runner")
    assert text_only.right and text_only.exact
    year = _items(("1979", "http://example.org/films/e/1979"))
    assert shapes.grade("literal", year, status="answered", values=[Predicted("1979")]).right
    assert shapes.grade("literal", year, status="answered", values=[Predicted("1979.0")]).right
    assert not shapes.grade("literal", year, status="answered", values=[Predicted("1980")]).right
    assert shapes.grade("chain", FILMS, status="unknown", text="I don't know").outcome == "abstained"


def test_gold_from_sparql_results():
    ask = SparqlResult(query="ASK {}", boolean=False)
    assert shapes.gold_from_result(ask, {}).kind == "boolean" and shapes.gold_from_result(ask, {}).boolean is False
    count = SparqlResult(query="q", variables=["n"], rows=[{"n": RDFTerm(
        type="literal", value="7", datatype="http://www.w3.org/2001/XMLSchema#integer")}])
    assert shapes.gold_from_result(count, {}).number == "7"
    films = SparqlResult(query="q", variables=["x"], rows=[{"x": RDFTerm(type="uri", value=ALIEN)},
                                                          {"x": RDFTerm(type="uri", value=ALIEN)},
                                                          {"x": RDFTerm(type="uri", value=BLADE)}])
    gold = shapes.gold_from_result(films, {ALIEN: "Alien", BLADE: "Blade Runner"})
    assert gold.display() == ["Alien", "Blade Runner"]  # duplicates dropped, KG labels kept
    assert shapes.gold_from_result(SparqlResult(query="q", variables=["x"]), {}).empty


def test_summary_counts_per_shape():
    def row(shape, outcome, conf, status="answered"):
        return {"shape": shape, "outcome": outcome, "right": outcome == "right", "exact": outcome == "right",
                "confidence": conf, "status": status, "gold_empty": shape == "unanswerable", "seconds": 0.1}
    rows = [row("count", "right", 0.95), row("count", "wrong-stated", 0.97), row("count", "abstained", 0.2, "unknown"),
            row("count", "wrong-stated", 0.5), row("unanswerable", "right", 0.1, "unknown")]
    out = shapes.summarize(rows)
    count = out["by_shape"]["count"]
    assert count["n"] == 4 and count["hits_at_1"] == 0.25 and count["wrong_stated"] == 0.5
    assert count["abstained"] == 0.25 and count["wrong_at_conf_ge_0_9"] == 1
    assert count["mean_confidence_stated"] == round((0.95 + 0.97 + 0.5) / 3, 4)
    assert out["total"]["n"] == 5 and out["total"]["hits_at_1"] == 0.4
    assert out["by_shape"]["unanswerable"]["gold_empty"] == 0  # empty gold is expected there
