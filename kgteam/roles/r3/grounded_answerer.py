"""Grounded answerer: True / False / "I don't know" for one branch, from its listed facts only.

The rule's verdict is computed on the listed triples (``rules.decide``), never on the KG: True or
False only when every premise is bound to listed triples; the reasoning cites them by position
(``t0`` …) and the rule itself (``[axiom]``). A model, when there is one, may only abstain: it is
offered the rule's verdict and "I don't know", never the opposite verdict.
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence, one_line
from kgteam.protocols.payloads import Anchors, Axiom, SelectedFacts, Verdict
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, choose
from kgteam.roles.contract import handles
from kgteam.roles.r3.rules import decide, negated, verdict_label

_CITE = re.compile(r"\[t(\d+)\]")


class AnswererSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model abstain from the rule's verdict")


class GroundedAnswerer(Role[AnswererSettings]):
    name: ClassVar[str] = "grounded_answerer"
    prompts: ClassVar[tuple[str, ...]] = ("r3_answer",)
    reads = (Axiom, Anchors, SelectedFacts)

    @handles
    async def on_facts(self, facts: SelectedFacts, ctx: RoleContext) -> Verdict:
        axiom = ctx.ancestor(Axiom)
        anchors = ctx.ancestor(Anchors)
        form = anchors.form if anchors else "yes_no"
        if axiom is None:
            return Verdict(verdict="unknown", label=verdict_label(form, "unknown"), final=True, missing=["no rule"])
        decision = decide(axiom, facts.triples)
        if not facts.complete and not (decision.verdict == "true" and axiom.form in ("path", "same")):
            # a value not read may be the one that matters: only a match found among those read stands
            decision.verdict, decision.missing = "unknown", ["the KG holds more values than were read"]
            decision.reasoning, decision.cited = [], []
        if axiom.negated:  # "X was not ...": the facts that decide the rule decide the claim the other way
            decision = negated(decision)
        verdict = decision.verdict
        if verdict != "unknown" and self.settings.use_model:
            verdict = await self._confirm(axiom, decision.reasoning, verdict, ctx)
        # the evidence is the cited triples, renumbered in citing order
        order = list(dict.fromkeys(decision.cited))
        renumber = {old: new for new, old in enumerate(order)}
        reasoning = [_CITE.sub(lambda m: f"[t{renumber.get(int(m.group(1)), int(m.group(1)))}]", line)
                     for line in decision.reasoning]
        triples = [facts.triples[i] for i in order]
        if verdict == "unknown":
            return Verdict(verdict="unknown", label=verdict_label(form, "unknown"), axiom=axiom.text,
                           reasoning=reasoning if decision.verdict == "unknown" else [],
                           triples=triples if decision.verdict == "unknown" else [],
                           missing=decision.missing or ["the model would not commit to the rule's verdict"])
        return Verdict(verdict=verdict, label=verdict_label(form, verdict), axiom=axiom.text, reasoning=reasoning,
                       triples=triples, final=True)

    async def _confirm(self, axiom: Axiom, reasoning: list[str], verdict: str, ctx: RoleContext) -> str:
        options = [Option(key=verdict, label=f"{verdict}: the facts decide the rule", score=1.0),
                   Option(key="unknown", label="unknown: the facts do not decide it", score=0.0)]
        res = await choose(ctx, role=self.instance_name, decision="answer", prompt=self.prompt("r3_answer"),
                           options=options, k=1, ask_when_trivial=True,
                           values={"axiom": fence(axiom.text, tag="axiom"),
                                   "facts": fence("\n".join(one_line(r) for r in reasoning), tag="facts")})
        if res.source == "llm" and res.llm_picked == ["unknown"]:
            return "unknown"
        return verdict
