"""A follow-up's pronoun resolves to the earlier answer or topic whose kind fits what it asks for.

After "What currency is used in Budapest?" (answer: Hungarian forint), "and which river is it
on?" is about Budapest: only Budapest has an edge to a river. When no earlier thing has one,
the contextualizer asks back instead of substituting one. A small geography-like KG written
here (camelCase predicates, names by schema:name only), two-turn sessions through a real team.
"""

from __future__ import annotations

import pytest

from kgteam.agents.sessions import SqliteSessionStore
from kgteam.agents.team import TeamRunner
from kgteam.protocols.payloads import Answer, AnswerValue, Question
from kgteam.protocols.routes import Route
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contextualizer import Contextualizer
from kgteam.roles.contract import handles

GEO = """\
@prefix ex: <http://example.org/geo/> .
@prefix schema: <http://schema.org/> .
ex:City schema:name "city" .
ex:River schema:name "river" .
ex:Country schema:name "country" .
ex:Currency schema:name "currency" .
ex:Mountain schema:name "mountain" .
ex:Budapest a ex:City ; schema:name "Budapest" ; ex:liesOn ex:Danube ; ex:usesCurrency ex:HungarianForint ;
    ex:locatedIn ex:Hungary .
ex:Szeged a ex:City ; schema:name "Szeged" ; ex:liesOn ex:Tisza ; ex:usesCurrency ex:HungarianForint ;
    ex:locatedIn ex:Hungary .
ex:Hungary a ex:Country ; schema:name "Hungary" ; ex:officialCurrency ex:HungarianForint .
ex:Austria a ex:Country ; schema:name "Austria" ; ex:highestPoint ex:Grossglockner .
ex:Danube a ex:River ; schema:name "Danube" .
ex:Tisza a ex:River ; schema:name "Tisza" .
ex:HungarianForint a ex:Currency ; schema:name "Hungarian forint" .
ex:Grossglockner a ex:Mountain ; schema:name "Grossglockner" .
"""
G = "http://example.org/geo/"


@pytest.fixture(scope="module")
def geo_tools(tmp_path_factory: pytest.TempPathFactory):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("ctx_geo")
    (home / "geo.ttl").write_text(GEO, encoding="utf-8")
    build_kg([home / "geo.ttl"], "geo", home=home, progress=False, embed=False)
    tools = KGTools.from_kg(open_kg("geo", home=home))
    yield tools
    tools.close()


class Teller(Role):
    """Stands in for the answering roles: the first turn's answer is given to it, later turns are
    answered with the question it receives, so the test sees what the contextualizer passed on."""

    name = "teller"

    def __init__(self, first: tuple[str, str]):
        super().__init__()
        self.first = first

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Answer]:
        if not ctx.history:
            label, iri = self.first
            return [Answer(text=label, confidence=1.0, values=[AnswerValue(label=label, iri=G + iri)])]
        return [Answer(text=q.text, confidence=1.0)]


def _team(tools, first: tuple[str, str], tmp_path) -> TeamRunner:
    from kgteam.llm.scripted import ScriptedModel

    return TeamRunner(
        roles={"contextualizer": Contextualizer(), "teller": Teller(first)},
        routes=[Route(kind="question", sender="user", to=["contextualizer"]),
                Route(kind="question", sender="contextualizer", to=["teller"])],
        model=ScriptedModel().add("*", None, "I cannot answer that."),  # no usable rewrite: the role decides
        tools=tools, session_store=SqliteSessionStore(tmp_path / "s.db"))


async def test_it_is_the_topic_that_lies_on_a_river_not_the_currency(geo_tools, tmp_path):
    team = _team(geo_tools, ("Hungarian forint", "HungarianForint"), tmp_path)
    first = await team.ask("What currency is used in Budapest?", session_id="geo")
    assert first.text == "Hungarian forint"
    second = await team.ask("and which river is it on?", session_id="geo")
    assert second.status == "answered" and second.text == "which river is Budapest on?"


async def test_no_earlier_thing_on_a_river_asks_back_instead_of_substituting(geo_tools, tmp_path):
    team = _team(geo_tools, ("Grossglockner", "Grossglockner"), tmp_path)
    await team.ask("What is the highest point of Austria?", session_id="alps")
    second = await team.ask("and which river is it on?", session_id="alps")
    assert second.status == "unknown" and "I don't know" in second.text
    assert "Grossglockner" in second.text and "Austria" in second.text and "river" in second.text
    assert "Which one do you mean?" in second.text


async def test_a_follow_up_naming_no_class_keeps_the_recency_order(geo_tools, tmp_path):
    # nothing to check the candidates against: the last answer, as before
    team = _team(geo_tools, ("Hungarian forint", "HungarianForint"), tmp_path)
    await team.ask("What currency is used in Budapest?", session_id="plain")
    second = await team.ask("and who issues it?", session_id="plain")
    assert second.text == "who issues Hungarian forint?"


# ---------------------------------------------------------------- "it" is no person (issue 40)
ORG = """\
@prefix ex: <http://example.org/org/> .
@prefix schema: <http://schema.org/> .
ex:Person schema:name "person" .
ex:Project schema:name "project" .
ex:Team schema:name "team" .
ex:Rigel a ex:Project ; schema:name "Rigel" ; ex:ownedBy ex:Platform .
ex:PaulMartin a ex:Person ; schema:name "Paul Martin" ; ex:worksOn ex:Rigel ; ex:memberOf ex:Platform .
ex:Platform a ex:Team ; schema:name "Platform" .
"""
ORG_NS = "http://example.org/org/"


@pytest.fixture(scope="module")
def org_tools(tmp_path_factory: pytest.TempPathFactory):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("ctx_org")
    (home / "org.ttl").write_text(ORG, encoding="utf-8")
    build_kg([home / "org.ttl"], "org", home=home, progress=False, embed=False)
    tools = KGTools.from_kg(open_kg("org", home=home))
    yield tools
    tools.close()


@pytest.mark.parametrize("first", ["Who works on Rigel?", "Which engineer works on Rigel?"])
async def test_it_is_the_topic_thing_never_the_person_answer(org_tools, first):
    """A person the KG types as one (or the answer to "who") is "he/she/they": "it" is the project,
    however the first question was worded and whatever a model's rewrite says."""
    from roles_helpers import env, make_ctx, null_model

    from kgteam.llm.scripted import ScriptedModel

    history = [(first, Answer(text="Paul Martin", confidence=1.0,
                              values=[AnswerValue(label="Paul Martin", iri=ORG_NS + "PaulMartin")]))]
    ctx = make_ctx(null_model(), org_tools, history=history)
    [q] = await Contextualizer().handle(env(Question(text="and which team owns it?")), ctx)
    assert q.text == "which team owns Rigel?"
    wrong = ScriptedModel().add("contextualizer", None, '{"question": "which team owns Paul Martin?"}')
    [q] = await Contextualizer().handle(env(Question(text="and which team owns it?")),
                                        make_ctx(wrong, org_tools, history=history))
    assert q.text == "which team owns Rigel?"
    [q] = await Contextualizer().handle(env(Question(text="which team is he in?")), ctx)
    assert q.text == "which team is Paul Martin in?"
