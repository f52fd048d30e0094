"""Advisor: the final answer from the selected query's results, or a retry, or the model's own word.

A grounded answer lists the answer labels and carries the triples that connect the topic entity
to each answer (re-queried with the chosen bindings) and the SPARQL. An empty result sends a
``RetrySignal`` whose hint makes the next attempt differ (other hop count, wider K, tried
combinations excluded). After the retry budget, the model answers from its own knowledge,
marked ``grounded=False``.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.llm.no_model import model_available
from kgteam.prompts import fence, one_line
from kgteam.protocols.evidence import Evidence, EvidenceQuery, EvidenceTriple, RelationMatch
from kgteam.protocols.payloads import (
    Answer,
    AnswerType,
    AnswerValue,
    EntityCandidates,
    GraphReading,
    KGMapped,
    QueryCandidates,
    QueryResult,
    Question,
    ReadingSignals,
    RelationPaths,
    RetryHint,
    RetryPhase,
    RetrySignal,
    SparqlTemplate,
    mapped_by,
)
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import fallback_keys, produce
from kgteam.roles.contract import handles
from kgteam.roles.lineage import Lineage
from kgteam.roles.semantic.graph_evidence import graph_evidence
from kgteam.roles.semantic.grounding import inferred_steps
from kgteam.roles.semantic.reader import chain_convention
from kgteam.roles.semantic.reading_answer import first_column, label_answer, reading_grounded
from kgteam.roles.triad.templates import Chain, TemplateError, build_query, from_query, parse_chain
from kgteam.roles.wording import answer_list, wording_problem
from kgteam.tools.types import ToolError


class AdvisorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model phrase grounded answers")
    max_retries: int = Field(3, ge=0, description="Triad's T; the supervisor's max_retries also applies")
    max_repairs: int = Field(1, ge=0, le=3)
    max_evidence_triples: int = Field(60, ge=1)
    max_listed: int = Field(25, ge=1, description="answer labels listed in the text")
    own_knowledge: bool = Field(True, description="after the retries, answer from the model's own knowledge")
    min_confidence: float = Field(0.5, ge=0.0, le=1.0, description="below this the answer is 'I don't know' and "
                                  "the best candidate is kept as a guess (calibrated in docs/benchmarks.md)")


class PhrasedAnswer(BaseModel):
    answer: str = Field(min_length=1, max_length=2000)


class OwnAnswer(BaseModel):
    answers: list[str] = Field(default_factory=list, max_length=20)
    answer: str = ""




class Advisor(Role[AdvisorSettings]):
    name: ClassVar[str] = "advisor"
    reads = (Question, QueryCandidates, SparqlTemplate, AnswerType, RetrySignal, EntityCandidates, RelationPaths)
    tools: ClassVar[tuple[str, ...]] = ("run_sparql", "labels_for")
    prompts: ClassVar[tuple[str, ...]] = ("advisor_answer", "advisor_own_knowledge")

    @handles
    async def on_result(self, result: QueryResult, ctx: RoleContext) -> list[Answer | RetrySignal]:
        asked = ctx.ancestor(Question)
        question = asked.text if asked else ""
        if result.rows:
            answer = await self._grounded(ctx, ctx.lineage, result, question, phrase=self.settings.use_model)
            return [answer]
        retries = ctx.lineage.count(RetrySignal)
        budget_left = ctx.budgets.remaining("max_retries")
        hopeless = self._hopeless(ctx, result, question) or _reading_failed(ctx.lineage)
        if hopeless:
            ctx.trace.record("retry_skipped", role=self.instance_name, reason=hopeless)
            return [Answer(text=f"I don't know: {hopeless}.", status="unknown", grounded=False,
                           fallbacks=fallback_keys(getattr(ctx.trace, "events", [])))]
        if retries < self.settings.max_retries and budget_left > 0:
            return [self._retry(ctx, result, retries + 1)]
        return [await self._own_knowledge(ctx, question)]

    async def finalize(self, ctx: RoleContext, reason: str) -> Answer | None:
        """The latest non-empty query result of any branch, answered without the model."""
        for branch in reversed(ctx.run.branches):
            result = next((r for r in reversed(branch.lineage.ancestors(QueryResult)) if r.rows), None)
            if result is not None:
                asked = branch.lineage.ancestor(Question)
                return await self._grounded(ctx, branch.lineage, result, asked.text if asked else "", phrase=False)
        return None

    # ------------------------------------------------------------------ grounded
    async def _grounded(self, ctx: RoleContext, lineage: Lineage, result: QueryResult, question: str, *,
                        phrase: bool) -> Answer:
        terms = first_column(result.rows, result.variables)
        triples, chain_entity = await self._evidence(ctx, lineage, result)
        answer_values = await label_answer(ctx.tools, terms, triples)
        names = [a.label for a in answer_values]
        matches, confidence, kg_map = self._reading(lineage)
        signals = _signals(lineage, matches, confidence, len(answer_values))
        read_as = _read_as(lineage)
        evidence = Evidence(matches=matches, triples=triples,
                            queries=[EvidenceQuery(sparql=result.sparql, row_count=len(result.rows))])
        if own_entity_only(result.sparql, answer_values) and turns_at_a_shared_node(matches):
            ctx.trace.record("abstain", role=self.instance_name, reason="the answer is the question's own entity")
            return Answer(text=f"I don't know: my reading of the question only leads back to "
                               f"{answer_list(names, 5)}, which the question itself names.",
                          status="unknown", grounded=False, confidence=None,  # a rule decided, not a score
                          guess=answer_values, evidence=evidence,
                          fallbacks=fallback_keys(getattr(ctx.trace, "events", [])))
        if confidence is None and not model_available(ctx.model) and self._filling_score(lineage) <= 0.0:
            confidence = 0.0  # no scorer and no model stands behind this query: nothing to state on
        if confidence is not None and confidence < self.settings.min_confidence:
            ctx.trace.record("abstain", role=self.instance_name, confidence=confidence,
                             threshold=self.settings.min_confidence)
            reading = "; ".join(m.explain() for m in matches)
            return Answer(text=f"I don't know: my best reading of the question ({reading}) is not certain enough. "
                               f"Best guess: {answer_list(names, 5)}.",
                          status="unknown", grounded=False, confidence=confidence, guess=answer_values,
                          evidence=evidence, fallbacks=fallback_keys(getattr(ctx.trace, "events", [])),
                          signals=signals, reading=read_as, **mapped_by(kg_map))
        text = answer_list(names, self.settings.max_listed)
        if phrase and names:
            said = [*(m.label for m in matches), *(lab for t in triples for lab in
                                                     (t.subject_label, t.predicate_label, t.object_label))]
            text = await self._phrase(ctx, question, names, text, [one_line(x) for x in said if x])
        return Answer(text=text, values=answer_values, status="answered",
                      grounded=_grounded(lineage, triples, answer_values, matches),
                      confidence=confidence if confidence is not None else self._filling_score(lineage),
                      evidence=evidence, fallbacks=fallback_keys(getattr(ctx.trace, "events", [])),
                      signals=signals, reading=read_as, **mapped_by(kg_map if confidence is not None else None))

    @staticmethod
    def _reading(lineage: Lineage) -> tuple[list[RelationMatch], float | None, KGMapped | None]:
        """Which words named the chosen query's relations, the scorer's confidence in it, and
        whether that confidence went through the KG's own map."""
        reading = ran_reading(lineage)
        if reading is not None:
            return list(reading.matches), reading.confidence, reading.kg_map
        paths = lineage.ancestor(RelationPaths)
        cands = lineage.ancestor(QueryCandidates)
        if paths is None or cands is None or cands.selected is None:
            return [], None, None
        key = cands.queries[cands.selected].key
        path = next((p for p in paths.paths if p.key == key), None)
        if path is None:
            return [], None, None
        return list(path.steps), *paths.belief_of(key)

    @staticmethod
    def _filling_score(lineage: Lineage) -> float:
        """The stated confidence when no scored reading stands behind the query (e.g. one the model
        wrote): the scorer's score of the chosen filling, else 0 (nothing scored it)."""
        cands = lineage.ancestor(QueryCandidates)
        if cands is None or cands.selected is None or cands.queries[cands.selected].score is None:
            return 0.0
        return min(1.0, max(0.0, float(cands.queries[cands.selected].score or 0.0)))

    async def _phrase(self, ctx: RoleContext, question: str, names: list[str], plain: str,
                      evidence: list[str]) -> str:
        """The model's sentence when it says the values and nothing else; else the plain list (traced)."""
        listed = [one_line(n) for n in names[: self.settings.max_listed]]

        def validate(out: PhrasedAnswer) -> str | None:
            missing = [n for n in listed if n.lower() not in out.answer.lower()]
            if missing:
                return f"the answer must name every result; missing: {missing[:5]}"
            return wording_problem(out.answer, listed, answer_list(listed, len(listed)), question, evidence)

        res = await produce(ctx, role=self.instance_name, decision="answer", prompt=self.prompt("advisor_answer"),
                            output=PhrasedAnswer, values={"question": fence(question, tag="question"),
                                                          "results": fence("\n".join(listed), tag="results")},
                            validate=validate, fallback=lambda: PhrasedAnswer(answer=plain),
                            max_repairs=self.settings.max_repairs)
        if res.source == "fallback" and res.errors:
            ctx.trace.record("answer_rebuilt", role=self.instance_name, reason=res.errors[-1],
                             rejected=[r[:300] for r in res.errors], shown=plain)
        text = res.value.answer
        if len(names) > len(listed):
            text += f" (and {len(names) - len(listed)} more)"
        return text

    async def _evidence(self, ctx: RoleContext, lineage: Lineage, result: QueryResult
                        ) -> tuple[list[EvidenceTriple], str | None]:
        """Re-run the selected filling with every chain variable bound, to collect the path triples."""
        cands = lineage.ancestor(QueryCandidates)
        template = lineage.ancestor(SparqlTemplate)
        reading = ran_reading(lineage)
        if reading is not None:
            return await graph_evidence(ctx.tools, reading, self.settings.max_evidence_triples), None
        if cands is None or cands.selected is None or template is None:
            return [], None
        chosen = cands.queries[cands.selected]
        try:
            chain: Chain = parse_chain(template.template)
            entity, rels = from_query(chain, chosen)
        except (TemplateError, KeyError):
            return [], None
        q = build_query(chain, entity, rels, all_vars=True, convention=chain_convention(ctx.tools))
        try:
            res = await ctx.tools["run_sparql"](q, limit=self.settings.max_evidence_triples * 2)
        except ToolError:
            return [], entity
        triples: list[EvidenceTriple] = []
        seen: set[tuple[str, str, str]] = set()
        for row in res.rows:
            prev = entity
            for step, rel in zip(chain.steps, rels, strict=True):
                term = row.get(step.target.lstrip("?"))
                if term is None:
                    break
                lit = term.type == "literal"
                s, o = (prev, term.value) if rel.direction == "out" else (term.value, prev)
                key = (s, rel.iri, o)
                if key not in seen:
                    seen.add(key)
                    triples.append(EvidenceTriple(subject=s, predicate=rel.iri, object=o,
                                                  object_is_literal=lit and rel.direction == "out",
                                                  object_datatype=term.datatype if lit else None))
                prev = term.value
            if len(triples) >= self.settings.max_evidence_triples:
                break
        return triples[: self.settings.max_evidence_triples], entity

    # ------------------------------------------------------------------ retry
    @staticmethod
    def _hopeless(ctx: RoleContext, result: QueryResult, question: str) -> str | None:
        """Why no retry (and no own-knowledge guess) can help, or None.

        An empty question has nothing to answer. A ``no_entity`` result with no mention at all
        (no entity candidates came with it) cannot change with a wider K, and a second
        ``no_entity`` after a widened search would repeat the same search.
        """
        if not question.strip():
            return "the question is empty"
        if result.outcome != "no_entity":
            return None
        if not ctx.lineage.coproducts(EntityCandidates):
            return "no entity of the question was found in the knowledge graph"
        if any(r.reason == "no_entity" for r in ctx.ancestors(RetrySignal)):
            return "no entity matching the question's mention was found, even with a wider search"
        return None

    def _retry(self, ctx: RoleContext, result: QueryResult, attempt: int) -> RetrySignal:
        """Each attempt changes something: hop count first, then a wider candidate set."""
        templates = ctx.ancestors(SparqlTemplate)
        hops_now = len(templates[-1].relation_placeholders) if templates else 1
        tried_hops = sorted({len(t.relation_placeholders) for t in templates})
        tried = [q.key for c in ctx.ancestors(QueryCandidates) for q in c.queries if q.key]
        paths = ctx.ancestor(RelationPaths)
        lengths = [p.hops for p in paths.paths] if paths else []
        other = next((h for h in lengths if h not in tried_hops), 2 if hops_now == 1 else 1)
        phase: RetryPhase
        if result.outcome == "no_entity":
            hint = RetryHint(note="no entity of the question was found in the label index; widen the search",
                             k=4 * attempt, tried_hops=tried_hops)
            phase = "linking"
        elif other not in tried_hops:
            hint = RetryHint(note=f"the {hops_now}-hop query returned nothing; try a {other}-hop reading",
                             hops=other, tried_hops=tried_hops)
            phase = "parsing"
        else:
            hint = RetryHint(note="every filling returned nothing; keep more candidates and skip tried ones",
                             k=2 + 2 * attempt, exclude=tried, tried_hops=tried_hops)
            phase = "linking"
        ctx.trace.record("retry", role=self.instance_name, phase=phase, attempt=attempt, hint=hint.text())
        reason = "no_entity" if result.outcome == "no_entity" else "query_error" if result.outcome == "query_error" \
            else "empty_result"
        return RetrySignal(phase=phase, reason=reason, hint=hint, attempt=attempt)

    # ------------------------------------------------------------------ ungrounded
    async def _own_knowledge(self, ctx: RoleContext, question: str) -> Answer:
        atype = ctx.ancestor(AnswerType)
        type_name = atype.type if atype else "resource"
        fallbacks = fallback_keys(getattr(ctx.trace, "events", []))
        if self.settings.own_knowledge and self.settings.use_model:
            def validate(out: OwnAnswer) -> str | None:
                return None  # an empty reply is the prompt's "I do not know", not an error

            res = await produce(ctx, role=self.instance_name, decision="own_knowledge",
                                prompt=self.prompt("advisor_own_knowledge"), output=OwnAnswer,
                                values={"question": fence(question, tag="question"), "answer_type": type_name},
                                validate=validate, fallback=lambda: None, max_repairs=self.settings.max_repairs)
            out: OwnAnswer | None = res.value
            if out is not None and (out.answers or out.answer.strip()):
                names = [a for a in out.answers if a.strip()] or [out.answer.strip()]
                return Answer(text=f"{answer_list(names, self.settings.max_listed)} (not found in the knowledge graph; "
                                   "from the model's own knowledge, unverified)",
                              values=[AnswerValue(label=n) for n in names], status="answered", grounded=False,
                              confidence=0.0,  # nothing in the KG stands behind it
                              fallbacks=fallback_keys(getattr(ctx.trace, "events", [])))
        return Answer(text="I don't know: the knowledge graph returned nothing for this question.",
                      status="unknown", grounded=False, fallbacks=fallbacks)


def _signals(lineage: Lineage, matches: list[Any], confidence: float | None, values: int) -> ReadingSignals | None:
    """What the semantic reading behind the answer knows about itself (None: no scored reading)."""
    if confidence is None:
        return None
    reading = ran_reading(lineage)
    unnamed = inferred_steps(matches)
    if reading is not None:
        return ReadingSignals(score=confidence, shape=reading.graph.shape, unread=list(reading.unread),
                              unnamed=unnamed, steps=len(matches), described=reading.described,
                              inferred=reading.inferred, values=values)
    paths = lineage.ancestor(RelationPaths)
    return ReadingSignals(score=confidence, shape="path", unread=list(paths.unread) if paths else [],
                          unnamed=unnamed, steps=len(matches), described=bool(paths and paths.described),
                          values=values)


def _read_as(lineage: Lineage) -> str | None:
    """The reading behind the answer in words, where there is more to say than its relations: a
    shape's query graph, a described topic and what it was read as."""
    reading = ran_reading(lineage)
    if reading is not None:
        return reading.explanation or None
    paths = lineage.ancestor(RelationPaths)
    if paths is not None and paths.described_as:
        return f"{paths.best.explain() if paths.best else 'the chain'}, where {paths.described_as}"
    return None


def ran_reading(lineage: Lineage) -> GraphReading | None:
    """The query graph reading the decision maker ran: the one it filled from the model's template,
    else the generalist's own (None: a chain filling ran)."""
    result = lineage.ancestor(QueryResult)
    if result is not None and result.reading is not None:
        return result.reading
    template = lineage.ancestor(SparqlTemplate)
    return template.reading if template is not None else None


def _reading_failed(lineage: Lineage) -> str | None:
    """A query graph reading that returned nothing: another hop count cannot fix a count or a join."""
    reading = ran_reading(lineage)
    if reading is None:
        return None
    return f"the knowledge graph holds nothing for my reading of the question ({reading.explanation})"


_IRI = re.compile(r"<([^<>\s]+)>")


def own_entity_only(sparql: str, values: list[AnswerValue]) -> bool:
    """Every answer is an entity the query itself names: the reading walked back to the question's
    own topic ("which films did X write and direct" -> X), which is never what was asked."""
    iris = [v.iri for v in values]
    if not iris or None in iris:
        return False
    named = set(_IRI.findall(sparql))
    return all(i in named for i in iris)


def turns_at_a_shared_node(matches: list[RelationMatch]) -> bool:
    """The path goes in by one relation and out by another (or out, then in): it meets the topic
    again through a node both relations share ("films X wrote" -> "their director" = X), a join
    read as a chain. Two steps the same way round ("X's parent's child") walk a relation back,
    and the topic is then a fair answer."""
    return any(a.direction != b.direction for a, b in zip(matches, matches[1:], strict=False))


def _grounded(lineage: Lineage, triples: list[EvidenceTriple], values: list[AnswerValue],
              matches: list[RelationMatch]) -> bool:
    """Grounded as the chosen reading's graph says (a chain: triples reaching every value)."""
    reading = ran_reading(lineage)
    return reading_grounded(reading.graph if reading is not None else None, triples, values, matches)
