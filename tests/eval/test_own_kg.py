"""The atelier KG written for kgteam (tests/data/kgs/atelier): every gold answer holds in the KG.

The questions file is read by the same reader the eval runner and ``benchmarks/floor.py`` use;
each row's gold SPARQL is run on the KG as kgteam's loader builds it, and must return exactly
the gold answers (answerable rows) or nothing (rows whose answer the KG does not hold).
"""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgteam.eval.datasets import DatasetItem, load_dataset

FOLDER = Path(__file__).resolve().parents[1] / "data" / "kgs" / "atelier"
TTL = FOLDER / "atelier.ttl"
QUESTIONS = FOLDER / "questions.jsonl"
JOINS = FOLDER / "joins.jsonl"  # questions about two entities at once (KERAG joins them)
BASE = "http://example.org/atelier/"
RDFS_LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
SKOS = "http://www.w3.org/2004/02/skos/core#"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
# benchmark KGs' relation names: the atelier KG must not reuse them
FOREIGN_RELATIONS = {"directed_by", "written_by", "starred_actors", "release_year", "in_language", "has_genre",
                     "has_tags", "has_imdb_rating", "has_imdb_votes", "plays_position", "plays_in_club",
                     "nationality", "gender", "spouse", "parents", "children", "place_of_birth", "profession"}


@pytest.fixture(scope="module")
def items() -> list[DatasetItem]:
    return load_dataset(str(QUESTIONS))


@pytest.fixture(scope="module")
def store(atelier_home):
    from kgteam.tools.kg import open_kg

    kg = open_kg("atelier", home=atelier_home)
    yield kg.store.store
    kg.close()


def _source() -> ox.Store:
    s = ox.Store()
    s.load(path=str(TTL), format=ox.RdfFormat.TURTLE)
    return s


def test_kg_is_small_labelled_and_its_own():
    s = _source()
    triples = list(s)
    naming = {RDFS_LABEL.value, SKOS + "altLabel", "http://www.w3.org/2000/01/rdf-schema#comment"}
    facts = [q for q in triples if q.predicate.value not in naming]  # relation and rdf:type triples
    assert 100 <= len(facts) <= 140 and len(triples) <= 220
    predicates = {q.predicate for q in triples}
    nodes = {q.subject for q in triples} | {q.object for q in triples if isinstance(q.object, ox.NamedNode)}
    for node in (nodes | predicates) - {RDFS_LABEL, RDF_TYPE}:
        if node.value.startswith(BASE):
            assert list(s.quads_for_pattern(node, RDFS_LABEL, None)), f"{node.value} has no rdfs:label"
    own = {p.value.removeprefix(BASE) for p in predicates if p.value.startswith(BASE)}
    assert len(own) >= 10
    names = {re.sub(r"([a-z])([A-Z])", r"\1_\2", p).lower() for p in own}
    assert not names & FOREIGN_RELATIONS
    classes = {q.object for q in s.quads_for_pattern(None, RDF_TYPE, None)}
    assert len(classes) >= 5


def test_questions_read_by_the_dataset_reader(items):
    assert len(items) >= 20
    assert len({i.id for i in items}) == len(items)
    hops = Counter(i.hops for i in items if i.answers)
    assert hops[1] >= 8 and hops[2] >= 6 and hops[3] >= 3
    assert sum(1 for i in items if not i.answers) >= 3
    for item in items:
        assert item.gold_query and item.topic_entity and item.topic_entity.iri
        if not item.answers:
            assert item.tags.get("qtype") == "unanswerable"


def test_benchmark_finds_the_own_kg():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "floor.py"
    spec = importlib.util.spec_from_file_location("floor_bench", path)
    assert spec and spec.loader
    floor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(floor)
    assert floor.own_set("atelier") == (TTL, QUESTIONS)
    assert floor.own_set("atelier:joins") == (TTL, JOINS)


def _label(store: ox.Store, node: ox.NamedNode) -> str:
    labels = [q.object.value for q in store.quads_for_pattern(node, RDFS_LABEL, None)]
    assert len(labels) == 1, f"{node.value}: labels {labels}"
    return labels[0]


def _gold_rows(store: ox.Store, item: DatasetItem) -> set[tuple[str, str | None, str | None]]:
    """(label, iri, datatype) of each value the item's gold query returns."""
    out = set()
    for row in store.query(item.gold_query):
        term = row["answer"]
        if isinstance(term, ox.NamedNode):
            out.add((_label(store, term), term.value, None))
        else:
            out.add((term.value, None, term.datatype.value))
    return out


def test_every_topic_entity_is_in_the_kg_with_its_label(store, items):
    for item in items:
        topic = item.topic_entity
        assert _label(store, ox.NamedNode(topic.iri)) == topic.label, item.id
        assert topic.label.lower() in item.question.lower(), item.id


def test_gold_answers_are_exactly_what_the_gold_path_returns(store, items):
    checked = 0
    for item in items:
        if not item.answers:
            continue
        gold = {(a.label, a.iri, a.datatype) for a in item.answers}
        assert _gold_rows(store, item) == gold, item.id
        patterns = item.gold_query.split("{", 1)[1].rsplit("}", 1)[0].strip().rstrip(".").split(" . ")
        assert len(patterns) == item.hops, item.id
        checked += 1
    assert checked >= 20


def test_unanswerable_questions_have_no_path(store, items):
    unanswerable = [i for i in items if not i.answers]
    assert unanswerable
    for item in unanswerable:
        assert _gold_rows(store, item) == set(), item.id
        # the entity is there, the fact is not: no edge of the asked relation at all
        predicate = re.search(r"ex:(\w+) \?answer", item.gold_query)
        assert predicate, item.id
        edges = store.query(f"ASK {{ <{item.topic_entity.iri}> <{BASE}{predicate.group(1)}> ?o }}")
        assert not bool(edges), item.id


def test_two_entity_questions_name_both_and_their_gold_is_the_kg_s(store):
    joins = load_dataset(str(JOINS))
    assert len(joins) >= 10 and len({i.id for i in joins}) == len(joins)
    for item in joins:
        assert len(item.topic_entities) == 2, item.id
        for topic in item.topic_entities:
            assert _label(store, ox.NamedNode(topic.iri)) == topic.label, item.id
            assert topic.label.lower() in item.question.lower(), item.id
        assert _gold_rows(store, item) == {(a.label, a.iri, a.datatype) for a in item.answers}, item.id
