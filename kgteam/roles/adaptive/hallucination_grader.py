"""Hallucination grader: does every value of a draft stand on a retrieved fact?

The rule runs always: each value must be written in a kept document or named by a triple of the
draft's evidence. A model, when there is one, may still reject a draft the rule passed (never
accept one it failed). A failing draft goes back to the generator without the unsupported
values, at most ``max_retries`` times.
"""

from __future__ import annotations

from typing import ClassVar

from kgteam.prompts import fence, one_line
from kgteam.protocols.payloads import Draft, Grade, RetryHint, RetrySignal
from kgteam.roles.adaptive.grading import GraderSettings, Verdict, facts_block, unsupported_values
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles


class HallucinationGrader(Role[GraderSettings]):
    name: ClassVar[str] = "hallucination_grader"
    prompts: ClassVar[tuple[str, ...]] = ("adaptive_supported",)
    informs = (Grade,)

    @handles
    async def on_draft(self, draft: Draft, ctx: RoleContext) -> list[Grade | RetrySignal]:
        missing = unsupported_values(draft) if draft.known else []
        verdict, reason = not missing, ("every value is in the retrieved facts" if not missing
                                        else f"not in any retrieved fact: {missing[:3]}")
        if verdict and draft.known and self.settings.use_model:
            res = await produce(ctx, role=self.instance_name, decision="supported", prompt=self.prompt("adaptive_supported"),
                                output=Verdict, validate=lambda _: None, fallback=lambda: None,
                                values={"question": fence(draft.question, tag="question"),
                                        "answer": fence(draft.text, tag="answer"), "facts": fence(facts_block(draft), tag="facts")},
                                max_tokens=96)
            if res.value is not None and not res.value.verdict:
                verdict, reason = False, f"the model found it unsupported: {one_line(res.value.reason)[:100]}"
                missing = [v.label for v in draft.values]
        grade = Grade(grader="hallucination", verdict=verdict, reason=reason, unsupported=missing)
        ctx.trace.record("grade", role=self.instance_name, grader="hallucination", verdict=verdict, reason=reason)
        if verdict:
            return [grade]
        return [grade, RetrySignal(phase="generation", reason="unsupported",
                                   hint=RetryHint(note=reason, exclude=missing), attempt=draft.attempt)]
