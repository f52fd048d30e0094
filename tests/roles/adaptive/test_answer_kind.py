"""A document answer is of the kind the question asks: a number for "the population of", a date
for "when", a name otherwise, and a month is never a place."""

from __future__ import annotations

import pytest

from kgteam.protocols.evidence import EvidenceDocument
from kgteam.roles.adaptive.answer_kind import asked_kind
from kgteam.roles.adaptive.reading import answer_candidates

VILLAGE = EvidenceDocument(id="v", title="Haddon Cross", text=(
    "Haddon Cross is a village in the hills of Ostrand. It has a population of 1,450. "
    "The village lies on the old road from Tollby to Warrow."))
FESTIVAL = EvidenceDocument(id="f", title="Saltglass Festival", text=(
    "The Saltglass Festival is held every August in Pellow. It was first held in 1923, and its founder "
    "was the glassblower Edwin Varley."))


def test_a_number_is_asked_a_number_is_answered():
    [top, *_] = answer_candidates("What is the population of Haddon Cross?", [VILLAGE], kind="number")
    assert top.text == "1,450"
    assert all(c.text[0].isdigit() for c in answer_candidates("How many people live in Haddon Cross?", [VILLAGE]))


def test_a_date_is_asked_a_year_or_a_month_is_answered():
    assert [c.text for c in answer_candidates("In which year was the Saltglass Festival first held?",
                                              [FESTIVAL])] == ["1923"]
    assert answer_candidates("In which month is the Saltglass Festival held?", [FESTIVAL])[0].text == "August"


def test_a_month_is_not_a_place():
    cands = [c.text for c in answer_candidates("In which town is the Saltglass Festival held?", [FESTIVAL])]
    assert "August" not in cands and cands[0] == "Pellow"


@pytest.fixture(scope="module")
def isles_tools(isles_home):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(open_kg("isles", home=isles_home))
    yield tools.toolbox()
    tools.close()


@pytest.mark.parametrize("question,kind", [
    ("What is the population of Haddon Cross?", "number"),  # the KG stores populations as numbers
    ("How many seats does the Gilded Lantern have?", "number"),
    ("When did the Gilded Lantern open?", "date"),
    ("Who founded the Saltglass Festival?", "entity"),       # "founded" is also a date relation: "who" wins
    ("In which region is the Saltglass Festival held?", "entity"),
])
async def test_the_kind_asked_reads_the_kgs_literal_relations(question, kind, isles_tools):
    assert await asked_kind(question, isles_tools) == kind
