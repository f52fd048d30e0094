"""Answer writer: the answer from the fixed graph, never from an unverified pseudo-triple.

A precise question gets the values at the answer end of the facts (verified, replaced or added
real triples). An open-ended one gets a short text where every sentence cites the facts it
states (``[tN]``): the model writes it when there is one, checked sentence by sentence (a
sentence citing nothing, citing no fact, or not naming what it cites is refused), else the
facts are written out one sentence per subject and relation.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.llm.fencing import fence, one_line
from kgteam.llm.no_model import model_available
from kgteam.protocols.evidence import CheckedTriple, Evidence, EvidenceTriple
from kgteam.protocols.payloads import Answer, FixedGraph, PseudoGraph, VerifiedGraph, mapped_by
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import fallback_keys, produce
from kgteam.roles.contract import handles
from kgteam.roles.pgakv.writing import answer_values, cited_sentences, sentence_supported, sentences_of
from kgteam.roles.wording import answer_list


class WriterSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model write open-ended answers (each sentence checked)")
    min_confidence: float = Field(0.5, ge=0.0, le=1.0, description="below this a precise answer is 'I don't know' "
                                  "with the best guess kept")
    max_listed: int = Field(25, ge=1, description="answer labels listed in the text")
    max_sentences: int = Field(6, ge=1, le=30, description="sentences of an open-ended answer")
    max_repairs: int = Field(1, ge=0, le=3, description="repairs asked after an invalid model reply")


class WrittenText(BaseModel):
    text: str = Field(max_length=3000)


def pseudo_view(graph: PseudoGraph, fixed: FixedGraph) -> list[CheckedTriple]:
    """Each pseudo-triple with what the fixer made of it, for the answer's evidence."""
    status: dict[int, str] = {}
    for t in fixed.triples:
        if t.pseudo is not None and status.get(t.pseudo) != "verified":
            status[t.pseudo] = t.status
    for i in fixed.deleted:
        status[i] = "deleted"
    return [CheckedTriple(subject=t.subject_iri or t.subject, predicate=t.predicate_iri or t.predicate,
                          object=t.object_iri or t.object, object_is_literal=t.object_is_literal,
                          subject_label=t.subject, predicate_label=t.predicate, object_label=t.object,
                          status=status.get(i, "unverified")) for i, t in enumerate(graph.triples)]


class AnswerWriter(Role[WriterSettings]):
    name: ClassVar[str] = "answer_writer"
    prompts: ClassVar[tuple[str, ...]] = ("pgakv_answer",)
    reads = (PseudoGraph, VerifiedGraph)

    @handles
    async def on_fixed(self, fixed: FixedGraph, ctx: RoleContext) -> Answer:
        graph = ctx.ancestor(PseudoGraph) or PseudoGraph(triples=[])
        facts = fixed.facts()
        triples: list[EvidenceTriple] = [f.triple for f in facts]
        evidence = Evidence(triples=triples, pseudo_graph=pseudo_view(graph, fixed))
        fallbacks = fallback_keys(getattr(ctx.trace, "events", []))
        reading = "; ".join(graph.plan) or None  # the facts the generator looked for, in words
        if graph.open_ended:
            return await self._open(graph, triples, evidence, ctx)
        values = answer_values(graph, facts)
        if not values:
            why = graph.plan[0] if graph.plan and not graph.triples else "no pseudo-triple of the answer was verified"
            return Answer(text=f"I don't know: {why}.", status="unknown", grounded=False, evidence=evidence,
                          fallbacks=fallbacks, reading=reading)
        answered = [f for f in facts if f.pseudo is not None and graph.triples[f.pseudo].answer_end]
        confidence = graph.confidence if graph.source == "reading" else round(
            min(1.0, max(0.0, sum(f.score for f in answered) / len(answered))), 4)
        names = [v.label for v in values]
        mapped = mapped_by(graph.kg_map if graph.source == "reading" else None)
        if confidence < self.settings.min_confidence:
            why = next((p for p in graph.plan if p.startswith("the reading leaves out")), "my best reading is not "
                       "certain enough")
            return Answer(text=f"I don't know: {why}. Best guess: "
                               f"{answer_list(names, 5)}.", status="unknown", grounded=False, confidence=confidence,
                          guess=values, evidence=evidence, fallbacks=fallbacks, reading=reading, **mapped)
        return Answer(text=answer_list(names, self.settings.max_listed), values=values, status="answered",
                      grounded=True, confidence=confidence, evidence=evidence, fallbacks=fallbacks, reading=reading,
                      **mapped)

    async def _open(self, graph: PseudoGraph, triples: list[EvidenceTriple], evidence: Evidence,
                    ctx: RoleContext) -> Answer:
        if not triples:
            return Answer(text="I don't know: none of the facts I looked for is in the knowledge graph.",
                          status="unknown", grounded=False, evidence=evidence)
        text = " ".join(cited_sentences(triples, max_sentences=self.settings.max_sentences))
        if self.settings.use_model and model_available(ctx.model):
            def validate(out: WrittenText) -> str | None:
                bad = [s for s in sentences_of(out.text) if not sentence_supported(s, triples)]
                if not sentences_of(out.text):
                    return "write at least one sentence"
                return (f"every sentence must cite the facts it states as [tN] and name their subject and object; "
                        f"not so: {[one_line(s)[:80] for s in bad[:2]]}") if bad else None

            facts = "\n".join(f"t{n}: {one_line(t.readable())}" for n, t in enumerate(triples))
            res = await produce(ctx, role=self.instance_name, decision="answer", prompt=self.prompt("pgakv_answer"),
                                output=WrittenText, validate=validate, fallback=lambda: None,
                                values={"question": fence(graph.question, tag="question"),
                                        "facts": fence(facts, tag="facts"), "max_sentences": self.settings.max_sentences},
                                max_repairs=self.settings.max_repairs, max_tokens=384)
            if res.value is not None:
                text = " ".join(one_line(s) for s in sentences_of(res.value.text))
        return Answer(text=text, status="answered", grounded=True, confidence=1.0, evidence=evidence,
                      fallbacks=fallback_keys(getattr(ctx.trace, "events", [])))
