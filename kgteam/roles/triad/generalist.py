"""Generalist: question -> ranked relation paths, triple patterns, a SPARQL template, the answer type.

The semantic layer reads the question first (topic mention, candidate relation paths of 1-3
hops scored against the question's words) and its ranking travels on as ``RelationPaths``. The
model then parses with worked examples; its parse is accepted only when the template is a
placeholder-only chain, the mention is one the label index knows in this question, and the hop
count agrees with the layer's best path when the layer is confident. Otherwise the layer's best
path is the parse.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence
from kgteam.protocols.payloads import (
    AnswerType,
    AnswerTypeName,
    GraphReading,
    Question,
    RelationPaths,
    RetryHint,
    RetrySignal,
    SparqlTemplate,
    TriplePattern,
    TriplePatterns,
)
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles
from kgteam.roles.semantic import Mention, SemanticLayer, SemanticSettings, spot_mentions
from kgteam.roles.semantic.reading_answer import read_graph
from kgteam.roles.semantic.shape import read_shape
from kgteam.roles.semantic.shaped import ShapedReader, mask_mentions, not_shape_words
from kgteam.roles.semantic.similarity import team_similarity
from kgteam.roles.semantic.text import normalise
from kgteam.roles.triad.parsing import ParsePlan, plan_from_paths
from kgteam.roles.triad.templates import TemplateError, chain_template, parse_chain


class GeneralistSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = True
    max_repairs: int = Field(1, ge=0, le=3)
    max_hops: int = Field(3, ge=1, le=3, description="the decision maker fills chains of 1-3 hops")
    sure: float = Field(0.4, ge=0, le=1, description="layer confidence above which the model must agree on hops")
    shapes: bool = Field(True, description="read counts, superlatives, comparisons, yes/no, two-entity joins and "
                         "answer kinds into a query graph (off: chains only)")
    semantic: SemanticSettings = Field(default_factory=SemanticSettings)


class ParseOutput(BaseModel):
    """What the model must return for a parse."""

    mention: str = Field(description="the entity name exactly as written in the question")
    patterns: list[TriplePattern] = Field(min_length=1, max_length=3)
    template: str
    answer_type: AnswerTypeName


Parse = list[RelationPaths | TriplePatterns | AnswerType | SparqlTemplate]


class Generalist(Role[GeneralistSettings]):
    name: ClassVar[str] = "generalist"
    reads = (RelationPaths,)
    tools: ClassVar[tuple[str, ...]] = ("search_entities", "entity_schema", "run_sparql", "labels_for",
                                        "relation_names")
    prompts: ClassVar[tuple[str, ...]] = ("generalist_parse",)

    @handles
    async def on_question(self, question: Question, ctx: RoleContext) -> Parse:
        return await self._parse(question.text, RetryHint(), ctx)

    @handles
    async def on_retry(self, retry: RetrySignal, ctx: RoleContext) -> Parse:
        asked = ctx.ancestor(Question)
        return await self._parse(asked.text if asked else "", retry.hint, ctx)

    async def _parse(self, question: str, hint: RetryHint, ctx: RoleContext) -> Parse:
        paths = ctx.ancestor(RelationPaths)
        mentions = await spot_mentions(question, ctx.tools) if question.strip() else []
        kind_spans: list[tuple[int, int]] = []
        if self.settings.shapes and question.strip():
            shape = read_shape(question)
            mentions = not_shape_words(mentions, shape)  # "after 2005": a comparison, not the film "2005"
            kind_spans = await ShapedReader(ctx.tools).class_word_spans(question, read_shape(
                mask_mentions(question, mentions)))
        if paths is None:
            layer = SemanticLayer(ctx.tools, team_similarity(ctx.tools), self.settings.semantic)
            paths = await layer.rank(question, mentions, exclude=kind_spans)
            ctx.trace.record("paths", role=self.instance_name, mention=paths.mention, confidence=paths.confidence,
                             best=paths.best.explain() if paths.best else None)
        det = plan_from_paths(paths, mentions, force_hops=hint.hops, max_hops=self.settings.max_hops)
        plan = det
        reading = await self._graph_reading(question, paths, mentions, hint, ctx)
        if reading is not None:
            ctx.trace.record("parse", role=self.instance_name, shape=reading.graph.shape,
                             reading=reading.explanation, confidence=reading.confidence)
            return [paths, TriplePatterns(patterns=plan.patterns()),
                    AnswerType(type=_answer_type(reading), is_list=reading.graph.aggregate is None),
                    SparqlTemplate(template=chain_template(plan.hops), entity_placeholders=["E0"],
                                   relation_placeholders=[f"R{i}" for i in range(plan.hops)], reading=reading)]
        if self.settings.use_model and question.strip():  # an empty question has nothing for the model to parse
            sure = paths.confidence >= self.settings.sure and hint.hops is None
            plan = await self._model_parse(ctx, question, mentions, det, hint, sure)
        template = chain_template(plan.hops)
        ctx.trace.record("parse", role=self.instance_name, mention=plan.mention.text if plan.mention else None,
                         hops=plan.hops, answer_type=plan.answer_type)
        return [
            paths,
            TriplePatterns(patterns=plan.patterns()),
            AnswerType(type=plan.answer_type, is_list=True),
            SparqlTemplate(template=template, entity_placeholders=["E0"],
                           relation_placeholders=[f"R{i}" for i in range(plan.hops)]),
        ]

    async def _graph_reading(self, question: str, paths: RelationPaths, mentions: list[Mention], hint: RetryHint,
                             ctx: RoleContext) -> GraphReading | None:
        """The question's shape (count, superlative, yes/no, two entities, an answer kind the best
        chain misses ...) as a query graph; None when the plain chain reading stands. A retry that
        asks for another hop count or wider linking goes back to chains."""
        if not self.settings.shapes or not question.strip() or hint.hops is not None or hint.k is not None:
            return None
        reader = ShapedReader(ctx.tools, team_similarity(ctx.tools))
        return await read_graph(reader, question, paths, mentions, ctx.trace, self.instance_name)

    async def _model_parse(self, ctx: RoleContext, question: str, mentions: list[Mention],
                           det: ParsePlan, hint: RetryHint, sure: bool) -> ParsePlan:
        known = {normalise(m.text): m for m in mentions}
        plain = question

        def validate(out: ParseOutput) -> str | None:
            if normalise(out.mention) not in normalise(plain):
                return f"mention {out.mention!r} does not occur in the question"
            if known and normalise(out.mention) not in known:
                return f"mention must be one of the known entity names: {sorted(m.text for m in mentions)}"
            try:
                chain = parse_chain(out.template, max_hops=self.settings.max_hops)
            except TemplateError as exc:
                return str(exc)
            if len(out.patterns) != chain.hops:
                return f"{len(out.patterns)} triple pattern(s) but the template has {chain.hops}"
            if hint.hops is not None and chain.hops != hint.hops:
                return f"this retry needs a {hint.hops}-hop template"
            if sure and chain.hops != det.hops:
                return f"the knowledge graph's best reading of the question has {det.hops} hop(s), not {chain.hops}"
            return None

        retry_note = ""
        if hint.note or hint.hops:
            retry_note = "A previous attempt failed: " + fence(hint.text(), tag="retry_hint")
        result = await produce(
            ctx, role=self.instance_name, decision="parse", prompt=self.prompt("generalist_parse"), output=ParseOutput,
            values={"question": fence(question, tag="question"), "retry_note": retry_note,
                    "max_hops": self.settings.max_hops},
            validate=validate, fallback=lambda: None, max_repairs=self.settings.max_repairs,
        )
        if result.source != "llm" or result.value is None:
            return det
        out: ParseOutput = result.value
        chain = parse_chain(out.template, max_hops=self.settings.max_hops)
        mention = known.get(normalise(out.mention)) or Mention(out.mention, 0, 0)
        phrases = [p.predicate for p in out.patterns][: chain.hops]
        return ParsePlan(mention, chain.hops, out.answer_type, phrases)


def _answer_type(reading: GraphReading) -> AnswerTypeName:
    kind = reading.graph.expected.kind if reading.graph.expected else "entity"
    return {"entity": "resource", "number": "number", "date": "date", "string": "string",
            "boolean": "boolean"}[kind]  # type: ignore[return-value]
