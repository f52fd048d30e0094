"""Summarizer: the answer from the retrieved sub-graph, step by step with cited triples, or "I don't know".

The readings of the sub-graph (one path, or one path per topic entity joined) are ranked by the
shared path scorer; a model, when there is one, votes among them (it sees the facts with their
ids), combined with the scores. The answer's reasoning is the chosen reading walked step by
step, each statement citing the triples (by id) it rests on; below ``min_confidence`` the answer
is "I don't know" and the best reading stays as a guess.

A question that is no plain chain (a count, a superlative, a comparison, a yes/no, a join of two
entities, a literal value of a kind) is read by the shape reader into a query graph over the
semantic layer's ranking and answered from that query's rows instead (``shapes``); the
retrieved chain readings cannot count, order or compare. A chain question is answered from the
sub-graph exactly as before.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence, one_line
from kgteam.protocols.evidence import Evidence, EvidenceQuery, EvidenceTriple
from kgteam.protocols.payloads import (
    Answer,
    AnswerValue,
    GraphReading,
    KGMapped,
    Reading,
    RetrievalPlan,
    Subgraph,
    mapped_by,
    path_belief,
)
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, choose, fallback_keys
from kgteam.roles.contract import handles
from kgteam.roles.kerag.retrieval import reading_triples
from kgteam.roles.semantic import SemanticLayer, SemanticSettings, spot_mentions
from kgteam.roles.semantic.graph_evidence import graph_evidence
from kgteam.roles.semantic.grounding import grounded_by
from kgteam.roles.semantic.reading_answer import (
    first_column,
    label_answer,
    read_graph,
    reading_grounded,
    run_reading,
)
from kgteam.roles.semantic.shape import ShapeReading, read_shape
from kgteam.roles.semantic.shaped import ShapedReader, mask_mentions, not_shape_words
from kgteam.roles.semantic.similarity import team_similarity
from kgteam.roles.semantic.topics import as_mention
from kgteam.roles.wording import answer_list
from kgteam.tools.iri import readable_name
from kgteam.tools.types import ToolError


class SummarizerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model vote among the readings")
    min_confidence: float = Field(0.5, ge=0.0, le=1.0, description="below this the answer is 'I don't know' "
                                  "and the best reading is kept as a guess")
    max_offered: int = Field(5, ge=2, le=20, description="readings shown to the model")
    max_facts: int = Field(40, ge=1, le=300, description="triples shown to the model")
    llm_weight: float = Field(0.3, ge=0.0, description="how much a valid model vote adds to a normalised score")
    max_repairs: int = Field(1, ge=0, le=3, description="repairs asked after an invalid model reply")
    max_listed: int = Field(25, ge=1, description="answer labels listed in the text")
    max_evidence_triples: int = Field(60, ge=1, description="triples carried as the answer's evidence")
    shapes: bool = Field(True, description="answer counts, superlatives, comparisons, yes/no, two-entity joins "
                         "and literal values through a query graph (off: the retrieved chain readings only)")
    query_limit: int = Field(1000, ge=1, description="rows fetched by a query graph reading")
    semantic: SemanticSettings = Field(default_factory=SemanticSettings,
                                       description="the path ranking a query graph reading is built from")


def _label(term: dict[str, object], labels: dict[str, str]) -> AnswerValue:
    """An answer value as plain one-line data (a KG label cannot draw lines or fences of its own)."""
    value = str(term.get("value", ""))
    if term.get("type") == "uri":
        return AnswerValue(label=one_line(labels.get(value) or readable_name(value)), iri=value)
    return AnswerValue(label=one_line(value))


class Summarizer(Role[SummarizerSettings]):
    name: ClassVar[str] = "summarizer"
    reads = (RetrievalPlan,)
    tools: ClassVar[tuple[str, ...]] = ("labels_for", "run_sparql", "search_entities", "entity_schema",
                                        "relation_names")
    prompts: ClassVar[tuple[str, ...]] = ("kerag_summarize",)

    @handles
    async def on_subgraph(self, graph: Subgraph, ctx: RoleContext) -> Answer:
        shaped = await self._shaped(graph.question, ctx)
        if shaped is not None:
            return shaped
        return await self._answer(graph, ctx, use_model=self.settings.use_model)

    async def finalize(self, ctx: RoleContext, reason: str) -> Answer | None:
        """A run stopped early: answer from the last sub-graph any branch retrieved, without the model."""
        for branch in reversed(ctx.run.branches):
            graph = branch.lineage.ancestor(Subgraph)
            if graph is not None and graph.readings:
                return await self._answer(graph, ctx, use_model=False)
        return None

    # ------------------------------------------------------------------ beyond chains
    async def _shaped(self, question: str, ctx: RoleContext) -> Answer | None:
        """The answer through a query graph when the question is no plain chain; None when the
        shape is a chain or the shape reader finds no reading (the sub-graph's readings stand)."""
        if not self.settings.shapes or not question.strip():
            return None
        shape = read_shape(question)
        similarity = team_similarity(ctx.tools)
        reader = ShapedReader(ctx.tools, similarity)
        # a chain whose answer kind is a class of the KG ("which *river* flows through X") is read
        # too: the reading must end in that class, which the sub-graph's readings do not check
        try:
            kind_class = not beyond_chain(shape) and bool(await reader.class_word_spans(question, shape))
        except ToolError:
            kind_class = False
        if not beyond_chain(shape) and not kind_class:
            return None
        plan = ctx.ancestor(RetrievalPlan)
        mentions = ([as_mention(t) for t in plan.mentions] if plan is not None
                    else await spot_mentions(question, ctx.tools))
        mentions = not_shape_words(mentions, shape)  # "after 2005": a comparison, not a topic called 2005
        masked = read_shape(mask_mentions(question, mentions))
        if not beyond_chain(masked) and not kind_class:
            return None  # the shape words were a name's ("Don't Look *Now*", "We're *Not* Dressing")
        try:
            kinds = await reader.class_word_spans(question, masked)
            paths = await SemanticLayer(ctx.tools, similarity, self.settings.semantic).rank(question, mentions,
                                                                                          exclude=kinds)
        except ToolError as exc:
            ctx.trace.record("shape_failed", role=self.instance_name, error=str(exc))
            return None
        reading = await read_graph(reader, question, paths, mentions, ctx.trace, self.instance_name)
        return await self._graph_answer(reading, ctx) if reading is not None else None

    async def _graph_answer(self, reading: GraphReading, ctx: RoleContext) -> Answer:
        """Run the reading and answer from its rows as Triad's advisor does: "Yes"/"No", a number
        citing the set it counted, values; "I don't know" when nothing comes back, and below
        ``min_confidence`` with the best guess kept."""
        def unknown(why: str, confidence: float | None = None, guess: list[AnswerValue] | None = None,
                    evidence: Evidence | None = None, kg_map: KGMapped | None = None) -> Answer:
            return Answer(text=f"I don't know: {why}.", status="unknown", grounded=False, confidence=confidence,
                          guess=guess or [], evidence=evidence or Evidence(),
                          fallbacks=fallback_keys(getattr(ctx.trace, "events", [])), **mapped_by(kg_map))

        where = reading.graph.where
        if reading.guess_only and not where.triples and not where.not_exists:
            return unknown(reading.explanation, confidence=0.0)
        try:
            ran = await run_reading(ctx.tools, reading, self.settings.query_limit)
        except ToolError as exc:
            ctx.trace.record("shape_failed", role=self.instance_name, error=str(exc))
            return unknown(f"the query for my reading of the question failed ({exc})")
        terms = first_column(ran.rows, ran.variables)
        if not terms:
            return unknown(f"the knowledge graph holds nothing for my reading of the question ({reading.explanation})")
        triples = await graph_evidence(ctx.tools, reading, self.settings.max_evidence_triples)
        values = await label_answer(ctx.tools, terms, triples)
        names = [v.label for v in values]
        cited = "; ".join(f"t{n} {one_line(t.readable())}" for n, t in enumerate(triples[:5]))
        reasoning = [f"{reading.graph.shape}: {reading.explanation}",
                     f"the query gives: {answer_list(names, 5)}" + (f" — from {cited}" if cited else "")]
        evidence = Evidence(matches=list(reading.matches), triples=triples, reasoning=reasoning,
                            queries=[EvidenceQuery(sparql=ran.sparql, row_count=len(ran.rows))])
        confidence = reading.confidence
        ctx.trace.record("summary", role=self.instance_name, reading=reading.key, shape=reading.graph.shape,
                         confidence=confidence, reasoning=reasoning)
        if confidence < self.settings.min_confidence:
            ctx.trace.record("abstain", role=self.instance_name, confidence=confidence,
                             threshold=self.settings.min_confidence)
            return unknown(f"my best reading ({reading.explanation}) is not certain enough. Best guess: "
                           f"{answer_list(names, 5)}", confidence=confidence, guess=values, evidence=evidence,
                           kg_map=reading.kg_map)
        return Answer(text=answer_list(names, self.settings.max_listed), values=values, status="answered",
                      grounded=reading_grounded(reading.graph, triples, values, list(reading.matches)),
                      confidence=confidence, evidence=evidence,
                      fallbacks=fallback_keys(getattr(ctx.trace, "events", [])), **mapped_by(reading.kg_map))

    # ------------------------------------------------------------------ chain readings
    async def _answer(self, graph: Subgraph, ctx: RoleContext, *, use_model: bool) -> Answer:
        fallbacks = fallback_keys(getattr(ctx.trace, "events", []))
        if not graph.readings:
            why = graph.reason or "no path from the question's entities returned anything"
            return Answer(text=f"I don't know: {why}.", status="unknown", grounded=False, fallbacks=fallbacks)
        nodes = {t.subject for t in graph.triples} | {t.object for t in graph.triples if not t.object_is_literal}
        # labels for the readings a model may see or the answer may take, not for every reading's answers
        answer_iris = {str(a["value"]) for r in graph.readings[: self.settings.max_offered]
                       for a in r.answers[: self.settings.max_listed] if a.get("type") == "uri"}
        labels = await ctx.tools["labels_for"](sorted(nodes | answer_iris | {t.predicate for t in graph.triples}))
        triples = [t.model_copy(update={"subject_label": labels.get(t.subject) or readable_name(t.subject),
                                        "predicate_label": labels.get(t.predicate) or readable_name(t.predicate),
                                        "object_label": t.object if t.object_is_literal
                                        else labels.get(t.object) or readable_name(t.object)})
                   for t in graph.triples]
        chosen = graph.readings[0]
        if use_model and len(graph.readings) > 1:
            chosen = await self._vote(graph, triples, labels, ctx) or chosen
        confidence, kg_map = path_belief(chosen, graph.readings)  # a join's reading carries no KG map
        missing = [str(a["value"]) for a in chosen.answers if a.get("type") == "uri" and str(a["value"]) not in labels]
        if missing:
            labels.update(await ctx.tools["labels_for"](missing))
        values = [_label(a, labels) for a in chosen.answers]
        cited = reading_triples(graph, chosen)
        matches = [m for i in chosen.paths for m in graph.paths[i].steps]
        order = self._evidence_order(len(triples), cited)
        reasoning = self._reasoning(graph, chosen, triples, cited, {sub: n for n, sub in enumerate(order)}, values)
        evidence = Evidence(matches=matches, triples=[triples[i] for i in order], reasoning=reasoning,
                            queries=[EvidenceQuery(sparql=graph.paths[i].sparql, row_count=len(graph.paths[i].answers))
                                     for i in chosen.paths])
        ctx.trace.record("summary", role=self.instance_name, reading=chosen.key, confidence=confidence,
                         reasoning=reasoning)
        names = [v.label for v in values]
        fallbacks = fallback_keys(getattr(ctx.trace, "events", []))
        if confidence < self.settings.min_confidence:
            ctx.trace.record("abstain", role=self.instance_name, confidence=confidence,
                             threshold=self.settings.min_confidence)
            return Answer(text=f"I don't know: my best reading ({self._explain(graph, chosen)}) is not certain "
                               f"enough. Best guess: {answer_list(names, 5)}.",
                          status="unknown", grounded=False, confidence=confidence, guess=values, evidence=evidence,
                          fallbacks=fallbacks, **mapped_by(kg_map))
        grounded = self._grounded(graph, chosen, triples, values) and bool(cited)
        text = answer_list(names, self.settings.max_listed)
        return Answer(text=text, values=values, status="answered", grounded=grounded, confidence=confidence,
                      evidence=evidence, fallbacks=fallbacks, **mapped_by(kg_map))

    @staticmethod
    def _grounded(graph: Subgraph, reading: Reading, triples: list[EvidenceTriple], values: list[AnswerValue]) -> bool:
        """One path: its walks reach every answer along relations the question's words named. "And":
        each path's walks reach the first answer (which both share); a step the words leave unnamed
        there is the one relation that makes the two entities' answers meet, so the facts decide
        it. "Or": every answer is reached by the walks of one path or the other."""
        cited = reading_triples(graph, reading)
        if reading.combine == "single":
            return grounded_by([triples[t] for t in cited], values, graph.paths[reading.paths[0]].steps)
        if reading.combine == "or":
            return grounded_by([triples[t] for t in cited], values, [])
        mine = set(cited)
        return all(grounded_by([triples[t] for t in graph.paths[i].triple_ids if t in mine], values[:1], [])
                   for i in reading.paths)

    def _evidence_order(self, count: int, cited: list[int]) -> list[int]:
        """The triples the reasoning cites first, then the rest of the sub-graph, within the cap."""
        wanted = set(cited)
        return [*cited, *(i for i in range(count) if i not in wanted)][: self.settings.max_evidence_triples]

    @staticmethod
    def _explain(graph: Subgraph, reading: Reading) -> str:
        parts = [f"{graph.paths[i].mention}: {graph.paths[i].explain()}" for i in reading.paths]
        joiner = {"and": " AND ", "or": " OR "}.get(reading.combine, "")
        return joiner.join(parts) if joiner else parts[0]

    @staticmethod
    def _reasoning(graph: Subgraph, reading: Reading, triples: list[EvidenceTriple], cited: list[int],
                   position: dict[int, int], values: list[AnswerValue]) -> list[str]:
        """One statement per step of each path, citing the triples that make it true as ``t<n>``:
        the n-th triple of the answer's evidence."""
        out: list[str] = []
        mine = set(cited)
        for i in reading.paths:
            path = graph.paths[i]
            ids = [t for t in path.triple_ids if t in mine] or path.triple_ids
            for n, step in enumerate(path.steps, start=1):
                used = [t for t in ids if triples[t].predicate == step.predicate and t in position][:3]
                shown = "; ".join(f"t{position[t]} {one_line(triples[t].readable())}" for t in used)
                out.append(f"{path.mention} step {n}: {step.explain()} — {shown or 'no triple fetched'}")
        if reading.combine != "single":
            out.append(f"{'both' if reading.combine == 'and' else 'either'} paths lead to: "
                       + answer_list([v.label for v in values], 5))
        return out

    async def _vote(self, graph: Subgraph, triples: list[EvidenceTriple], labels: dict[str, str],
                    ctx: RoleContext) -> Reading | None:
        """The model picks among the best readings (ids only), each citing the facts it rests on;
        those facts are listed first, numbered for this prompt (``f1`` ...)."""
        offered = graph.readings[: self.settings.max_offered]
        cites = [reading_triples(graph, r)[:6] for r in offered]
        order = list(dict.fromkeys([*(t for c in cites for t in c), *range(len(triples))]))[: self.settings.max_facts]
        number = {t: n for n, t in enumerate(order, start=1)}
        options = []
        for n, (reading, cited) in enumerate(zip(offered, cites, strict=True)):
            names = [_label(a, labels).label for a in reading.answers[:5]]
            shown = " ".join(f"f{number[t]}" for t in cited if t in number)
            options.append(Option(key=str(n), label=one_line(f"{self._explain(graph, reading)} -> {', '.join(names)}"),
                                  score=reading.score, detail=f"facts {shown}" if shown else ""))
        facts = "\n".join(f"f{number[t]}: {one_line(triples[t].readable())}" for t in order)
        res = await choose(ctx, role=self.instance_name, decision="reading", prompt=self.prompt("kerag_summarize"),
                           options=options, k=1, values={"question": fence(graph.question, tag="question"),
                                                         "facts": fence(facts, tag="facts")},
                           llm_weight=self.settings.llm_weight, max_repairs=self.settings.max_repairs,
                           max_offered=self.settings.max_offered)
        return offered[int(res.chosen[0].key)] if res.chosen else None


def beyond_chain(shape: ShapeReading) -> bool:
    """Whether the question asks more of the KG than one chain's end values (or a join the
    retrieved readings make): a yes/no, a count, an order, a comparison, a kind of literal, a
    negation or a union."""
    return shape.form == "ask" or shape.shape != "chain" or shape.negated
