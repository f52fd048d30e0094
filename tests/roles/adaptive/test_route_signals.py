"""The router's deterministic decision, read off a small real KG."""

from __future__ import annotations

import pytest

from kgteam.roles.adaptive.route_signals import route_signals, time_words, years_after
from kgteam.roles.semantic import SemanticLayer
from kgteam.roles.semantic.similarity import team_similarity


async def _route(question, small_tools, **kw):
    tools = small_tools.toolbox()
    signals = await route_signals(question, tools, SemanticLayer(tools, team_similarity(tools)), **kw)
    return signals.decide()[0], signals


@pytest.mark.parametrize("question,expected", [
    ("who directed Tracker", "kg"),
    ("which films did Temuera Morrison star in", "kg"),
    ("Who plays Tama in Tracker?", "both"),                  # the KG knows the film, not the character
    ("What is the latest film of Temuera Morrison?", "both"),  # the present is after any snapshot
    ("Who directed The Silent Harbour?", "web"),             # nothing the KG knows
    ("who directed the silent harbour", "web"),
    ("who directed the film Tracker", "kg"),                 # "the film X" says what X is: nothing unknown
])
async def test_routes(question, expected, small_tools):
    route, signals = await _route(question, small_tools)
    assert route == expected, signals


async def test_a_year_after_the_snapshot_asks_the_web_too(small_tools):
    route, signals = await _route("Who directed Tracker in 2031?", small_tools, snapshot_year=2020)
    assert route == "both" and signals.years_after_snapshot == [2031]
    route, _ = await _route("who directed Tracker", small_tools, snapshot_year=2020)
    assert route == "kg"


async def test_a_relation_the_kg_lacks_around_a_known_entity_is_both(small_tools):
    route, signals = await _route("what is the plot of Tracker", small_tools)
    assert route == "both" and signals.topics == ["Tracker"]


def test_time_words_are_english_words_of_time():
    assert time_words("Who is the current coach now?") == ["current", "now"]
    assert years_after("in 1999 and 2031", 2020) == [2031]
    assert years_after("in 2031", None) == []


@pytest.fixture(scope="module")
def isles_tools(isles_home):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(open_kg("isles", home=isles_home))
    yield tools
    tools.close()


@pytest.mark.parametrize("question,expected", [
    # an unknown lower-case thing beside a known name: the KG alone cannot answer
    ("Who founded the observatory above Serrin?", "both"),
    ("When was the tram line in Corlis opened?", "both"),
    ("What are the official languages of Quillsey?", "kg"),  # "languages": a class the KG has
    # documents → KG: the name is only in documents, the kind asked ("region", "river") is the KG's
    ("In which region is the theatre called the Gilded Lantern?", "both"),
    ("Which river flows through the town where the Gilded Lantern stands?", "both"),
    ("Who designed the Gilded Lantern?", "web"),
    ("What is the population of Haddon Cross?", "web"),
    ("What is the population of the Lunmarkish capital?", "kg"),  # the adjective of a region the KG has
])
async def test_unknown_things_and_documents_that_lead_back_into_the_kg(question, expected, isles_tools):
    route, signals = await _route(question, isles_tools)
    assert route == expected, signals
