"""Missing info: what a branch lacks, and which new entity to expand next (never one expanded before).

The candidates are the entities the branch's facts name that are neither anchors nor expanded
yet, nearest the unbound premise first (the far ends of the bound triples). The step goes one
level deeper; past ``max_depth`` (or with no entity left) the axiom surfacer starts a new rule
instead. A model, when there is one, picks the entity among the listed ones (ids only).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence, one_line
from kgteam.protocols.payloads import Axiom, MissingInfo, SelectedFacts, Verdict
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, choose
from kgteam.roles.contract import handles


class MissingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model pick the entity to expand")
    max_candidates: int = Field(8, ge=1, le=30, description="entities offered")


class MissingInfoRole(Role[MissingSettings]):
    name: ClassVar[str] = "missing_info"
    prompts: ClassVar[tuple[str, ...]] = ("r3_next_entity",)
    deepens = (MissingInfo,)
    reads = (Axiom, SelectedFacts)

    @handles
    async def on_unknown(self, verdict: Verdict, ctx: RoleContext) -> MissingInfo:
        axiom = ctx.ancestor(Axiom)
        facts = ctx.ancestor(SelectedFacts)
        what = "; ".join(verdict.missing) or "a fact that binds the rule's premises"
        done = set(axiom.anchors if axiom else []) | set(facts.expanded if facts else [])
        seen: dict[str, str] = {}
        for t in (facts.triples if facts else []):
            for iri, label in ((t.object, t.object_label), (t.subject, t.subject_label)):
                if iri in done or (iri == t.object and t.object_is_literal):
                    continue
                seen.setdefault(iri, label or iri)
        candidates = list(seen.items())[: self.settings.max_candidates]
        if not candidates:
            return MissingInfo(description=f"missing {what}; no new entity to expand", next_entity=None)
        pick = candidates[0][0]
        if self.settings.use_model and len(candidates) > 1:
            options = [Option(key=iri, label=one_line(label), score=1.0 / (1 + i)) for i, (iri, label) in enumerate(candidates)]
            res = await choose(ctx, role=self.instance_name, decision="next_entity", prompt=self.prompt("r3_next_entity"),
                               options=options, k=1, values={"missing": fence(what, tag="missing"),
                                                             "axiom": fence(axiom.text if axiom else "", tag="axiom")})
            pick = res.chosen[0].key if res.chosen else pick
        return MissingInfo(description=f"missing {what}", next_entity=pick)
