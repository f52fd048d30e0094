"""Axiom surfacer: a general rule whose premises are facts the KG can check, without answering.

The deterministic rules come from ``claim_graph.claim_axioms``: the question's anchors and the
relation paths its words name, in one of the forms path, same, compare, count, or (a number the
claim writes) literal and tally; a negated claim's rule flips its verdict. The best rule
opens the first branch, with any rule within ``tie_margin`` of it as a sibling branch (readings
too close to call are all tried, and a join reports them if they disagree). A branch that ran out
of depth or of entities to expand asks for a new rule: the next one not tried yet opens a new
branch, within ``max_breadth``. A model, when there is one, votes on which listed rule comes first
(ids only): it states no rule of its own, so every premise stays checkable.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence, one_line
from kgteam.protocols.payloads import Anchors, Axiom, MissingInfo, Verdict
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, choose
from kgteam.roles.contract import handles
from kgteam.roles.r3.claim_graph import claim_axioms
from kgteam.roles.r3.rules import verdict_label
from kgteam.roles.semantic import SemanticLayer, SemanticSettings
from kgteam.roles.semantic.similarity import team_similarity


class AxiomSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model vote on which rule to try first")
    candidates: int = Field(4, ge=1, le=10, description="rules considered per question")
    tie_margin: float = Field(0.1, ge=0.0, le=2.0, description="rules this close to the best are tried side by side")
    hops: int = Field(3, ge=1, le=3, description="longest relation path a path rule may use")
    semantic: SemanticSettings = Field(default_factory=SemanticSettings, description="the path scorer's settings")


class AxiomSurfacer(Role[AxiomSettings]):
    name: ClassVar[str] = "axiom_surfacer"
    tools: ClassVar[tuple[str, ...]] = ("search_entities", "entity_schema", "neighbors", "run_sparql", "relation_names", "labels_for",
                                        "search_relations")
    prompts: ClassVar[tuple[str, ...]] = ("r3_axiom",)
    branches = (Axiom,)
    reads = (Anchors, Axiom)
    informs = (Verdict,)

    async def _candidates(self, anchors: Anchors, ctx: RoleContext) -> list[Axiom]:
        layer = SemanticLayer(ctx.tools, team_similarity(ctx.tools), self.settings.semantic)
        return await claim_axioms(layer, anchors.question, anchors.anchors, hops=self.settings.hops,
                                  keep=self.settings.candidates)

    def _nothing(self, anchors: Anchors, why: str) -> Verdict:
        return Verdict(verdict="unknown", label=verdict_label(anchors.form, "unknown"), axiom="", final=True,
                       missing=[why])

    @handles
    async def on_anchors(self, anchors: Anchors, ctx: RoleContext) -> list[Axiom | Verdict]:
        if anchors.form == "request":  # no rule decides "list ..."/"count ...": a True/False would answer nothing asked
            return [self._nothing(anchors, "it asks for values; this team decides claims and yes/no questions")]
        found = await self._candidates(anchors, ctx)
        if not found:
            why = "no entity the KG knows" if not anchors.anchors else "no rule over the KG's relations fits the question"
            return [self._nothing(anchors, why)]
        if self.settings.use_model and len(found) > 1:
            found = await self._vote(anchors.question, found, ctx)
        best = found[0].score or 0.0
        first = [a for a in found if (a.score or 0.0) >= best - self.settings.tie_margin] or found[:1]
        ctx.trace.record("axioms", role=self.instance_name, tried=[a.text for a in first],
                         later=[a.text for a in found[len(first):]])
        return list(first)

    @handles
    async def on_stuck(self, stuck: MissingInfo, ctx: RoleContext) -> list[Axiom | Verdict]:
        """A branch ran out of depth or entities: the next rule not tried yet opens a new branch."""
        anchors = ctx.ancestor(Anchors)
        if anchors is None:
            return []
        found = await self._candidates(anchors, ctx)
        best = (found[0].score or 0.0) if found else 0.0
        first_group = [a.text for a in found if (a.score or 0.0) >= best - self.settings.tie_margin]
        mine = [a.text for a in ctx.ancestors(Axiom)]
        fresh = [a for a in found if a.text not in set(mine) | set(first_group)]
        if not fresh:
            return [self._nothing(anchors, "every rule was tried: " + stuck.description)]
        # sibling branches that got stuck together each take a different next rule: the one at
        # their own place in the first group (a branch cannot see its siblings' choices)
        root = next((t for t in first_group if t in mine), None)
        place = first_group.index(root) if root is not None else 0
        return [fresh[min(place, len(fresh) - 1)]]

    async def _vote(self, question: str, found: list[Axiom], ctx: RoleContext) -> list[Axiom]:
        options = [Option(key=str(i), label=one_line(a.text), score=a.score or 0.0,
                          detail="; ".join(a.premises)) for i, a in enumerate(found)]
        res = await choose(ctx, role=self.instance_name, decision="axiom", prompt=self.prompt("r3_axiom"),
                           options=options, k=len(options), values={"question": fence(question, tag="question")})
        order = [int(o.key) for o in res.chosen]
        return [found[i] for i in order] + [a for i, a in enumerate(found) if i not in order]
