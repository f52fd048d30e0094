"""Schema filter: keep the relations the question may ask for, drop the rest, say when to stop.

The deterministic ranking is the semantic layer's path scorer (the question's words, the entity
mentions left out, against the relation labels: lexical and dense similarity). A model, when
there is one, votes on the offered paths and on whether the plan is long enough; its vote is
combined with the scores (``llm_weight``), so a weak model breaks near-ties and cannot drop a
path the words clearly name. The plan is sufficient at ``max_hops``, when the depth budget is
spent, or when the model says so.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from kgteam.llm.no_model import model_available
from kgteam.prompts import fence, one_line
from kgteam.protocols.payloads import PlannedPath, RetrievalPlan
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, options_block, produce
from kgteam.roles.contract import handles
from kgteam.roles.kerag.planning import Limits, filter_hop
from kgteam.roles.semantic import SemanticLayer
from kgteam.roles.semantic.similarity import team_similarity


class SchemaFilterSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model vote on kept paths and sufficiency")
    top_n: int = Field(10, ge=1, le=50, description="paths kept per topic mention at each hop")
    max_hops: int = Field(3, ge=1, le=3, description="the plan is sufficient at this many hops")
    max_offered: int = Field(12, ge=2, le=30, description="paths shown to the model")
    llm_weight: float = Field(0.3, ge=0.0, description="how much a model vote adds to a normalised score")
    max_repairs: int = Field(1, ge=0, le=3)


class SchemaFilter(Role[SchemaFilterSettings]):
    name: ClassVar[str] = "schema_filter"
    tools: ClassVar[tuple[str, ...]] = ("relation_names", "labels_for")
    prompts: ClassVar[tuple[str, ...]] = ("kerag_filter",)

    @handles
    async def on_plan(self, plan: RetrievalPlan, ctx: RoleContext) -> RetrievalPlan:
        layer = SemanticLayer(ctx.tools, team_similarity(ctx.tools))
        keep, drop = await filter_hop(layer, plan.question, plan.mentions, plan.kept, plan.candidates,
                                      Limits(top_n=self.settings.top_n))
        sufficient, reason = self._sufficient(plan, keep, ctx)
        if self.settings.use_model and model_available(ctx.model) and len(keep) + len(drop) > 0:
            keep, drop, said = await self._vote(plan, keep, drop, ctx)
            if said and not sufficient:
                sufficient, reason = True, "the model called the plan sufficient"
        ctx.trace.record("plan_filter", role=self.instance_name, hop=plan.hops, kept=[p.explain() for p in keep],
                         dropped=len(drop), sufficient=sufficient, reason=reason)
        return plan.model_copy(update={
            "stage": "filtered", "candidates": [], "kept": [*plan.kept, *keep],
            "relations_per_hop": [*plan.relations_per_hop, sorted({p.steps[-1].predicate for p in keep})],
            "dropped": [*plan.dropped, [p.explain() for p in drop]],
            "sufficient": sufficient, "reason": reason})

    def _sufficient(self, plan: RetrievalPlan, keep: list[PlannedPath], ctx: RoleContext) -> tuple[bool, str]:
        if plan.hops >= self.settings.max_hops:
            return True, f"{plan.hops} hop(s), the most this filter plans"
        if ctx.budgets.remaining("max_depth") < 1:
            return True, "the depth budget is spent"
        if not any(not p.literal_end for p in keep):
            return True, "every kept path ends at values"
        return False, "deeper paths may name the question better"

    async def _vote(self, plan: RetrievalPlan, keep: list[PlannedPath], drop: list[PlannedPath], ctx: RoleContext
                    ) -> tuple[list[PlannedPath], list[PlannedPath], bool]:
        """One model call: which offered paths to keep, and whether the plan may stop here."""
        ranked = [*keep, *drop]
        offered = ranked[: self.settings.max_offered]
        ids = [f"o{i}" for i in range(1, len(offered) + 1)]
        options = [Option(key=str(i), label=one_line(f"{p.mention}: {p.explain()}"), score=p.score,
                          detail=f"{p.count} facts" if p.count is not None else "") for i, p in enumerate(offered)]
        vote_model = create_model("FilterVote", keep=(list[Literal[tuple(ids)]], Field(default_factory=list,  # type: ignore[valid-type]
                                                                                        max_length=len(ids))),
                                  sufficient=(bool, False))
        res = await produce(ctx, role=self.instance_name, decision="filter", prompt=self.prompt("kerag_filter"),
                            output=vote_model, validate=lambda _: None, fallback=lambda: None,
                            values={"question": fence(plan.question, tag="question"), "hop": plan.hops,
                                    "max_hops": self.settings.max_hops, "options": options_block(options),
                                    "k": self.settings.top_n},
                            max_repairs=self.settings.max_repairs, max_tokens=128)
        if res.value is None:
            return keep, drop, False
        picked = {ids.index(i) for i in res.value.keep}
        top, low = max(p.score for p in offered), min(p.score for p in offered)
        span = (top - low) or 1.0
        order = sorted(range(len(ranked)), key=lambda i: -((ranked[i].score - low) / span
                                                             + (self.settings.llm_weight if i in picked else 0.0)))
        per_topic: dict[str, int] = {}
        kept, dropped = [], []
        for i in order:
            path = ranked[i]
            n = per_topic.get(path.mention, 0)
            (kept if n < self.settings.top_n else dropped).append(path)
            per_topic[path.mention] = n + 1
        return kept, dropped, bool(res.value.sufficient)
