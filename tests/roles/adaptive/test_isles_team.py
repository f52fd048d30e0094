"""The adaptive team on the isles KG and the hand-written notes about it (tests/data/adaptive/isles):
documents that lead back into the KG, a number read from a document, and a thing the KG does not
know whose neighbour's facts are no answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgteam.llm.no_model import NoModel
from kgteam.protocols.payloads import Answer, AnswerValue, RouteDecision
from kgteam.roles.adaptive.generator import fits_kind
from kgteam.team_builder import playbook_runner
from kgteam.tools.toolbox import Toolbox
from kgteam.tools.web.corpus import open_corpus
from kgteam.tools.web.corpus_build import build_corpus
from kgteam.tools.web.resource import WebSearch
from kgteam.tools.web.tool import web_search

DOCS = Path(__file__).resolve().parents[2] / "data" / "adaptive" / "isles" / "docs"


@pytest.fixture(scope="module")
def isles_team_tools(isles_home, tmp_path_factory):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    home = tmp_path_factory.mktemp("isles_notes")
    build_corpus("notes", sorted(DOCS.glob("*.md")), home=home, progress=None)
    kg = KGTools.from_kg(open_kg("isles", home=isles_home))
    web = Toolbox.from_callables({"web_search": web_search}, [WebSearch(open_corpus("notes", home))])
    yield Toolbox({**dict(kg.toolbox().items()), **dict(web.items())})
    kg.close()


async def _ask(question, tools):
    runner = playbook_runner("adaptive", NoModel(), tools)
    seen = [env async for env in runner.stream(question, session_id="t")]
    answer = seen[-1].payload
    assert isinstance(answer, Answer)
    route = next(e.payload.route for e in seen if isinstance(e.payload, RouteDecision) and e.sender == "router")
    return answer, route


async def test_documents_lead_back_into_the_kg(isles_team_tools):
    answer, route = await _ask("In which region is the theatre called the Gilded Lantern?", isles_team_tools)
    assert route == "both" and [v.label for v in answer.values] == ["Havenmoor"]
    assert answer.evidence.triples and answer.evidence.documents[0].title == "The Gilded Lantern"


async def test_a_number_asked_is_read_as_a_number(isles_team_tools):
    answer, _ = await _ask("What is the population of Haddon Cross?", isles_team_tools)
    assert [v.label for v in answer.values] == ["1450"]


async def test_the_facts_of_an_unknown_things_neighbour_are_no_answer(isles_team_tools):
    answer, route = await _ask("When was the tram line in Corlis opened?", isles_team_tools)
    assert route == "both" and answer.status != "answered"  # not Corlis's founding date


def test_a_date_does_not_answer_who():
    assert not fits_kind([AnswerValue(label="1390-08-08")], "entity")
    assert fits_kind([AnswerValue(label="1390-08-08")], "date")
    assert fits_kind([AnswerValue(label="Serrin", iri="http://example.org/isles/Serrin")], "entity")
