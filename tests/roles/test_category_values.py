"""A plural common noun that names a value many subjects share ("which *strikers*") is a topic
of the question, read on a KG with no classes (tests/data/kgs/roster); gold answers come from
hand-written SPARQL run on the same KG."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kgteam import Team
from kgteam.roles.semantic.mentions import is_category_value, spot_mentions
from kgteam.tools.kg import open_kg
from kgteam.tools.kg_tools import KGTools

ROSTER_TTL = Path(__file__).parents[1] / "data" / "kgs" / "roster" / "roster.ttl"
RO = "http://example.org/roster/"
NAME = "<http://schema.org/name>"


@pytest.fixture(scope="module")
def roster_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("roster_home")
    build_kg([ROSTER_TTL], "roster", home=home, progress=False)
    return home


@pytest.fixture(scope="module")
def tools(roster_home):
    return KGTools.from_kg(open_kg("roster", home=roster_home), embedder=None).toolbox()


@pytest.fixture(scope="module")
def team(roster_home):
    with Team.default(kg="roster", model="none", home=roster_home) as t:
        yield t


def _gold(tools, where: str) -> set[str]:
    res = asyncio.run(tools["run_sparql"](f"SELECT DISTINCT ?n WHERE {{ {where} ?x {NAME} ?n }}"))
    return {row["n"].value for row in res.rows}


def _labels(answer) -> set[str]:
    return {v.label for v in answer.values}


def _count_answer_and_gold(team, tools, question: str, where: str) -> tuple[list[str], list[str]]:
    """The team's answer values to a "how many" question, and the count SPARQL gives (as text)."""
    return [v.label for v in team.ask(question).values], [str(len(_gold(tools, where)))]


def test_a_shared_value_is_a_category_and_a_value_of_its_own_is_not(tools):
    assert asyncio.run(is_category_value(RO + "striker", tools))
    assert not asyncio.run(is_category_value(RO + "mp02", tools))  # one player's mascot
    mentions = asyncio.run(spot_mentions("Which strikers play for Mill Town?", tools))
    linked = {m.text: m for m in mentions}
    assert linked["strikers"].category and RO + "striker" in linked["strikers"].exact_iris()
    assert not asyncio.run(spot_mentions("Which lanterns are there?", tools))  # "Cato Lantern" is no category


def test_plural_role_and_club_are_intersected(team, tools):
    gold = _gold(tools, f"?x <{RO}fieldRole> <{RO}striker> ; <{RO}signedWith> <{RO}millTown> .")
    answer = team.ask("Which strikers play for Mill Town?")
    assert gold and _labels(answer) == gold
    assert answer.confidence is not None and answer.confidence >= 0.5


def test_count_over_a_role_and_a_club(team, tools):
    got, gold = _count_answer_and_gold(team, tools, "How many wingers does Harbor United have?",
                                       f"?x <{RO}fieldRole> <{RO}winger> ; <{RO}signedWith> <{RO}harborUnited> .")
    assert got == gold


def test_negated_role_within_a_club(team, tools):
    gold = _gold(tools, f"?x <{RO}signedWith> <{RO}quarryRovers> . "
                        f"FILTER NOT EXISTS {{ ?x <{RO}fieldRole> <{RO}striker> }}")
    answer = team.ask("Which Quarry Rovers players are not strikers?")
    assert gold and _labels(answer) == gold


def test_superlative_over_a_role(team, tools):
    res = asyncio.run(tools["run_sparql"](
        f"SELECT ?n WHERE {{ ?x <{RO}fieldRole> <{RO}sweeper> ; <{RO}ageYears> ?a ; {NAME} ?n }} ORDER BY DESC(?a)"))
    answer = team.ask("Who is the oldest sweeper?")
    assert _labels(answer) == {res.rows[0]["n"].value}


def test_a_number_a_comparison_is_against_names_no_relation(team, tools):
    gold = _gold(tools, f"?x <{RO}signedWith> <{RO}millTown> ; <{RO}ageYears> ?a . FILTER(?a >= 27)")
    answer = team.ask("Which Mill Town players are 27 or older?")
    assert gold and _labels(answer) == gold


def test_a_bare_number_is_looked_up_as_a_name(team, tools):
    got, gold = _count_answer_and_gold(team, tools, "How many players wear shirt 3?",
                                       f"?x <{RO}wearsShirt> <{RO}shirt3> .")
    assert got == gold


def test_the_noun_a_comparison_is_about_orders_and_names_no_set(team, tools):
    gold = _gold(tools, f"?x <{RO}signedWith> <{RO}quarryRovers> ; <{RO}wearsShirt> ?s . ?s {NAME} ?k . "
                        "FILTER(<http://www.w3.org/2001/XMLSchema#integer>(?k) > 3)")
    answer = team.ask("Which Quarry Rovers players wear a shirt above 3?")
    assert gold and _labels(answer) == gold


def test_kerag_joins_a_shared_value_too(roster_home, tools):
    from kgteam.llm.no_model import NoModel
    from kgteam.team_builder import playbook_runner

    kg_tools = KGTools.from_kg(open_kg("roster", home=roster_home))
    try:
        answer = asyncio.run(playbook_runner("kerag", NoModel(), kg_tools).ask("Which strikers play for Mill Town?"))
    finally:
        kg_tools.close()
    gold = _gold(tools, f"?x <{RO}fieldRole> <{RO}striker> ; <{RO}signedWith> <{RO}millTown> .")
    assert _labels(answer) == gold
