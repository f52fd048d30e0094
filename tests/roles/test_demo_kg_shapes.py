"""Shapes people write about the demo KG (MetaQA), gold from SPARQL on the same KG.

Two topics joined where the question names neither relation ("Which Tim Burton films feature
Johnny Depp?"): each side counts as named as far as it covers what its topic reaches by one hop,
so a dominant reading is stated and a split one is not. Years are entities named by a number:
"earliest" is the lowest year, "older than 1930" is before it."""

from __future__ import annotations

import asyncio

import pytest

from kgteam import Team
from kgteam.tools.kg import open_kg
from kgteam.tools.kg_tools import KGTools

M = "http://example.org/metaqa/"


@pytest.fixture(scope="module")
def team(demo_kg_home):
    with Team.default(kg="metaqa", model="none", home=demo_kg_home) as t:
        yield t


@pytest.fixture(scope="module")
def tools(demo_kg_home):
    return KGTools.from_kg(open_kg("metaqa", home=demo_kg_home), embedder=None).toolbox()


def _titles(tools, where: str) -> set[str]:
    res = asyncio.run(tools["run_sparql"](
        f"SELECT DISTINCT ?n WHERE {{ {where} ?x <http://www.w3.org/2000/01/rdf-schema#label> ?n }}"))
    return {row["n"].value for row in res.rows}


def test_an_unnamed_intersection_is_answered_when_one_reading_dominates(team, tools):
    gold = _titles(tools, f"?x <{M}r/directed_by> <{M}e/Tim%20Burton> ; <{M}r/starred_actors> <{M}e/Johnny%20Depp> .")
    answer = team.ask("Which Tim Burton films feature Johnny Depp?")
    assert gold and {v.label for v in answer.values} == gold
    assert answer.confidence is not None and answer.confidence >= 0.5


def test_an_unnamed_negation_is_answered_when_one_reading_dominates(team, tools):
    gold = _titles(tools, f"?x <{M}r/directed_by> <{M}e/Martin%20Scorsese> . "
                          f"FILTER NOT EXISTS {{ ?x <{M}r/starred_actors> <{M}e/Robert%20De%20Niro> }}")
    answer = team.ask("Which Martin Scorsese films do not feature Robert De Niro?")
    assert gold and {v.label for v in answer.values} == gold


def _year_of(tools, where: str, order: str) -> set[str]:
    res = asyncio.run(tools["run_sparql"](
        f"SELECT ?n ?y WHERE {{ {where} ?x <{M}r/release_year> ?yr . ?yr <http://www.w3.org/2000/01/rdf-schema#label> ?y . "
        f"?x <http://www.w3.org/2000/01/rdf-schema#label> ?n }} ORDER BY {order}(xsd:integer(?y))".replace(
            "xsd:integer", "<http://www.w3.org/2001/XMLSchema#integer>")))
    best = res.rows[0]["y"].value
    return {r["n"].value for r in res.rows if r["y"].value == best}


def test_earliest_is_the_lowest_year(team, tools):
    gold = _year_of(tools, f"?x <{M}r/starred_actors> <{M}e/Audrey%20Tautou> .", "ASC")
    answer = team.ask("What is Audrey Tautou's earliest film?")
    assert {v.label for v in answer.values} == gold


def test_older_than_a_year_is_before_it(team, tools):
    gold = _titles(tools, f"?x <{M}r/directed_by> <{M}e/Alfred%20Hitchcock> ; <{M}r/release_year> ?yr . "
                          "?yr <http://www.w3.org/2000/01/rdf-schema#label> ?y . "
                          "FILTER(<http://www.w3.org/2001/XMLSchema#integer>(?y) < 1930)")
    answer = team.ask("Which Alfred Hitchcock films are older than 1930?")
    assert gold and {v.label for v in answer.values} == gold


def test_a_negation_with_nothing_to_leave_out_is_i_dont_know(team):
    answer = team.ask("Which films written by Quentin Tarantino did he not direct?")
    assert answer.status == "unknown" and not answer.values
