"""Answer grader: does the draft answer the question? It writes the run's answer.

A draft answers when it names a value (a model, when there is one, may still say it does not).
When a kept document writes another value where it says what is asked, and never the answer
there (``reading.contested_by``), the answer is not grounded and says at most 0.5.
When it does not and retries remain, the query rewriter searches again; otherwise the answer is
"I don't know", with the route taken, the evidence and the proposed triples kept.
"""

from __future__ import annotations

from typing import ClassVar

from kgteam.prompts import fence, one_line
from kgteam.protocols.payloads import (
    Answer,
    Documents,
    Draft,
    Grade,
    GradedDocuments,
    RetryHint,
    RetrySignal,
    mapped_by,
)
from kgteam.roles.adaptive.grading import GraderSettings, Verdict, unsupported_values
from kgteam.roles.adaptive.reading import contested_by
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles
from kgteam.roles.wording import answer_list

CONTESTED_CONFIDENCE = 0.5  # an answer a read document contradicts is at best a coin toss


class AnswerGrader(Role[GraderSettings]):
    name: ClassVar[str] = "answer_grader"
    prompts: ClassVar[tuple[str, ...]] = ("adaptive_answers",)
    reads = (Draft, Documents, GradedDocuments)
    informs = (Grade,)

    @handles
    async def on_grade(self, passed: Grade, ctx: RoleContext) -> list[Grade | Answer | RetrySignal]:
        draft = ctx.ancestor(Draft)
        if draft is None:
            return [Answer(text="I don't know.", status="unknown")]
        answers, reason = draft.known and bool(draft.values), (
            "it names an answer" if draft.known and draft.values else "it does not name an answer")
        if answers and self.settings.use_model:
            res = await produce(ctx, role=self.instance_name, decision="answers", prompt=self.prompt("adaptive_answers"),
                                output=Verdict, validate=lambda _: None, fallback=lambda: None,
                                values={"question": fence(draft.question, tag="question"),
                                        "answer": fence(draft.text, tag="answer")}, max_tokens=96)
            if res.value is not None and not res.value.verdict:
                answers, reason = False, f"the model says it does not answer: {one_line(res.value.reason)[:100]}"
        grade = Grade(grader="answer", verdict=answers, reason=reason)
        ctx.trace.record("grade", role=self.instance_name, grader="answer", verdict=answers, reason=reason)
        if not answers and "web" in draft.sources and ctx.budgets.remaining("max_retries") > 0:
            docs = ctx.ancestor(Documents)
            return [grade, RetrySignal(phase="retrieval", reason="grader_no",
                                       hint=RetryHint(note=reason, exclude=docs.queries if docs else []),
                                       attempt=draft.attempt)]
        return [grade, self.final(draft, answers)]

    @staticmethod
    def final(draft: Draft, answers: bool) -> Answer:
        evidence = draft.evidence
        if answers:
            others = contested_by(draft.question, [v.label for v in draft.values], evidence.documents)
            if others:  # the documents name something else where they say what is asked: not a grounded, sure answer
                return Answer(text=f"{draft.text} But a document names {answer_list(others, 3)} where it says what "
                                   "is asked.", values=draft.values, status="answered", grounded=False,
                              confidence=min(draft.confidence, CONTESTED_CONFIDENCE), evidence=evidence,
                              route=draft.route, proposals=draft.proposals)
            return Answer(text=draft.text,
                          values=draft.values, status="answered", grounded=True, confidence=draft.confidence,
                          evidence=evidence, route=draft.route, proposals=draft.proposals, **mapped_by(draft.kg_map))
        text = draft.text if not draft.known else "I don't know: the draft did not answer the question."
        return Answer(text=text, status="unknown", grounded=False, evidence=evidence, route=draft.route,
                      proposals=draft.proposals, guess=draft.values)

    async def finalize(self, ctx: RoleContext, reason: str) -> Answer | None:
        """A run stopped early: the last draft any branch made that passed the rule, else nothing."""
        for branch in reversed(ctx.run.branches):
            draft = branch.lineage.ancestor(Draft)
            if draft is not None:
                ok = draft.known and bool(draft.values) and not unsupported_values(draft)
                return self.final(draft, ok)
        return None
