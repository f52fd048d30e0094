"""Contextualizer: follow-ups become standalone questions; pass-through costs no model call."""

from __future__ import annotations

import json

from roles_helpers import decisions, env, make_ctx, null_model

from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.payloads import Answer, AnswerValue, Question
from kgteam.roles.contextualizer import Contextualizer, deterministic_rewrite, needs_context

HISTORY = [("what movies did [Temuera Morrison] act in",
            Answer(text="Tracker", values=[AnswerValue(label="Tracker", iri="http://example.org/metaqa/e/Tracker")]))]


async def test_pass_through_without_history(small_tools):
    model = ScriptedModel()  # unscripted: a call would fail
    ctx = make_ctx(model, small_tools)
    [q] = await Contextualizer().handle(env(Question(text="who directed it")), ctx)
    assert q.text == "who directed it" and model.calls == []


async def test_standalone_question_passes_through(small_tools):
    ctx = make_ctx(ScriptedModel(), small_tools, history=HISTORY)
    [q] = await Contextualizer().handle(env(Question(text="who directed Tracker")), ctx)
    assert q.text == "who directed Tracker"


async def test_model_rewrite_is_used_when_it_names_the_referent(small_tools):
    model = ScriptedModel().add("contextualizer", "Follow-up", json.dumps({"question": "who directed Tracker"}))
    ctx = make_ctx(model, small_tools, history=HISTORY)
    [q] = await Contextualizer().handle(env(Question(text="and who directed it?")), ctx)
    assert q.text == "who directed Tracker" and q.original_text == "and who directed it?"
    assert decisions(ctx.trace, role="contextualizer")[0]["source"] == "llm"


async def test_invalid_rewrite_falls_back_to_pronoun_replacement(small_tools):
    ctx = make_ctx(null_model(), small_tools, history=HISTORY)
    [q] = await Contextualizer().handle(env(Question(text="and who directed it?")), ctx)
    assert q.text == "who directed Tracker?"
    assert decisions(ctx.trace, role="contextualizer")[0]["source"] == "fallback"


def test_deterministic_rewrite_uses_topic_when_no_values():
    history = [("who directed [Tracker]", Answer(text="I don't know.", status="unknown"))]
    assert deterministic_rewrite("when was it released", history) == "when was Tracker released"
    assert needs_context("what else did he direct") and not needs_context("who directed Tracker")
