"""The hand-written R3 question sets: well formed, balanced, and every deciding fact is in its KG."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

from kgteam.eval.datasets import load_dataset
from kgteam.tools.sparql_guard import sparql_literal

DATA = Path(__file__).resolve().parents[1] / "data" / "r3"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _missing_facts(tools, facts: list[list[str]]) -> list[list[str]]:
    """Facts ``[subject label, relation name, object label]`` the KG does not hold."""

    async def holds(s: str, rel: str, o: str) -> bool:
        query = (f"ASK {{ ?s <{RDFS_LABEL}> {sparql_literal(s)} . ?o <{RDFS_LABEL}> {sparql_literal(o)} . ?s ?p ?o . "
                 f"FILTER(STRENDS(STR(?p), {sparql_literal('/' + rel)})) }}")
        return bool((await tools.run_sparql(query)).boolean)

    async def run() -> list[list[str]]:
        return [f for f in facts if not await holds(*f)]

    return asyncio.run(run())


def test_commonsense_set_is_large_balanced_and_varied():
    rows = _rows("commonsense.jsonl")
    assert len(rows) >= 60
    assert {r["kind"] for r in rows} == {"commonsense"}
    assert all(set(r) == {"question", "answers", "kind", "kg", "rule", "facts"} for r in rows)
    per_kg = Counter(r["kg"] for r in rows)
    assert set(per_kg) == {"metaqa", "wc2014"} and min(per_kg.values()) >= 25
    golds = Counter(r["answers"][0] for r in rows)
    assert set(golds) == {"True", "False"} and abs(golds["True"] - golds["False"]) <= len(rows) // 10
    assert len({r["rule"] for r in rows}) >= 20 and len({r["question"] for r in rows}) == len(rows)
    assert all(r["facts"] and all(len(f) == 3 for f in r["facts"]) for r in rows)


def test_commonsense_and_preference_files_load_as_datasets():
    items = load_dataset(str(DATA / "commonsense.jsonl"))
    assert items[0].tags["kind"] == "commonsense" and items[0].extra["facts"] and items[0].extra["rule"]
    assert {it.answers[0].label for it in items} == {"True", "False"}
    prefs = load_dataset(str(DATA / "preferences.jsonl"))
    assert prefs[-1].extra["profile"].endswith("preferences.ttl#kim")


def test_metaqa_commonsense_facts_are_in_the_demo_kg(metaqa_demo):
    _, tools = metaqa_demo
    facts = [f for r in _rows("commonsense.jsonl") if r["kg"] == "metaqa" for f in r["facts"]]
    assert len(facts) > 60 and _missing_facts(tools, facts) == []


def test_wc2014_commonsense_facts_are_in_the_wc2014_kg(wc2014_kg):
    _, tools = wc2014_kg
    facts = [f for r in _rows("commonsense.jsonl") if r["kg"] == "wc2014" for f in r["facts"]]
    assert len(facts) > 60 and _missing_facts(tools, facts) == []


def test_the_checker_notices_a_fact_that_is_not_there(metaqa_demo):
    _, tools = metaqa_demo
    assert _missing_facts(tools, [["Kismet", "directed_by", "Woody Allen"], ["Kismet", "release_year", "1944"]]) == [
        ["Kismet", "directed_by", "Woody Allen"]]


def test_preference_items_join_a_personal_kg_with_metaqa_films(metaqa_demo):
    import pyoxigraph as ox

    rows = _rows("preferences.jsonl")
    assert 8 <= len(rows) <= 15 and {r["kind"] for r in rows} == {"preference"}
    assert set(Counter(r["answers"][0] for r in rows)) == {"True", "False"}
    store = ox.Store()
    store.load(path=str(DATA / "preferences.ttl"), format=ox.RdfFormat.TURTLE)
    label = ox.NamedNode(RDFS_LABEL)
    names = {q.subject.value: q.object.value for q in store.quads_for_pattern(None, label, None)}
    personal = {(names.get(q.subject.value), q.predicate.value.rsplit("/", 1)[-1], names.get(q.object.value))
                for q in store.quads_for_pattern(None, None, None) if isinstance(q.object, ox.NamedNode)}
    _, tools = metaqa_demo
    film_facts = [f for r in rows for f in r["facts"] if f[0] not in {"Sam", "Kim"}]
    profile_facts = [tuple(f) for r in rows for f in r["facts"] if f[0] in {"Sam", "Kim"}]
    assert _missing_facts(tools, film_facts) == []
    assert profile_facts and not [f for f in profile_facts if f not in personal]
