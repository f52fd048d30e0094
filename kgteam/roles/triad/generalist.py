"""Generalist: question -> ranked relation paths, triple patterns, a SPARQL template, the answer type.

The semantic layer reads the question first (topic mention, candidate relation paths of 1-3
hops scored against the question's words) and its ranking travels on as ``RelationPaths``; the
shape reader may read it into a query graph (a count, a superlative, a yes/no ...). The model
then writes a query-graph template over placeholders (``protocols.graph_template``), accepted
only when it is well formed, its entities are names the label index knows in this question, its
shape is the one the question's words show (when they show one), and a chain's hop count agrees
with the layer's best path when the layer is confident. A chain becomes the parse plan; any
other shape goes to the decision maker to fill. Otherwise the deterministic reading stands.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.llm.no_model import model_available
from kgteam.prompts import fence
from kgteam.protocols.graph_template import GraphTemplate, structure_problem
from kgteam.protocols.payloads import (
    AnswerType,
    AnswerTypeName,
    GraphReading,
    Question,
    RelationPaths,
    RetryHint,
    RetrySignal,
    SparqlTemplate,
    TriplePatterns,
)
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles
from kgteam.roles.fewshot import worked_examples
from kgteam.roles.semantic import Mention, SemanticLayer, SemanticSettings, spot_mentions
from kgteam.roles.semantic.classes import class_spans
from kgteam.roles.semantic.coverage import unread_words
from kgteam.roles.semantic.nested import nested_topic, with_topic
from kgteam.roles.semantic.reading_answer import read_graph
from kgteam.roles.semantic.shape import ShapeReading, read_shape
from kgteam.roles.semantic.shaped import ShapedReader, literal_relations, mask_mentions, not_shape_words
from kgteam.roles.semantic.similarity import team_similarity
from kgteam.roles.semantic.text import normalise
from kgteam.roles.triad.graph_filling import answer_type, chain_of, question_problem, seen_shape
from kgteam.roles.triad.parsing import ParsePlan, plan_from_paths
from kgteam.roles.triad.templates import TemplateError, chain_template
from kgteam.tools.types import ToolError


class GeneralistSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = True
    max_repairs: int = Field(1, ge=0, le=3)
    max_hops: int = Field(3, ge=1, le=3, description="the decision maker fills chains of 1-3 hops")
    sure: float = Field(0.4, ge=0, le=1, description="layer confidence above which the model must agree on hops")
    shapes: bool = Field(True, description="read counts, superlatives, comparisons, yes/no, two-entity joins and "
                         "answer kinds into a query graph (off: chains only)")
    worked_examples: int = Field(3, ge=0, le=10, description="examples of the KG's bank nearest the question "
                                 "shown to the model as worked examples (0: none; no bank: none)")
    semantic: SemanticSettings = Field(default_factory=SemanticSettings)


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
        topic = None
        if self.settings.shapes and question.strip():
            shape = read_shape(question)
            mentions = not_shape_words(mentions, shape)  # "after 2005": a comparison, not the film "2005"
            if hint.hops is None and hint.k is None:
                # "the capital of the largest state": the described entity is the topic
                topic = await nested_topic(question, ctx.tools, team_similarity(ctx.tools), self.settings.semantic)
                if topic is not None:
                    mentions = with_topic(mentions, topic)
                    ctx.trace.record("nested_topic", role=self.instance_name, phrase=topic.mention.text,
                                     reading=topic.explanation, confidence=topic.confidence)
            kind_spans = await ShapedReader(ctx.tools).class_word_spans(question, read_shape(
                mask_mentions(question, mentions)))
        if paths is None:
            layer = SemanticLayer(ctx.tools, team_similarity(ctx.tools), self.settings.semantic)
            paths = await layer.rank(question, mentions, exclude=kind_spans)
            if topic is not None:  # a chain from the described topic: belief_of multiplies its certainty in
                paths.certainty, paths.described, paths.described_as = topic.confidence, True, topic.explanation
            ctx.trace.record("paths", role=self.instance_name, mention=paths.mention, confidence=paths.confidence,
                             best=paths.best.explain() if paths.best else None)
        det = plan_from_paths(paths, mentions, force_hops=hint.hops, max_hops=self.settings.max_hops)
        plan = det
        reading = await self._graph_reading(question, paths, mentions, hint, ctx)
        if reading is not None and topic is not None and any(t in reading.graph.topics
                                                             for t in topic.mention.exact_iris()):
            reading = reading.model_copy(update={
                "confidence": round(reading.confidence * topic.confidence, 4), "kg_map": None, "described": True,
                "explanation": f"{reading.explanation}; where {topic.explanation}"})
        if self.settings.shapes and question.strip() and hint.hops is None and hint.k is None:
            reading = await self._note_unread(question, mentions, paths, reading, ctx)
        drawn: GraphTemplate | None = None
        # the model writes a template when there is one to write (with no model, a shaped reading
        # stands without asking, as it always did)
        if self.settings.use_model and question.strip() and (reading is None or model_available(ctx.model)):
            sure = paths.confidence >= self.settings.sure and hint.hops is None
            seen = read_shape(mask_mentions(question, mentions), literal_relations(paths))
            plan, drawn = await self._model_parse(ctx, question, mentions, det, hint, sure, seen,
                                                  chain_only=not self.settings.shapes, has_reading=reading is not None)
        if drawn is not None:  # the decision maker fills it; when nothing fills, what follows stands
            ctx.trace.record("template", role=self.instance_name, shape=drawn.shape, triples=drawn.triples,
                             entities=drawn.entities, relations=drawn.relations)
        if reading is not None:
            ctx.trace.record("parse", role=self.instance_name, shape=reading.graph.shape,
                             reading=reading.explanation, confidence=reading.confidence)
            return [paths, TriplePatterns(patterns=det.patterns()),
                    AnswerType(type=_answer_type(reading), is_list=reading.graph.aggregate is None),
                    SparqlTemplate(template=chain_template(det.hops), entity_placeholders=["E0"],
                                   relation_placeholders=[f"R{i}" for i in range(det.hops)], reading=reading,
                                   graph=drawn)]
        template = chain_template(plan.hops)
        ctx.trace.record("parse", role=self.instance_name, mention=plan.mention.text if plan.mention else None,
                         hops=plan.hops, answer_type=plan.answer_type)
        return [
            paths,
            TriplePatterns(patterns=plan.patterns()),
            AnswerType(type=plan.answer_type, is_list=True),
            SparqlTemplate(template=template, entity_placeholders=["E0"],
                           relation_placeholders=[f"R{i}" for i in range(plan.hops)], graph=drawn),
        ]

    async def _note_unread(self, question: str, mentions: list[Mention], paths: RelationPaths,
                           reading: GraphReading | None, ctx: RoleContext) -> GraphReading | None:
        """Note the question's content words the reading left unread (``semantic.coverage``): the
        team's signal map weighs them, and the answer says which they were."""
        try:
            spans = [(c.start, c.end) for c in await class_spans(question, ctx.tools)]
        except ToolError:
            spans = []
        matches = reading.matches if reading is not None else (paths.best.steps if paths.best else [])
        unread = unread_words(question, mentions=mentions, shape=read_shape(question), matches=matches,
                              class_spans=spans, said=[reading.explanation] if reading is not None else [])
        if not unread:
            return reading
        ctx.trace.record("unread", role=self.instance_name, words=unread)
        paths.unread = unread
        if reading is None:
            return None
        return reading.model_copy(update={"unread": unread, "explanation": f"{reading.explanation}; words not "
                                                                            f"read: {', '.join(unread)}"})

    async def _graph_reading(self, question: str, paths: RelationPaths, mentions: list[Mention], hint: RetryHint,
                             ctx: RoleContext) -> GraphReading | None:
        """The question's shape (count, superlative, yes/no, two entities, an answer kind the best
        chain misses ...) as a query graph; None when the plain chain reading stands. A retry that
        asks for another hop count or wider linking goes back to chains."""
        if not self.settings.shapes or not question.strip() or hint.hops is not None or hint.k is not None:
            return None
        reader = ShapedReader(ctx.tools, team_similarity(ctx.tools))
        return await read_graph(reader, question, paths, mentions, ctx.trace, self.instance_name)

    async def _model_parse(self, ctx: RoleContext, question: str, mentions: list[Mention], det: ParsePlan,
                           hint: RetryHint, sure: bool, seen: ShapeReading, *, chain_only: bool,
                           has_reading: bool) -> tuple[ParsePlan, GraphTemplate | None]:
        """The model's query-graph template, checked: a chain becomes the parse plan (unless a
        shaped reading already stands), any other shape goes to the decision maker to fill. An
        invalid template after repairs leaves the deterministic parse."""
        known = {normalise(m.text): m for m in mentions}
        names = [m.text for m in mentions]
        retrying = hint.hops is not None or hint.k is not None

        def validate(out: GraphTemplate) -> str | None:
            problem = structure_problem(out, max_hops=self.settings.max_hops) or \
                question_problem(out, question, names, seen)
            if problem:
                return problem
            if out.shape != "chain":
                return "this attempt needs a chain template from <E0>" if retrying or chain_only else None
            try:
                chain = chain_of(out)
            except TemplateError as exc:
                return str(exc)
            if hint.hops is not None and chain.hops != hint.hops:
                return f"this retry needs a {hint.hops}-hop template"
            if sure and not has_reading and chain.hops != det.hops:
                return f"the knowledge graph's best reading of the question has {det.hops} hop(s), not {chain.hops}"
            return None

        worked = await worked_examples(question, ctx, self.settings.worked_examples, role=self.instance_name,
                                       mentions=names)
        notes = [worked] if worked else []
        if hint.note or hint.hops:
            notes.append("A previous attempt failed: " + fence(hint.text(), tag="retry_hint"))
        expected = seen_shape(seen)
        if expected is not None and not retrying:
            notes.append(f"The question's words ask for the shape: {expected}.")
        if names:
            notes.append("Entity names found in the question: " + "; ".join(names[:6]) + ".")
        result = await produce(
            ctx, role=self.instance_name, decision="parse", prompt=self.prompt("generalist_parse"),
            output=GraphTemplate, values={"question": fence(question, tag="question"), "notes": "\n".join(notes),
                                          "max_hops": self.settings.max_hops},
            validate=validate, fallback=lambda: None, max_repairs=self.settings.max_repairs,
        )
        if result.source != "llm" or result.value is None:
            return det, None
        out: GraphTemplate = result.value
        if out.shape != "chain":
            return det, out
        chain = chain_of(out)
        mention = known.get(normalise(out.entities[0])) or Mention(out.entities[0], 0, 0)
        phrases = [out.relations[int(step.relation[1:])] for step in chain.steps]
        return ParsePlan(mention, chain.hops, answer_type(out), phrases), None


def _answer_type(reading: GraphReading) -> AnswerTypeName:
    kind = reading.graph.expected.kind if reading.graph.expected else "entity"
    return {"entity": "resource", "number": "number", "date": "date", "string": "string",
            "boolean": "boolean"}[kind]  # type: ignore[return-value]
