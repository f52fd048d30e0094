"""Atomic verifier: every pseudo-triple retrieves its top similar real triples from every KG source,
then the retrieved subjects are pruned (most frequent k, then a calibrated similarity floor)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.protocols.payloads import PseudoGraph, VerifiedGraph
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contract import handles
from kgteam.roles.pgakv.verification import EmbedBudget, calibrated_threshold, prune, retrieve_all
from kgteam.roles.semantic.similarity import team_similarity


def team_sources(ctx: RoleContext) -> list[tuple[str, Any]]:
    """The KGs the verifier retrieves from, as (name, tools): today the team's one KG."""
    return [("kg", ctx.tools)]


def embedder_name() -> str | None:
    from kgteam.tools.embedding import default_embedder

    emb = default_embedder()
    return getattr(emb, "name", None) if emb is not None else None


class VerifierSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    k: int = Field(10, ge=1, le=100, description="similar real triples retrieved per pseudo-triple and KG")
    per_entity: int = Field(200, ge=1, le=5000, description="neighbourhood triples embedded per linked entity "
                            "(KGs without a vector index)")
    threshold: float | None = Field(None, ge=-1.0, le=1.0, description="mean similarity under which a subject is "
                                    "dropped (default: the value calibrated for the team's embedder)")


class AtomicVerifier(Role[VerifierSettings]):
    name: ClassVar[str] = "atomic_verifier"
    tools: ClassVar[tuple[str, ...]] = ("similar_triples", "neighbors", "search_entities", "run_sparql")

    @handles
    async def on_pseudo_graph(self, graph: PseudoGraph, ctx: RoleContext) -> VerifiedGraph:
        limits = ctx.budgets.limits
        budget = EmbedBudget(max_triples=limits.max_embed_triples, timeout_s=limits.embed_timeout_s)
        threshold = self.settings.threshold if self.settings.threshold is not None else calibrated_threshold(embedder_name())
        checks, retrievers = await retrieve_all(graph, team_sources(ctx), team_similarity(ctx.tools), budget,
                                                k=self.settings.k, per_entity=self.settings.per_entity)
        pruned, kept, dropped = prune(checks, len(graph.subjects()), threshold)
        out = VerifiedGraph(checks=pruned, kept_subjects=kept, dropped=dropped, threshold=threshold,
                            sources=[r.name for r in retrievers], on_the_fly=[r.name for r in retrievers if r.on_the_fly],
                            embedded=budget.embedded, truncated=budget.truncated)
        ctx.trace.record("atomic_verification", role=self.instance_name, kept=len(kept), dropped=len(dropped),
                         embedded=budget.embedded, truncated=budget.truncated, threshold=threshold)
        return out
