"""Fact selector: the KG triples a branch may reason with, listed, then picked (never invented).

Listed: the triples on the rule's premise paths from its anchors, the triples around every entity
the branch expanded, and the ``dense_k`` KG triples closest in meaning to the rule (dense search
over all facts, when the KG has vectors). A model, when there is one, picks among the listed
triples by id; the deterministic score keeps premise triples first, so a pick can reorder and add,
and no id outside the list can be named.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence, one_line
from kgteam.protocols.evidence import EvidenceTriple
from kgteam.protocols.payloads import Axiom, MissingInfo, SelectedFacts
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, choose
from kgteam.roles.contract import handles
from kgteam.roles.r3.rules import as_evidence, neighbourhood, premise_facts
from kgteam.tools.types import ToolError


class FactSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model pick among the listed triples")
    dense_k: int = Field(5, ge=0, le=50, description="triples added by similarity to the rule")
    max_facts: int = Field(2000, ge=5, le=20000, description="triples a branch keeps (premise facts cut here make "
                                                                  "the facts incomplete: then only a found match stands)")
    expand_limit: int = Field(40, ge=1, le=500, description="triples fetched around an expanded entity")


def _key(t: EvidenceTriple) -> tuple[str, str, str]:
    return (t.subject, t.predicate, t.object)


class FactSelector(Role[FactSettings]):
    name: ClassVar[str] = "fact_selector"
    tools: ClassVar[tuple[str, ...]] = ("neighbors", "similar_triples")
    prompts: ClassVar[tuple[str, ...]] = ("r3_facts",)
    reads = (Axiom, SelectedFacts)

    @handles
    async def on_axiom(self, axiom: Axiom, ctx: RoleContext) -> SelectedFacts:
        premise, complete = await premise_facts(ctx.tools, axiom)
        dense = await self._dense(axiom.text, ctx)
        return await self._pick(axiom, premise, dense, [], ctx, complete=complete)

    @handles
    async def on_missing(self, missing: MissingInfo, ctx: RoleContext) -> SelectedFacts:
        axiom = ctx.ancestor(Axiom)
        before = ctx.ancestor(SelectedFacts)
        kept = list(before.triples) if before else []
        expanded = list(before.expanded) if before else []
        more = await neighbourhood(ctx.tools, missing.next_entity, self.settings.expand_limit) if missing.next_entity else []
        complete = before.complete if before else True
        if axiom is None:
            return SelectedFacts(triples=kept, expanded=expanded, complete=complete)
        return await self._pick(axiom, kept, more, [*expanded, *([missing.next_entity] if missing.next_entity else [])],
                                ctx, complete=complete)

    async def _dense(self, text: str, ctx: RoleContext) -> list[EvidenceTriple]:
        if not self.settings.dense_k:
            return []
        try:
            hits = await ctx.tools["similar_triples"](text, k=self.settings.dense_k)
        except (ToolError, KeyError) as exc:
            # not silent: the trace says why no dense facts came (e.g. the command that adds the index)
            ctx.trace.record("tool_unavailable", role=self.instance_name, tool="similar_triples", reason=str(exc))
            return []
        return as_evidence(hits)

    async def _pick(self, axiom: Axiom, first: list[EvidenceTriple], extra: list[EvidenceTriple], expanded: list[str],
                    ctx: RoleContext, *, complete: bool = True) -> SelectedFacts:
        listed: dict[tuple[str, str, str], tuple[EvidenceTriple, float]] = {}
        for t in first:
            listed.setdefault(_key(t), (t, 1.0))
        for t in extra:
            listed.setdefault(_key(t), (t, 0.5))
        items = list(listed.values())
        chosen = [t for t, _ in items]
        if self.settings.use_model and len(items) > 1:
            options = [Option(key=str(i), label=one_line(t.readable()), score=s) for i, (t, s) in enumerate(items)]
            premise = sum(1 for _, s in items if s >= 1.0)
            res = await choose(ctx, role=self.instance_name, decision="facts", prompt=self.prompt("r3_facts"),
                               options=options, k=max(1, min(premise, self.settings.max_facts, 30)), max_offered=30,
                               ask_when_trivial=True, values={"axiom": fence(axiom.text, tag="axiom")})
            picked = [items[int(o.key)][0] for o in res.chosen]
            chosen = picked + [t for t in chosen if t not in picked]  # the pick orders; premise facts stay
        premise_kept = sum(1 for t in chosen[: self.settings.max_facts] if listed[_key(t)][1] >= 1.0)
        complete = complete and premise_kept == sum(1 for _, s in items if s >= 1.0)  # no premise fact cut
        chosen = chosen[: self.settings.max_facts]
        ctx.trace.record("facts", role=self.instance_name, axiom=axiom.text, listed=len(items), kept=len(chosen),
                         expanded=expanded, complete=complete)
        return SelectedFacts(triples=chosen, expanded=expanded, offered=len(items), complete=complete)
