"""Triad end to end through the runtime (TeamRunner) with a scripted model."""

from __future__ import annotations

import json
import re

import pytest
from roles_helpers import E, R, pick

from kgteam.agents.team import TeamRunner
from kgteam.llm.scripted import ScriptedModel
from kgteam.roles.base import ListTrace
from kgteam.team_builder import playbook_runner

ONE_HOP = "what movies did [Temuera Morrison] act in"
TWO_HOP = "what are the languages spoken in the films directed by [Joel Zwick]"


def _parse(mention: str, hops: list[str], kind: str = "entity") -> str:
    """A chain template as the generalist's model writes it."""
    triples = [f"{'<E0>' if i == 0 else f'?x{i}'} <R{i}> ?x{i + 1}" for i in range(len(hops))]
    return json.dumps({"shape": "chain", "entities": [mention], "relations": hops, "triples": triples,
                       "answer": f"?x{len(hops)}", "kind": kind})


def _phrase(messages) -> str:
    user = messages[-1]["content"] if messages[-1]["role"] == "user" else messages[1]["content"]
    block = re.search(r"<<<results\n(.*?)\nresults>>>", user, re.DOTALL)
    names = block.group(1).splitlines() if block else []
    return json.dumps({"answer": "The answer: " + ", ".join(names) + "."})


def good_model() -> ScriptedModel:
    return (ScriptedModel()
            .add("generalist", "Temuera Morrison", _parse("Temuera Morrison", ["acted in"]))
            .add("generalist", "Joel Zwick", _parse("Joel Zwick", ["directed", "language"]))
            .add("decision_maker", "Candidate entities", pick("Temuera Morrison", "Joel Zwick"))
            .add("decision_maker", "step 1", pick("starred actors", "directed by"))
            .add("decision_maker", "step 2", pick("in language"))
            .add("decision_maker", "Candidate queries", pick("in language", "starred actors", k=1))
            .add("advisor", None, _phrase))


def runner(model, tools, trace=None) -> TeamRunner:
    return playbook_runner("triad", model, tools, trace=trace)


@pytest.mark.slow
async def test_one_hop_exact_answers_and_evidence(demo_tools):
    model = good_model()
    trace = ListTrace()
    answer = await runner(model, demo_tools, trace).ask(ONE_HOP)
    assert answer.status == "answered" and answer.grounded and answer.stopped_by == "done"
    assert {v.label for v in answer.values} == {"Once Were Warriors", "River Queen", "Tracker"}
    assert {v.iri for v in answer.values} == {E + "Once%20Were%20Warriors", E + "River%20Queen", E + "Tracker"}
    assert all(v.label in answer.text for v in answer.values)
    triples = {(t.subject, t.predicate, t.object) for t in answer.evidence.triples}
    assert (E + "Tracker", R + "starred_actors", E + "Temuera%20Morrison") in triples
    assert all(t.subject_label and t.object_label for t in answer.evidence.triples)
    assert "starred_actors" in answer.evidence.queries[0].sparql
    assert answer.cost.llm_calls <= 7
    assert answer.fallbacks == []


@pytest.mark.slow
async def test_two_hop_exact_answers_and_evidence(demo_tools):
    model = good_model()
    trace = ListTrace()
    answer = await runner(model, demo_tools, trace).ask(TWO_HOP)
    assert answer.grounded and [v.label for v in answer.values] == ["Greek"]
    readable = {t.readable() for t in answer.evidence.triples}
    assert any(r.endswith(", directed by, Joel Zwick)") for r in readable)
    assert any(r.endswith(", in language, Greek)") for r in readable)
    assert answer.cost.llm_calls <= 7
    llm = [e for e in trace.events if e["event"] == "decision" and e["source"] == "llm"]
    assert {e["role"] for e in llm} >= {"generalist", "decision_maker", "advisor"}


@pytest.mark.slow
async def test_invalid_output_is_repaired_then_falls_back_visibly(demo_tools):
    iri_template = json.dumps({"shape": "chain", "entities": ["Joel Zwick"], "relations": ["d"],
                               "triples": [f"<{E}Joel%20Zwick> <R0> ?x"], "answer": "?x", "kind": "entity"})
    inject = json.dumps({"chosen": [R + "has_tags"]})
    model = (ScriptedModel()
             .add("generalist", None, iri_template)
             .add("decision_maker", None, inject)
             .add("advisor", None, "Greek, obviously"))
    trace = ListTrace()
    answer = await runner(model, demo_tools, trace).ask(TWO_HOP)
    assert answer.grounded and [v.label for v in answer.values] == ["Greek"]
    parse = [e for e in trace.events if e["event"] == "decision" and e["role"] == "generalist"]
    assert parse[0]["source"] == "fallback" and parse[0]["attempts"] == 2  # one try + one bounded repair
    assert "placeholders" in parse[0]["errors"][0]
    assert "generalist.parse" in answer.fallbacks
    assert "advisor.answer" in answer.fallbacks
    assert "has_tags" not in answer.evidence.queries[0].sparql


async def test_chat_follow_up_is_contextualized(small_tools):
    model = ScriptedModel().add("*", None, "no idea")  # everything by fallback
    runner_ = runner(model, small_tools)
    first = await runner_.ask("who acted in Once Were Warriors", session_id="chat")
    assert [v.label for v in first.values] == ["Temuera Morrison"]
    second = await runner_.ask("and what other films did he act in?", session_id="chat")
    questions = [e.payload for e in runner_.last_run.transcript if e.sender == "contextualizer"]
    assert questions[0].text == "what other films did Temuera Morrison act in?"
    assert {v.label for v in second.values} == {"Tracker", "Once Were Warriors", "River Queen"}


async def test_llm_budget_stop_still_gives_the_grounded_answer_so_far(small_tools):
    from kgteam.protocols.budgets import Budgets

    model = ScriptedModel().add("*", None, "no idea")
    team = playbook_runner("triad", model, small_tools, budgets=Budgets(max_llm_calls=4))
    answer = await team.ask("who directed Tracker")
    assert answer.stopped_by == "max_llm_calls"
    assert answer.grounded and [v.label for v in answer.values] == ["Ian Sharp"]  # from Advisor.finalize


async def test_empty_question_is_answered_unknown_without_retries_or_model_calls(small_tools):
    for text in ("", "  "):
        model = ScriptedModel()  # unscripted: any call would fail
        trace = ListTrace()
        answer = await runner(model, small_tools, trace).ask(text)
        assert answer.status == "unknown" and "I don't know" in answer.text
        assert model.calls == [] and not [e for e in trace.events if e.get("event") == "retry"]


async def test_a_question_with_no_known_entity_stops_without_retries(small_tools):
    trace = ListTrace()
    model = ScriptedModel().add("*", None, "not json")  # every parse falls back to the label index
    answer = await runner(model, small_tools, trace).ask("who directed the film nobody has heard of")
    assert answer.status == "unknown" and "I don't know" in answer.text
    assert not [e for e in trace.events if e.get("event") == "retry"]
