"""KERAG end to end through the runtime, on the hand-written atelier KG (its own predicate names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgteam.llm.no_model import NoModel
from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.payloads import RetrievalPlan, Subgraph
from kgteam.roles.base import ListTrace
from kgteam.team_builder import playbook_runner
from kgteam.tools.kg_tools import KGTools

ATELIER = Path(__file__).resolve().parents[1] / "data" / "kgs" / "atelier" / "atelier.ttl"
EX = "http://example.org/atelier/"


@pytest.fixture(scope="module")
def atelier(tmp_path_factory: pytest.TempPathFactory) -> KGTools:
    from kgteam.tools.kg import open_kg
    from kgteam.tools.loading.builder import build_kg

    home = tmp_path_factory.mktemp("kerag_home")
    build_kg([ATELIER], "atelier", home=home, progress=False)
    tools = KGTools.from_kg(open_kg("atelier", home=home))
    yield tools
    tools.close()


def _runner(model, tools, trace=None, **kwargs):
    return playbook_runner("kerag", model, tools, trace=trace, **kwargs)


async def test_two_topic_entities_are_joined_and_every_answer_has_both_facts(atelier):
    trace = ListTrace()
    answer = await _runner(NoModel(), atelier, trace).ask(
        "Which maker has a bench at Lantern Street Bindery and is a native of Velmora?")
    assert answer.status == "answered", answer.text
    assert {v.iri for v in answer.values} == {EX + "TobiahFenn", EX + "LenaQuist"}  # Ilse Marrow is from Caldry
    assert answer.grounded
    cited = {(t.subject, t.predicate, t.object) for t in answer.evidence.triples[:4]}
    assert (EX + "TobiahFenn", EX + "benchAt", EX + "LanternStreetBindery") in cited
    assert (EX + "TobiahFenn", EX + "nativeOf", EX + "Velmora") in cited
    # the reasoning walks both paths and cites evidence triples by their position
    assert any("t0" in line or "t1" in line for line in answer.evidence.reasoning)
    assert any(line.startswith("both paths lead to") for line in answer.evidence.reasoning)


async def test_either_or_unites_the_answers_of_two_entities(atelier):
    answer = await _runner(NoModel(), atelier).ask(
        "Which maker was honoured with the Fenwick Medal or with the Golden Awl Prize?")
    assert answer.status == "answered", answer.text
    assert {v.iri for v in answer.values} == {EX + "OdileStrand", EX + "TeodorVance", EX + "IlseMarrow"}


async def test_a_two_hop_question_grows_the_plan_one_hop_per_turn(atelier):
    trace = ListTrace()
    runner = _runner(NoModel(), atelier, trace)
    answer = await runner.ask("Who is the apprentice of the founder of Greywater Pottery?")
    assert answer.status == "answered", answer.text
    assert [v.iri for v in answer.values] == [EX + "CasparWren"]
    filters = [e for e in trace.events if e.get("event") == "plan_filter"]
    assert [e["hop"] for e in filters] == [1, 2, 3]  # three hops planned, the 2-hop path kept and chosen
    assert filters[-1]["sufficient"] is True
    assert [s.predicate for s in answer.evidence.matches] == [EX + "startedBy", EX + "apprenticeOf"]


async def test_the_triple_budget_bounds_the_subgraph(atelier):
    trace = ListTrace()
    runner = _runner(NoModel(), atelier, trace, settings={"retriever": {"triple_budget": 3}})
    await runner.ask("Which books were issued by Harrow and Quill Press?")
    retrieved = [e for e in trace.events if e.get("event") == "retrieved"]
    assert retrieved and retrieved[0]["triples"] <= 3 and retrieved[0]["truncated"] is True


async def test_no_entity_means_i_dont_know(atelier):
    answer = await _runner(NoModel(), atelier).ask("Which quasar emits the most gamma rays?")
    assert answer.status == "unknown" and answer.text.startswith("I don't know")
    assert "no entity" in answer.text and not answer.values


def _scripted() -> ScriptedModel:
    def vote(messages):
        user = messages[-1]["content"]
        ids = [line.split(":")[0] for line in user.splitlines() if line.startswith("o")]
        return json.dumps({"keep": ids[:2], "sufficient": False})

    return (ScriptedModel()
            .add("planner", None, json.dumps({"mentions": ["Greywater Pottery"]}))
            .add("schema_filter", None, vote)
            .add("summarizer", None, json.dumps({"chosen": ["o1"], "reason": "the founder's apprentice"})))


async def test_model_calls_are_about_hops_plus_two(atelier):
    model = _scripted()
    answer = await _runner(model, atelier).ask("Who is the apprentice of the founder of Greywater Pottery?")
    assert answer.status == "answered" and [v.iri for v in answer.values] == [EX + "CasparWren"]
    hops = len(model.calls_for("schema_filter"))
    assert hops == 3
    assert len(model.calls_for("planner")) == 1 and len(model.calls_for("summarizer")) <= 1
    assert len(model.calls) <= hops + 2
    assert answer.cost.llm_calls == len(model.calls)
    assert not answer.fallbacks  # every model output was valid


async def test_plan_payloads_show_kept_and_dropped_paths(atelier):
    from kgteam.roles.kerag.planning import Limits, expand, filter_hop, find_topics
    from kgteam.roles.semantic import SemanticLayer

    tools = atelier.toolbox()
    question = "Which books were issued by Harrow and Quill Press?"
    topics = await find_topics(question, tools)
    assert [t.text for t in topics] == ["Harrow and Quill Press"]
    candidates = await expand(tools, topics, [], 1, Limits())
    assert {c.steps[0].predicate for c in candidates} >= {EX + "issuedBy", EX + "headquarteredIn"}
    assert all(c.count for c in candidates)  # schema level: counts, no instances
    keep, drop = await filter_hop(SemanticLayer(tools), question, topics, [], candidates, Limits(top_n=1))
    assert [p.steps[0].predicate for p in keep] == [EX + "issuedBy"] and drop
    plan = RetrievalPlan(topic_entities=[EX + "HarrowQuill"], kept=keep, dropped=[[p.explain() for p in drop]],
                         stage="filtered", hops=1)
    assert "issued by" in plan.summary()
    assert Subgraph(triples=[]).summary() == "0 triples over 0 paths"
