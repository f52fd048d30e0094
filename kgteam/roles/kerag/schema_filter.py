"""Schema filter: keep the relations the question may ask for, drop the rest, say when to stop.

The deterministic ranking is the semantic layer's path scorer (the question's words, the entity
mentions left out, against the relation labels: lexical and dense similarity). A model, when
there is one, sees the paths around each mention's cut and may swap which of them are kept, so
it breaks near-ties and cannot drop a path the words clearly name; it also says whether the plan
is long enough, which holds only when the best path so far names every content word. The plan
is sufficient at ``max_hops``, when the depth budget is spent, when no kept path goes further,
or on the model's checked word.
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
from kgteam.roles.semantic import SemanticLayer, SemanticSettings
from kgteam.roles.semantic.path_planning import Limits, filter_hop, words_left
from kgteam.roles.semantic.similarity import team_similarity


class SchemaFilterSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model vote on kept paths and sufficiency")
    top_n: int = Field(10, ge=1, le=50, description="paths kept per topic mention at each hop")
    max_hops: int = Field(3, ge=1, le=3, description="the plan is sufficient at this many hops")
    max_offered: int = Field(12, ge=2, le=30, description="paths shown to the model")
    swing: int = Field(3, ge=1, le=10, description="paths on each side of a mention's cut the model may swap")
    max_repairs: int = Field(1, ge=0, le=3, description="repairs asked after an invalid model reply")
    semantic: SemanticSettings = Field(default_factory=SemanticSettings, description="the path scorer's settings")


class SchemaFilter(Role[SchemaFilterSettings]):
    name: ClassVar[str] = "schema_filter"
    tools: ClassVar[tuple[str, ...]] = ("relation_names", "labels_for")
    prompts: ClassVar[tuple[str, ...]] = ("kerag_filter",)

    @handles
    async def on_plan(self, plan: RetrievalPlan, ctx: RoleContext) -> RetrievalPlan:
        layer = SemanticLayer(ctx.tools, team_similarity(ctx.tools), self.settings.semantic)
        keep, drop = await filter_hop(layer, plan.question, plan.mentions, plan.kept, plan.candidates,
                                      Limits(top_n=self.settings.top_n))
        sufficient, reason = self._sufficient(plan, keep, ctx)
        if self.settings.use_model and model_available(ctx.model):
            keep, drop, said = await self._vote(plan, keep, drop, ctx)
            if said and not sufficient:
                sufficient, reason = self._model_says_sufficient(plan, [*plan.kept, *keep])
        ctx.trace.record("plan_filter", role=self.instance_name, hop=plan.hops, kept=[p.explain() for p in keep],
                         dropped=len(drop), sufficient=sufficient, reason=reason)
        return plan.model_copy(update={
            "stage": "filtered", "candidates": [], "kept": [*plan.kept, *keep],
            "relations_per_hop": [*plan.relations_per_hop, sorted({p.steps[-1].predicate for p in keep})],
            "dropped": [*plan.dropped, [p.explain() for p in drop]],
            "sufficient": sufficient, "reason": reason})

    def _sufficient(self, plan: RetrievalPlan, keep: list[PlannedPath], ctx: RoleContext) -> tuple[bool, str]:
        if not keep and not plan.kept:
            return True, "no relation around the question's entities"
        if plan.hops >= self.settings.max_hops:
            return True, f"{plan.hops} hop(s), the most this filter plans"
        if ctx.budgets.remaining("max_depth") < 1:
            return True, "the depth budget is spent"
        if not any(not p.literal_end for p in keep):
            return True, "every kept path ends at values"
        return False, "deeper paths may name the question better"

    @staticmethod
    def _model_says_sufficient(plan: RetrievalPlan, kept: list[PlannedPath]) -> tuple[bool, str]:
        """The model's "long enough" holds only when the best path so far names every content word of
        the question (topics and question words aside); otherwise a deeper hop may still name one,
        and the plan goes on."""
        best = max(kept, key=lambda p: p.score, default=None)
        left = words_left(plan.question, plan.mentions, best) if best is not None else ["?"]
        if not left:
            return True, "the model called the plan sufficient, and its best path names every word"
        return False, f"the model called the plan sufficient, but its best path leaves words unexplained: {left[:3]}"

    async def _vote(self, plan: RetrievalPlan, keep: list[PlannedPath], drop: list[PlannedPath], ctx: RoleContext
                    ) -> tuple[list[PlannedPath], list[PlannedPath], bool]:
        """One model call on the paths around each mention's cut (the ``swing`` last kept and first
        dropped): the ones it picks are kept first. No call when no path is near a cut."""
        ranked = [*keep, *drop]
        swing = self.settings.swing
        per_topic: dict[str, list[PlannedPath]] = {}
        for p in sorted(ranked, key=lambda p: -p.score):
            per_topic.setdefault(p.mention, []).append(p)
        contested = [p for group in per_topic.values()
                     for p in group[max(0, self.settings.top_n - swing): self.settings.top_n + swing]
                     if len(group) > self.settings.top_n - swing][: self.settings.max_offered]
        if len(contested) < 2:
            return keep, drop, False
        ids = [f"o{i}" for i in range(1, len(contested) + 1)]
        options = [Option(key=str(i), label=one_line(f"{p.mention}: {p.explain()}"), score=p.score,
                          detail=f"{p.count} facts" if p.count is not None else "") for i, p in enumerate(contested)]
        vote_model = create_model("FilterVote", keep=(list[Literal[tuple(ids)]], Field(default_factory=list,  # type: ignore[valid-type]
                                                                                        max_length=len(ids))),
                                  sufficient=(bool, False))
        res = await produce(ctx, role=self.instance_name, decision="filter", prompt=self.prompt("kerag_filter"),
                            output=vote_model, validate=lambda _: None, fallback=lambda: None,
                            values={"question": fence(plan.question, tag="question"), "hop": plan.hops,
                                    "max_hops": self.settings.max_hops, "options": options_block(options),
                                    "k": swing},
                            max_repairs=self.settings.max_repairs, max_tokens=128)
        if res.value is None:
            return keep, drop, False
        picked = {id(contested[ids.index(i)]) for i in res.value.keep}
        kept, dropped = [], []
        for group in per_topic.values():
            fixed = group[: max(0, self.settings.top_n - swing)]
            rest = sorted(group[len(fixed):], key=lambda p: (id(p) not in picked, -p.score))
            room = self.settings.top_n - len(fixed)
            kept += [*fixed, *rest[:room]]
            dropped += rest[room:]
        ctx.trace.record("filter_vote", role=self.instance_name, picked=[p.explain() for p in contested
                                                                         if id(p) in picked])
        return kept, dropped, bool(res.value.sufficient)
