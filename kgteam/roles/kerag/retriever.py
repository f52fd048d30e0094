"""Retriever: run the sufficient plan as read-only queries and hand over the sub-graph.

The best kept paths of each topic mention are executed (their end values, and the triples that
walk them, within ``triple_budget``); several topic entities also get joined readings. No model
is involved: what is fetched is decided by the plan.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.protocols.payloads import RetrievalPlan, Subgraph
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contract import handles
from kgteam.roles.kerag.retrieval import retrieve
from kgteam.roles.semantic import SemanticLayer, SemanticSettings
from kgteam.roles.semantic.path_planning import Limits
from kgteam.roles.semantic.similarity import team_similarity


class RetrieverSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    executed: int = Field(6, ge=1, le=30, description="best paths run per topic mention (per mention and path "
                                                        "length with several mentions)")
    triple_budget: int = Field(300, ge=1, le=10_000, description="triples fetched, all paths together")
    semantic: SemanticSettings = Field(default_factory=SemanticSettings, description="the path scorer's settings")


class Retriever(Role[RetrieverSettings]):
    name: ClassVar[str] = "retriever"
    tools: ClassVar[tuple[str, ...]] = ("run_sparql", "labels_for", "relation_names")

    @handles
    async def on_plan(self, plan: RetrievalPlan, ctx: RoleContext) -> Subgraph:
        if not plan.kept:
            return Subgraph(triples=[], source="kerag", reason=plan.reason or "the plan kept no path",
                            question=plan.question)
        layer = SemanticLayer(ctx.tools, team_similarity(ctx.tools), self.settings.semantic)
        graph = await retrieve(layer, plan.question, plan.mentions, plan.kept,
                               Limits(executed=self.settings.executed, triple_budget=self.settings.triple_budget),
                               plan.combine)
        ctx.trace.record("retrieved", role=self.instance_name, triples=len(graph.triples), paths=len(graph.paths),
                         readings=len(graph.readings), truncated=graph.truncated)
        return graph
