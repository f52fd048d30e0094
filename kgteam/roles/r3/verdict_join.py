"""Verdict join: the answer from every branch of the tree search.

A grounded True/False beats "I don't know"; grounded branches that agree give that answer with
the best-scored branch's evidence; grounded branches that disagree are reported as a conflict
("I don't know", both readings shown). Branches cut by a budget are listed on the answer.
"""

from __future__ import annotations

import re
from typing import ClassVar

from kgteam.protocols.evidence import Evidence, EvidenceAxiom
from kgteam.protocols.payloads import Anchors, Answer, AnswerValue, Axiom, Join, Verdict
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contract import handles
from kgteam.roles.r3.rules import unsure_names, verdict_label


def _evidence(v: Verdict, axioms: list[Axiom]) -> Evidence:
    rule = next((a for a in axioms if a.text == v.axiom), None)
    return Evidence(triples=list(v.triples), reasoning=list(v.reasoning),
                    axioms=[EvidenceAxiom(text=v.axiom, premises=list(rule.premises) if rule else [],
                                          query=rule.query if rule else "")] if v.axiom else [])


class VerdictJoin(Role):
    name: ClassVar[str] = "verdict_join"
    reads = (Anchors, Axiom)

    @handles
    async def on_join(self, join: Join, ctx: RoleContext) -> Answer:
        verdicts = [v for v in join.items if isinstance(v, Verdict)]
        return self.answer(verdicts, ctx)

    def answer(self, verdicts: list[Verdict], ctx: RoleContext) -> Answer:
        anchors = ctx.ancestor(Anchors)
        form = anchors.form if anchors else "yes_no"
        axioms = ctx.ancestors(Axiom)
        grounded = [v for v in verdicts if v.verdict in ("true", "false")]
        kinds = {v.verdict for v in grounded}
        if len(kinds) == 1:
            v = grounded[0]
            said = re.sub(r"\s*\[(t\d+|axiom)\]", "", v.reasoning[-1]) if v.reasoning else v.axiom
            said = re.sub(r"^so\s+", "", said)  # the reasoning's last step, stated on its own
            # a refutation read from the other entity's one value assumes the KG holds all of them
            assumed = v.verdict == "false" and any(a.sole_value and a.text == v.axiom for a in axioms)
            return Answer(text=f"{v.label[:1].upper()}{v.label[1:]}: {said}.",
                          values=[AnswerValue(label=v.label)], status="answered", grounded=bool(v.triples),
                          confidence=1.0 if len(grounded) == len(verdicts) and not assumed else 0.8,
                          evidence=_evidence(v, axioms))
        if len(kinds) > 1:
            sides = "; ".join(f"{v.label} by '{v.axiom}'" for v in grounded[:4])
            first = grounded[0]
            ev = _evidence(first, axioms)
            for other in grounded[1:]:
                ev.axioms += _evidence(other, axioms).axioms
            return Answer(text=f"I don't know: the rules disagree ({sides}).", status="unknown", grounded=False,
                          guess=[AnswerValue(label=first.label)], evidence=ev)
        why = "; ".join(dict.fromkeys(m for v in verdicts for m in v.missing)) or "no rule could be checked"
        label = verdict_label(form, "unknown")
        # "not enough info" is a verdict on a claim the team read, stated as such; an input it could not
        # read (no entity, names in lower case that any reading fits) is "I don't know"
        read = bool(anchors and anchors.anchors) and not unsure_names(anchors.question)
        if form == "claim" and read:
            # the rule's own certainty, as for a grounded verdict: every branch searched to its end, or not
            return Answer(text=f"Not enough info: {why}.", values=[AnswerValue(label=label)], status="answered",
                          grounded=False, confidence=1.0 if all(v.final for v in verdicts) else 0.8)
        return Answer(text=f"I don't know: {why}.", status="unknown", grounded=False)

    async def finalize(self, ctx: RoleContext, reason: str) -> Answer | None:
        """A run stopped early: the verdicts every branch reached so far."""
        found = [b.lineage.ancestor(Verdict) for b in ctx.run.branches]
        verdicts = [v for v in found if v is not None]
        if not verdicts:
            return None
        return self.answer(verdicts, ctx)
