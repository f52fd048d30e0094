"""Decision maker: KG-backed linking, every filling executed, empty ones dropped, options only."""

from __future__ import annotations

import json

from roles_helpers import E, R, add, decisions, env, make_ctx, pick

from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.payloads import (
    EntityCandidates,
    QueryCandidates,
    QueryResult,
    Question,
    RelationCandidates,
    SparqlTemplate,
)
from kgteam.roles.triad.decision_maker import DecisionMaker
from kgteam.roles.triad.generalist import Generalist, GeneralistSettings
from kgteam.roles.triad.templates import chain_template


async def _prepared(question, tools, model):
    transcript = []
    q = add(transcript, [Question(text=question)], "user")[0]
    parsed = await Generalist(GeneralistSettings(use_model=False)).handle(q, make_ctx(model, tools, transcript))
    envs = add(transcript, parsed, "generalist")
    ctx = make_ctx(model, tools, transcript)
    ctx.lineage_transcript = transcript
    return ctx, envs[-1]


def _answers(result: QueryResult) -> set[str]:
    var = result.variables[0]
    return {row[var]["value"] for row in result.rows}


async def test_one_hop_needs_no_model_when_nothing_is_ambiguous(small_tools):
    model = ScriptedModel()  # unscripted: any call would fail the test
    ctx, template = await _prepared("what movies did Temuera Morrison act in", small_tools, model)
    out = await DecisionMaker().handle(template, ctx)
    ents = next(p for p in out if isinstance(p, EntityCandidates))
    assert ents.candidates[0].iri == E + "Temuera%20Morrison"
    rels = next(p for p in out if isinstance(p, RelationCandidates))
    assert rels.candidates[0].iri == R + "starred_actors" and rels.candidates[0].source == "paths:in"
    result = next(p for p in out if isinstance(p, QueryResult))
    assert _answers(result) == {E + "Tracker", E + "Once%20Were%20Warriors", E + "River%20Queen"}
    assert model.calls == []


async def test_two_hop_traverses_from_the_first_hop_neighbours(small_tools):
    model = ScriptedModel().add("decision_maker", "Candidate queries", pick("directed by", k=1))
    ctx, template = await _prepared("who directed the films that Temuera Morrison acted in", small_tools, model)
    out = await DecisionMaker().handle(template, ctx)
    r1 = [p for p in out if isinstance(p, RelationCandidates)][1]
    assert r1.placeholder == "R1"
    assert R + "directed_by" in [c.iri for c in r1.candidates]
    cands = next(p for p in out if isinstance(p, QueryCandidates))
    assert cands.selected is not None and all(q.row_count is not None for q in cands.queries)
    chosen = cands.queries[cands.selected]
    assert [(r.placeholder, r.iri) for r in chosen.relations] == [("R0", R + "starred_actors"),
                                                                  ("R1", R + "directed_by")]
    result = next(p for p in out if isinstance(p, QueryResult))
    assert _answers(result) == {E + "Ian%20Sharp", E + "Lee%20Tamahori", E + "Vincent%20Ward"}
    assert all(d["source"] == "llm" for d in decisions(ctx.trace, role="decision_maker", decision="query"))


async def test_model_cannot_inject_an_iri(small_tools):
    inject = json.dumps({"chosen": ["http://example.org/metaqa/r/written_by"]})
    model = ScriptedModel().add("decision_maker", None, inject)
    ctx, template = await _prepared("who directed the films that Temuera Morrison acted in", small_tools, model)
    out = await DecisionMaker().handle(template, ctx)
    result = next(p for p in out if isinstance(p, QueryResult))
    assert _answers(result) == {E + "Ian%20Sharp", E + "Lee%20Tamahori", E + "Vincent%20Ward"}
    fallbacks = decisions(ctx.trace, role="decision_maker", source="fallback")
    assert fallbacks and all(ev["attempts"] == 2 for ev in fallbacks)
    assert "written_by" not in result.sparql


async def test_all_fillings_empty_gives_an_empty_result(small_tools):
    model = ScriptedModel()
    # "Lone Film" has one director who directed nothing else: no 3-hop reading returns anything
    ctx, _ = await _prepared("which films share the same director as Lone Film", small_tools, model)
    template = add(ctx.lineage_transcript, [SparqlTemplate(template=chain_template(3), entity_placeholders=["E0"],
                                                           relation_placeholders=["R0", "R1", "R2"])],
                   "generalist")[-1]
    ctx = make_ctx(model, small_tools, ctx.lineage_transcript)
    out = await DecisionMaker().handle(template, ctx)
    cands = next(p for p in out if isinstance(p, QueryCandidates))
    assert cands.selected is None and all(q.row_count == 0 for q in cands.queries)
    result = next(p for p in out if isinstance(p, QueryResult))
    assert result.rows == [] and result.outcome == "empty_result"


async def test_no_entity_is_reported(small_tools):
    transcript = [env(Question(text="who directed Zzyzx Qwerty"))]
    ctx = make_ctx(ScriptedModel(), small_tools, transcript)
    from kgteam.protocols.payloads import SparqlTemplate, TriplePattern, TriplePatterns
    from kgteam.roles.triad.templates import chain_template

    tpl = add(transcript, [TriplePatterns(patterns=[TriplePattern(subject="Zzyzx Qwerty", predicate="directed",
                                                                  object="?x1")]),
                           SparqlTemplate(template=chain_template(1), entity_placeholders=["E0"],
                                          relation_placeholders=["R0"])], "generalist")[-1]
    out = await DecisionMaker().handle(tpl, ctx)
    result = out[-1]
    assert isinstance(result, QueryResult) and result.outcome in ("no_entity", "empty_result") and not result.rows
