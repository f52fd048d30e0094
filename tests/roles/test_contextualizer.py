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


# ---------------------------------------------------------------- titles are not pronouns (demo KG)
DIETERLE = [("who directed Kismet",
             Answer(text="William Dieterle", values=[AnswerValue(label="William Dieterle",
                                                                  iri="http://example.org/metaqa/e/William%20Dieterle")]))]


async def test_title_words_are_not_references(demo_tools):
    for title in ("It Happened One Night", "They Live", "He Got Game"):
        for question in (f"who directed {title}", f"{title} was directed by who",
                         f"who directed {title.lower()}"):
            model = ScriptedModel()  # unscripted: a call would fail
            ctx = make_ctx(model, demo_tools, history=DIETERLE)
            [q] = await Contextualizer().handle(env(Question(text=question)), ctx)
            assert q.text == question and model.calls == [], question
    assert not needs_context("who directed It Happened One Night")
    assert needs_context("It was released when?") and needs_context("and when was it released")


async def test_model_rewrite_keeping_a_title_word_is_accepted(demo_tools):
    history = [("what movies did Clark Gable act in",
                Answer(text="It Happened One Night", values=[AnswerValue(
                    label="It Happened One Night", iri="http://example.org/metaqa/e/It%20Happened%20One%20Night")]))]
    model = ScriptedModel().add("contextualizer", None, json.dumps({"question": "who directed It Happened One Night"}))
    ctx = make_ctx(model, demo_tools, history=history)
    [q] = await Contextualizer().handle(env(Question(text="and who directed it?")), ctx)
    assert q.text == "who directed It Happened One Night"
    assert decisions(ctx.trace, role="contextualizer")[0]["source"] == "llm"


# ---------------------------------------------------------------- the referent is chosen by kind
async def test_it_refers_to_the_film_not_to_its_director(demo_tools):
    ctx = make_ctx(null_model(), demo_tools, history=DIETERLE)
    [q] = await Contextualizer().handle(env(Question(text="and when was it released?")), ctx)
    assert q.text == "when was Kismet released?"


async def test_model_rewrite_naming_the_wrong_referent_is_rejected(demo_tools):
    model = ScriptedModel().add("contextualizer", None, json.dumps({"question": "when was William Dieterle released"}))
    ctx = make_ctx(model, demo_tools, history=DIETERLE)
    [q] = await Contextualizer().handle(env(Question(text="and when was it released?")), ctx)
    assert q.text == "when was Kismet released?"
    assert decisions(ctx.trace, role="contextualizer")[0]["source"] == "fallback"


async def test_he_refers_to_the_person_answer(demo_tools):
    ctx = make_ctx(null_model(), demo_tools, history=DIETERLE)
    [q] = await Contextualizer().handle(env(Question(text="what else did he direct?")), ctx)
    assert q.text == "what else did William Dieterle direct?"


async def test_them_may_refer_to_the_answer_films(small_tools):
    history = [("what movies did Temuera Morrison act in",
                Answer(text="Tracker, River Queen", values=[
                    AnswerValue(label="Tracker", iri="http://example.org/metaqa/e/Tracker"),
                    AnswerValue(label="River Queen", iri="http://example.org/metaqa/e/River%20Queen")]))]
    ctx = make_ctx(null_model(), small_tools, history=history)
    [q] = await Contextualizer().handle(env(Question(text="who directed them?")), ctx)
    assert q.text == "who directed Tracker?"


async def test_he_refers_to_the_person_topic_not_to_the_answer_films(demo_tools):
    history = [("what films did William Dieterle direct",
                Answer(text="Kismet", values=[AnswerValue(label="Kismet", iri="http://example.org/metaqa/e/Kismet")]))]
    ctx = make_ctx(null_model(), demo_tools, history=history)
    [q] = await Contextualizer().handle(env(Question(text="what else did he direct?")), ctx)
    assert q.text == "what else did William Dieterle direct?"
