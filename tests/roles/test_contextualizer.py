"""Contextualizer: follow-ups become standalone questions; pass-through costs no model call."""

from __future__ import annotations

import json

import pytest
from roles_helpers import decisions, env, make_ctx, null_model

from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.payloads import Answer, AnswerValue, Question
from kgteam.roles.contextualizer import (
    Contextualizer,
    choose_referent,
    deterministic_rewrite,
    needs_context,
    reference_kind,
    reference_noun,
    references,
    referent_candidates,
)

HISTORY = [("what movies did Temuera Morrison act in",
            Answer(confidence=1.0, text="Tracker", values=[AnswerValue(label="Tracker", iri="http://example.org/metaqa/e/Tracker")]))]


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
    history = [("who directed Tracker", Answer(text="I don't know.", status="unknown"))]
    assert deterministic_rewrite("when was it released", history) == "when was Tracker released"
    assert needs_context("what else did he direct") and not needs_context("who directed Tracker")


# ---------------------------------------------------------------- titles are not pronouns (demo KG)
DIETERLE = [("who directed Kismet",
             Answer(confidence=1.0, text="William Dieterle", values=[AnswerValue(label="William Dieterle",
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
                Answer(confidence=1.0, text="It Happened One Night", values=[AnswerValue(
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
                Answer(confidence=1.0, text="Tracker, River Queen", values=[
                    AnswerValue(label="Tracker", iri="http://example.org/metaqa/e/Tracker"),
                    AnswerValue(label="River Queen", iri="http://example.org/metaqa/e/River%20Queen")]))]
    ctx = make_ctx(null_model(), small_tools, history=history)
    [q] = await Contextualizer().handle(env(Question(text="who directed them?")), ctx)
    assert q.text == "who directed Tracker?"


async def test_he_refers_to_the_person_topic_not_to_the_answer_films(demo_tools):
    history = [("what films did William Dieterle direct",
                Answer(confidence=1.0, text="Kismet", values=[AnswerValue(label="Kismet", iri="http://example.org/metaqa/e/Kismet")]))]
    ctx = make_ctx(null_model(), demo_tools, history=history)
    [q] = await Contextualizer().handle(env(Question(text="what else did he direct?")), ctx)
    assert q.text == "what else did William Dieterle direct?"


# ---------------------------------------------------------------- generic English references
def test_demonstratives_with_any_noun_are_references():
    for question in ("who built that bridge", "where is this one", "is that river longer", "who else lives in the same town",
                     "and who made that?", "That workshop, when was it founded"):
        assert needs_context(question), question
    [m] = references("when was that bridge opened")
    assert m.group(0) == "that bridge" and reference_noun(m.group(0)) == "bridge"
    assert reference_noun("that one") is None and reference_noun("it") is None


def test_relative_that_and_names_are_not_references():
    for question in ("which towns lie on the rivers that flow through Mirovo",
                     "which bowls that were fired in Caldry are blue",
                     "who crafted the books that Ada Brook issued",
                     "what did the makers that trained under Ilse Marrow make",
                     "which makers were born in the same city as Jonas Pike"):
        assert not needs_context(question), question


def test_reference_kind_is_grammatical():
    assert [reference_kind(w) for w in ("he", "Her", "his")] == ["person"] * 3
    assert [reference_kind(w) for w in ("it", "its", "that one", "this river", "the same town")] == ["thing"] * 5
    assert [reference_kind(w) for w in ("they", "them", "their")] == ["any"] * 3


def test_possessive_her_only_before_a_noun():
    history = [("who made the Heron Vase", Answer(confidence=1.0, text="Odile Strand", values=[AnswerValue(label="Odile Strand")]))]
    assert deterministic_rewrite("what is her birthplace", history) == "what is Odile Strand's birthplace"
    assert deterministic_rewrite("which prize went to her", history) == "which prize went to Odile Strand"


# ---------------------------------------------------------------- the referent from the KG (own KG, with classes)
AT = "http://example.org/atelier/"


@pytest.fixture(scope="module")
def atelier_tools(atelier_home):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(open_kg("atelier", home=atelier_home))
    yield tools
    tools.close()


MADE_BY_ODILE = [("What did Odile Strand make?",
                  Answer(confidence=1.0, text="Heron Vase", values=[AnswerValue(label="Heron Vase", iri=AT + "HeronVase")]))]
WHO_MADE_VASE = [("Who made the Heron Vase?",
                  Answer(confidence=1.0, text="Odile Strand", values=[AnswerValue(label="Odile Strand", iri=AT + "OdileStrand")]))]


async def test_that_noun_picks_the_candidate_whose_kg_class_matches(atelier_tools):
    # recency says Heron Vase (the last answer); the noun "maker" names Odile Strand's class
    ctx = make_ctx(null_model(), atelier_tools, history=MADE_BY_ODILE)
    candidates = referent_candidates(MADE_BY_ODILE)
    assert [c.name for c in candidates] == ["Heron Vase", "Odile Strand"]
    assert await choose_referent(ctx, "which prize did that maker win", "that maker", candidates) == ("Odile Strand", True)
    [q] = await Contextualizer().handle(env(Question(text="which prize did that maker win?")), ctx)
    assert q.text == "which prize did Odile Strand win?"
    [q] = await Contextualizer().handle(env(Question(text="what is that piece made from?")), ctx)
    assert q.text == "what is Heron Vase made from?"


async def test_personal_pronouns_prefer_who_answers_and_it_prefers_the_rest(atelier_tools):
    ctx = make_ctx(null_model(), atelier_tools, history=WHO_MADE_VASE)
    [q] = await Contextualizer().handle(env(Question(text="and where was she born?")), ctx)
    assert q.text == "where was Odile Strand born?"
    [q] = await Contextualizer().handle(env(Question(text="what is it made from?")), ctx)
    assert q.text == "what is Heron Vase made from?"
    # after a "what" question, "he"/"she" is the named topic, not the answer thing
    ctx = make_ctx(null_model(), atelier_tools, history=MADE_BY_ODILE)
    [q] = await Contextualizer().handle(env(Question(text="where was she born?")), ctx)
    assert q.text == "where was Odile Strand born?"
