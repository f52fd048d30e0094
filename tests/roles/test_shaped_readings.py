"""Question shapes beyond chains, answered model-free on a KG written for this (tests/data/kgs/isles):
camelCase predicates without labels, entities named only with schema:name, typed literals.

Each test asks through the public Python API and checks the answer, its kind, its confidence and
the evidence it shows; they fail when a shape falls back to a chain or states a wrong answer."""

from __future__ import annotations

import pytest

from kgteam import Team
from kgteam.protocols.query_graph import QueryGraph
from kgteam.tools.query_parse import parse_query


@pytest.fixture(scope="module")
def team(isles_home):
    with Team.default(kg="isles", model="none", home=isles_home) as t:
        yield t


def _labels(answer) -> set[str]:
    return {v.label for v in answer.values}


def test_count_answers_a_number_and_shows_the_counted_set(team):
    a = team.ask("How many regions does the Grisk flow through?")
    assert a.status == "answered" and a.text == "3"
    assert a.confidence is not None and a.confidence >= 0.5
    counted = {t.object_label for t in a.evidence.triples}
    assert counted == {"Ostrand", "Lunmark", "Quillsey"}
    assert "COUNT(DISTINCT" in a.evidence.queries[0].sparql


def test_count_of_a_named_class_uses_the_kg_class(team):
    a = team.ask("How many towns are in Ostrand?")
    assert a.status == "answered" and a.text == "2"


def test_superlative_keeps_ties_and_orders_by_the_named_literal(team):
    a = team.ask("What is the highest mountain in Ostrand?")
    assert a.status == "answered"
    assert _labels(a) == {"Mount Sel", "Brae Pike"}  # both 2950 m
    oldest = team.ask("What is the oldest town in Havenmoor?")
    assert _labels(oldest) == {"Brackwater"}  # the earliest founding date, not the latest


def test_comparative_filters_by_the_number_not_an_entity_called_like_it(team):
    a = team.ask("Which mountains in Havenmoor are higher than 2000 metres?")
    assert a.status == "answered" and _labels(a) == {"Mount Orrin"}


def test_literal_answers_have_the_kind_asked_for(team):
    high = team.ask("How high is Mount Orrin?")
    assert high.status == "answered" and high.text == "2417"
    pop = team.ask("What is the population of Fennick?")
    assert pop.status == "answered" and pop.text == "121000"


def test_yes_and_no_are_answered_from_the_kg(team):
    yes = team.ask("Does the Grisk flow into the Vell Sound?")
    no = team.ask("Does the Ammel flow into the Vell Sound?")
    assert (yes.status, yes.text) == ("answered", "Yes")
    assert (no.status, no.text) == ("answered", "No")
    assert yes.confidence >= 0.5 and no.confidence >= 0.5
    assert yes.evidence.queries[0].sparql.startswith("ASK")


def test_two_entities_are_intersected_never_one_alone(team):
    a = team.ask("Which languages are official in both Havenmoor and Quillsey?")
    assert a.status == "answered" and _labels(a) == {"Merrow"}  # not Quillsey's two languages
    b = team.ask("Which regions border both Havenmoor and Quillsey?")
    assert _labels(b) == {"Ostrand"}


def test_a_class_word_is_no_relation_word(team):
    a = team.ask("Which sea does the Grisk flow into?")
    assert a.status == "answered" and _labels(a) == {"Vell Sound"}


def test_unanswerable_is_i_dont_know(team):
    a = team.ask("When was Warrow's river bridged?")
    assert a.status != "answered"


def test_every_stated_answer_carries_a_confidence_and_a_compilable_reading(team):
    for q in ("How many rivers flow into the Vell Sound?", "Which town in Ostrand has the most inhabitants?",
              "Is Fennick the capital of Quillsey?"):
        a = team.ask(q)
        assert a.status == "answered" and a.confidence is not None
        graph = parse_query(a.evidence.queries[0].sparql)  # what ran is one query graph
        assert isinstance(graph, QueryGraph)
