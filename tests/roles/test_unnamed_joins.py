"""Two topics joined where the question names neither relation ("Which Tim Burton films feature
Johnny Depp?"): each side counts as named as far as it covers what its topic reaches by one hop,
so a dominant reading is stated and a split one is not. Gold from SPARQL on the demo KG."""

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
