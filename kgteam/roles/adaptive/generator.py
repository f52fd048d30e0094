"""Generator: the answer from the graph's answer and the kept documents, or "I don't know".

The graph route passes the graph sub-team's answer through when it is one; when the graph does
not know, the question goes to the documents instead. On "both" the graph's answer is kept and
the documents are searched. From documents the answer is a name they write next to the
question's words (``reading.answer_candidates``); with a graph answer as well, the values both
agree on come first (the graph narrows what the text picks), then a name the documents single
out (the question named something the graph does not know, so its answer may ignore it), then
the graph's answer. A model, when there is one, may
choose among those listed candidates (ids only): it never writes a value of its own. The text
is at most three sentences and cites its documents; below ``min_score`` it is "I don't know".
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence, one_line
from kgteam.protocols.evidence import Evidence, EvidenceDocument
from kgteam.protocols.payloads import (
    Answer,
    AnswerValue,
    Draft,
    GradedDocuments,
    Question,
    RetrySignal,
    RouteDecision,
    kg_map_of,
)
from kgteam.roles.adaptive.answer_kind import asked_kind
from kgteam.roles.adaptive.bridge import Bridged, kg_from_documents
from kgteam.roles.adaptive.reading import (
    Candidate,
    answer_candidates,
    content_words,
    contested_by,
    question_names,
)
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, choose
from kgteam.roles.contract import handles
from kgteam.roles.semantic import SemanticLayer
from kgteam.roles.semantic.similarity import team_similarity
from kgteam.roles.semantic.text import normalise
from kgteam.roles.semantic.topics import find_topics
from kgteam.roles.wording import answer_list


class GeneratorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model choose among the listed candidates")
    min_score: float = Field(0.2, ge=0.0, le=1.0, description="a text answer needs this score, else \"I don't know\"")
    min_margin: float = Field(0.05, ge=0.0, le=1.0, description="lead over the next candidate a text answer needs")
    max_listed: int = Field(10, ge=1, le=100, description="values written in the answer's text")


def _quote(sentence: str, limit: int = 160) -> str:
    s = one_line(sentence)
    return s if len(s) <= limit else s[: limit - 1] + "…"


_LITERAL_VALUE = re.compile(r"^-?[\d.,:/ -]+(?:T[\d:.Z+-]+)?$")  # a number, a year or a date written out


def fits_kind(values: list[AnswerValue], kind: str) -> bool:
    """Do graph values answer the kind asked? A literal date or number does not answer "who"/"which"."""
    if kind != "entity":
        return True
    return not all(v.iri is None and _LITERAL_VALUE.match(v.label.strip()) for v in values)


def _writes_any(kept: list[EvidenceDocument], doc_id: str, things: list[str]) -> bool:
    doc = next((d for d in kept if d.id == doc_id), None)
    if doc is None:
        return False
    words = set(content_words(f"{doc.title or ''} {doc.text}"))
    return any(set(content_words(t)) <= words for t in things)


class Generator(Role[GeneratorSettings]):
    name: ClassVar[str] = "generator"
    # the kind asked (answer_kind) and the way from the documents back into the KG (bridge)
    tools: ClassVar[tuple[str, ...]] = ("search_relations", "run_sparql", "search_entities", "entity_schema",
                                        "relation_names", "labels_for")
    prompts: ClassVar[tuple[str, ...]] = ("adaptive_generate",)
    reads = (Question, Answer, Draft, GradedDocuments, RouteDecision)

    @handles
    async def on_graph_answer(self, answer: Answer, ctx: RoleContext) -> Draft | RouteDecision:
        # the router's question carries the route; the sub-team's own copies of it may not
        routed = [q for q in ctx.ancestors(Question) if q.route is not None]
        asked = routed[0] if routed else ctx.ancestor(Question)
        question = asked.text if asked else ""
        route = (asked.route if asked else None) or "kg"
        knows = answer.status == "answered" and bool(answer.values)
        if route == "kg" and knows:
            return Draft(question=question, text=answer.text, values=answer.values, evidence=answer.evidence,
                         confidence=answer.confidence or 0.0, kg_map=kg_map_of(answer), known=True, sources=["kg"],
                         route="kg")
        if route == "kg":
            return RouteDecision(route="web", fallback=True, question=question,
                                 reason=f"the KG did not know ({one_line(answer.text)[:80]}); searching documents")
        said = f"the KG answered {answer_list([v.label for v in answer.values], 3)}" if knows else "the KG did not know"
        return RouteDecision(route="both", question=question, reason=f"{said}; documents finish or check it")

    @handles
    async def on_documents(self, graded: GradedDocuments, ctx: RoleContext) -> Draft:
        return await self._draft(graded, ctx, exclude=[], attempt=1)

    @handles
    async def on_retry(self, signal: RetrySignal, ctx: RoleContext) -> Draft:
        graded = ctx.ancestor(GradedDocuments)
        last = ctx.ancestor(Draft)
        if graded is None:
            return Draft(question=last.question if last else "", text="I don't know.", known=False)
        return await self._draft(graded, ctx, exclude=signal.hint.exclude, attempt=(last.attempt + 1) if last else 2)

    async def _draft(self, graded: GradedDocuments, ctx: RoleContext, *, exclude: list[str], attempt: int) -> Draft:
        question = graded.question
        graph = ctx.ancestor(Answer)
        decision = ctx.ancestor(RouteDecision)
        route = decision.route if decision else "web"
        graph_values = graph.values if graph is not None and graph.status == "answered" else []
        dropped = {normalise(x) for x in exclude}
        kind = await asked_kind(question, ctx.tools)  # a number for "the population of", a date for "when"
        if route == "both" and graph_values and not fits_kind(graph_values, kind):
            graph_values = []  # "who founded the observatory": a founding date is not who
        cands = [c for c in answer_candidates(question, graded.kept, limit=10, kind=kind)
                 if normalise(c.text) not in dropped]
        things = [t for d in ctx.ancestors(RouteDecision) for t in d.signals.get("unknown_things", [])]
        if things:  # the answer must come from a document that writes the thing the KG does not know
            about = {c.document for c in cands if _writes_any(graded.kept, c.document, things)}
            cands = [c for c in cands if c.document in about]
        if route == "both" and not graph_values:
            bridged = await self._bridge(question, graded.kept, ctx)
            if bridged is not None:
                return self._bridged_draft(question, bridged, graded, route, attempt)
        in_graph = {normalise(v.label): v for v in graph_values}
        agreed = [c for c in cands if normalise(c.text) in in_graph]
        chosen: list[Candidate] = []
        how = ""
        if agreed:  # first the graph value the documents write where they say what is asked, if another was first
            others = {normalise(x) for x in contested_by(question, [agreed[0].text], graded.kept, kind=kind)}
            chosen = ([c for c in agreed if normalise(c.text) in others] or agreed)[:1]
            how = "the graph's answers narrowed by the documents"
        elif cands and cands[0].score >= self.settings.min_score and (
                len(cands) == 1 or cands[0].score - cands[1].score >= self.settings.min_margin):
            chosen, how = cands[:1], "read from the documents"
        if self.settings.use_model and len(cands) > 1 and chosen:  # a model may reorder, never turn "I don't know" into a name
            chosen, how = await self._vote(question, cands, agreed, chosen, how, ctx)
        evidence = Evidence(documents=self._cited(graded.kept, chosen),
                            triples=list(graph.evidence.triples) if graph is not None else [],
                            queries=list(graph.evidence.queries) if graph is not None else [])
        sources = (["kg"] if graph_values else []) + ["web"]
        if chosen:
            values = [in_graph.get(normalise(c.text)) or AnswerValue(label=c.text) for c in chosen]
            top = chosen[0]
            doc = next((d for d in graded.kept if d.id == top.document), None)
            where = f" (from {_quote(doc.title or doc.id, 80)})" if doc else ""
            text = f"{answer_list([v.label for v in values], self.settings.max_listed)}{where}."
            confidence = min(1.0, 0.5 + top.score) if agreed or how.startswith("read") else 0.5
            return Draft(question=question, text=text, values=values, evidence=evidence, confidence=round(confidence, 3),
                         known=True, sources=sources, proposals=graded.proposals, route=route, attempt=attempt)
        if graph_values and graph is not None and not things:  # the documents add nothing: the graph's answer stands
            # (not when the question asks about a thing the KG does not know: the graph answered about its neighbour)
            return Draft(question=question, text=graph.text, values=graph_values, evidence=evidence,
                         confidence=graph.confidence or 0.0, kg_map=kg_map_of(graph), known=True, sources=["kg"],
                         proposals=graded.proposals,
                         route=route, attempt=attempt)
        why = "no document names an answer next to the question's words" if not cands else (
            f"the documents do not single out one answer ({', '.join(c.text for c in cands[:3])})")
        return Draft(question=question, text=f"I don't know: {why}.", known=False, evidence=evidence,
                     sources=sources, proposals=graded.proposals, route=route, attempt=attempt)

    async def _bridge(self, question: str, kept: list[EvidenceDocument], ctx: RoleContext) -> Bridged | None:
        """Documents → KG, only for a question that names no KG entity: the names it writes that the
        KG does not know are what the documents must place."""
        if any(t.firm and any(c.isupper() for c in t.text)
               for t in await find_topics(question, ctx.tools, exact_only=True)):
            return None  # a KG name in the question: the graph was asked from there already
        unknown = question_names(question)
        layer = SemanticLayer(ctx.tools, team_similarity(ctx.tools))
        return await kg_from_documents(question, unknown, kept, ctx.tools, layer)

    def _bridged_draft(self, question: str, bridged: Bridged, graded: GradedDocuments, route: str,
                       attempt: int) -> Draft:
        docs = sorted(graded.kept, key=lambda d: d.id != bridged.document)
        text = (f"{answer_list([v.label for v in bridged.values], self.settings.max_listed)}: the documents place it "
                f"at {bridged.entity} (\"{_quote(bridged.sentence, 120)}\"), and the KG gives {bridged.path} from there.")
        evidence = Evidence(documents=docs, triples=bridged.triples)
        return Draft(question=question, text=text, values=bridged.values, evidence=evidence,
                     confidence=round(min(0.9, 0.5 + 0.25 * bridged.score), 3), known=True, sources=["web", "kg"],
                     proposals=graded.proposals, route=route, attempt=attempt)  # type: ignore[arg-type]

    async def _vote(self, question: str, cands: list[Candidate], agreed: list[Candidate], chosen: list[Candidate],
                    how: str, ctx: RoleContext) -> tuple[list[Candidate], str]:
        """One model call among the listed candidates (ids only), only when the rule already found an
        answer. Where the graph and the text agree the model cannot override that; otherwise its
        pick among the names near the top (``min_score`` and above) is taken."""
        if agreed:
            return chosen, how
        options = [Option(key=str(i), label=one_line(c.text), score=c.score, detail=_quote(c.sentence, 200))
                   for i, c in enumerate(cands[:8])]
        res = await choose(ctx, role=self.instance_name, decision="generate", prompt=self.prompt("adaptive_generate"),
                           options=options, k=1, ask_when_trivial=True,
                           values={"question": fence(question, tag="question")})
        if res.source == "llm" and res.llm_picked:
            pick = cands[int(res.llm_picked[0])]
            if pick.score >= self.settings.min_score:
                return [pick], "chosen by the model among the documents' names"
        return chosen, how

    @staticmethod
    def _cited(kept: list[EvidenceDocument], chosen: list[Candidate]) -> list[EvidenceDocument]:
        first = {c.document for c in chosen}
        return sorted(kept, key=lambda d: d.id not in first)
