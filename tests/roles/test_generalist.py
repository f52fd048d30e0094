"""Generalist: placeholder templates only; the model's parse is checked; a parser backs it up."""

from __future__ import annotations

import json

from roles_helpers import decisions, env, make_ctx

from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.payloads import (
    AnswerType,
    Question,
    RetryHint,
    RetrySignal,
    SparqlTemplate,
    TriplePatterns,
)
from kgteam.roles.semantic import SemanticLayer, spot_mentions
from kgteam.roles.triad.generalist import Generalist, GeneralistSettings
from kgteam.roles.triad.templates import TemplateError, chain_template, parse_chain


def _by_kind(payloads):
    return {p.kind: p for p in payloads}


async def test_label_spotting_finds_the_longest_exact_span(small_tools):
    found = await spot_mentions("which movies did Temuera Morrison act in", small_tools.toolbox())
    assert found[0].text == "Temuera Morrison"
    found = await spot_mentions("what movies share the director of Once Were Warriors", small_tools.toolbox())
    assert found[0].text == "Once Were Warriors"


async def test_the_layer_decides_the_hop_count_from_the_words(small_tools):
    layer = SemanticLayer(small_tools.toolbox())  # lexical similarity only: no embedder needed
    one = await layer.rank("who directed Tracker")
    assert one.best.hops == 1 and one.best.steps[0].words == "directed"
    two = await layer.rank("who directed the films written by Nathan Cole")
    assert [s.words for s in two.best.steps] == ["written", "directed"]
    assert [s.direction for s in two.best.steps] == ["in", "out"]


def test_templates_reject_iris_and_non_chains():
    assert parse_chain(chain_template(2)).hops == 2
    for bad in (
        "SELECT ?x WHERE { <http://example.org/metaqa/e/Tracker> <R0> ?x }",
        "SELECT ?x WHERE { <E0> <R0> ?x . <E1> <R1> ?x }",
        "SELECT ?y WHERE { <E0> <R0> ?x }",
        "SELECT ?x WHERE { <E0> dbo:director ?x }",
    ):
        try:
            parse_chain(bad)
        except TemplateError:
            continue
        raise AssertionError(f"accepted {bad}")


async def test_deterministic_parse_without_model(small_tools):
    role = Generalist(GeneralistSettings(use_model=False))
    ctx = make_ctx(ScriptedModel(), small_tools)
    out = _by_kind(await role.handle(env(Question(text="what are the release years of the films directed by "
                                                      "Ian Sharp")), ctx))
    assert out["triple_patterns"].patterns[0].subject == "Ian Sharp"
    assert out["sparql_template"].relation_placeholders == ["R0", "R1"]
    assert "http" not in out["sparql_template"].template
    best = out["relation_paths"].best
    assert best.hops == 2 and best.steps[0].words == "directed"  # the words that named each hop are kept


async def test_valid_model_parse_is_used(small_tools):
    reply = {"shape": "chain", "entities": ["Tracker"], "relations": ["directed by"], "triples": ["<E0> <R0> ?x"],
             "answer": "?x", "kind": "entity"}
    model = ScriptedModel().add("generalist", None, json.dumps(reply))
    ctx = make_ctx(model, small_tools)
    out = _by_kind(await Generalist().handle(env(Question(text="who directed Tracker")), ctx))
    assert out["triple_patterns"].patterns[0].predicate == "directed by"
    [ev] = decisions(ctx.trace, role="generalist")
    assert ev["source"] == "llm"


async def test_iri_in_template_is_repaired_then_parser_decides(small_tools):
    bad = {"shape": "chain", "entities": ["Tracker"], "relations": ["director"],
           "triples": ["<http://example.org/metaqa/e/Tracker> <R0> ?x"], "answer": "?x", "kind": "entity"}
    model = ScriptedModel().add("generalist", None, [json.dumps(bad), "sure, here it is: SELECT ..."])
    ctx = make_ctx(model, small_tools)
    out = await Generalist().handle(env(Question(text="who directed Tracker")), ctx)
    kinds = [p.kind for p in out]
    assert kinds == ["relation_paths", "triple_patterns", "answer_type", "sparql_template"]
    tpl = out[3]
    assert isinstance(tpl, SparqlTemplate) and "http" not in tpl.template
    assert isinstance(out[1], TriplePatterns) and out[1].patterns[0].subject == "Tracker"
    assert isinstance(out[2], AnswerType)
    assert len(model.calls) == 2  # bounded: first try + one repair
    assert "placeholders" in model.calls[1].messages[-1]["content"]
    [ev] = decisions(ctx.trace, role="generalist")
    assert ev["source"] == "fallback" and ev["attempts"] == 2


async def test_retry_hint_forces_a_different_hop_count(small_tools):
    one_hop = {"shape": "chain", "entities": ["Tracker"], "relations": ["director"], "triples": ["<E0> <R0> ?x"],
               "answer": "?x", "kind": "entity"}
    model = ScriptedModel().add("generalist", None, json.dumps(one_hop))  # keeps proposing 1 hop
    q = env(Question(text="who directed Tracker"))
    ctx = make_ctx(model, small_tools, [q])
    sig = RetrySignal(phase="parsing", reason="empty_result", hint=RetryHint(hops=2))
    out = await Generalist().handle(env(sig, "advisor"), ctx)
    assert out[3].relation_placeholders == ["R0", "R1"]  # the hint wins over the stubborn model
    assert decisions(ctx.trace, role="generalist")[0]["source"] == "fallback"
