"""Graph fixer: the pseudo-graph corrected against the verifier's real triples.

Model-free, each pseudo-triple becomes its best-supported real triple(s) or is marked unverified
(:mod:`kgteam.roles.pgakv.fixing`). A model, when there is one, edits that result by ids only:
delete a pseudo-triple the facts do not support, replace one by a retrieved fact that conflicts
with it, add a retrieved fact the answer needs (the latest one when a fact changes over time).
It can name no triple that was not retrieved.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from kgteam.llm.fencing import fence, one_line
from kgteam.llm.no_model import model_available
from kgteam.protocols.payloads import FixedGraph, FixedTriple, PseudoGraph, VerifiedGraph
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles
from kgteam.roles.pgakv.fixing import evidence_of, fix_graph


class FixerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model delete, replace and add (by ids of retrieved facts)")
    min_score: float = Field(0.0, ge=-1.0, le=1.0, description="similarity a retrieved fact needs to fill or replace")
    max_facts: int = Field(40, ge=1, le=300, description="retrieved facts shown to the model")
    max_repairs: int = Field(1, ge=0, le=3, description="repairs asked after an invalid model reply")


class Edit(BaseModel):
    op: Literal["keep", "delete", "replace", "add"]
    pseudo: int | None = None  # p<n>: the pseudo-triple edited
    fact: str | None = None  # c<n>: the retrieved fact used


class Edits(BaseModel):
    edits: list[Edit] = Field(default_factory=list, max_length=60)


class GraphFixer(Role[FixerSettings]):
    name: ClassVar[str] = "graph_fixer"
    prompts: ClassVar[tuple[str, ...]] = ("pgakv_fix",)
    reads = (PseudoGraph,)

    @handles
    async def on_verified(self, verified: VerifiedGraph, ctx: RoleContext) -> FixedGraph:
        graph = ctx.ancestor(PseudoGraph) or PseudoGraph(triples=[])
        fixed = fix_graph(graph, verified, min_score=self.settings.min_score)
        if self.settings.use_model and model_available(ctx.model) and graph.triples:
            fixed = await self._edit(graph, verified, fixed, ctx)
        ctx.trace.record("fixed_graph", role=self.instance_name, summary=fixed.summary())
        return fixed

    async def _edit(self, graph: PseudoGraph, verified: VerifiedGraph, fixed: FixedGraph, ctx: RoleContext) -> FixedGraph:
        facts = list({(c.subject, c.predicate, c.object): c for ch in verified.checks
                      for c in ch.candidates}.values())[: self.settings.max_facts]
        if not facts:
            return fixed
        ids = {f"c{n}": c for n, c in enumerate(facts)}

        def validate(out: Edits) -> str | None:
            for e in out.edits:
                if e.pseudo is not None and not 0 <= e.pseudo < len(graph.triples):
                    return f"pseudo {e.pseudo} is no pseudo-triple (p0..p{len(graph.triples) - 1})"
                if e.op in ("replace", "add") and e.fact not in ids:
                    return f"{e.op} needs a fact id among c0..c{len(facts) - 1}, got {e.fact!r}"
                if e.op in ("replace", "delete") and e.pseudo is None:
                    return f"{e.op} needs the pseudo-triple number"
            return None

        pseudo = "\n".join(f"p{i}: <{one_line(t.subject)}, {one_line(t.predicate)}, {one_line(t.object)}>"
                           for i, t in enumerate(graph.triples))
        listed = "\n".join(f"{key}: {one_line(c.readable())}" for key, c in ids.items())
        res = await produce(ctx, role=self.instance_name, decision="fix", prompt=self.prompt("pgakv_fix"),
                            output=Edits, validate=validate, fallback=lambda: None,
                            values={"question": fence(graph.question, tag="question"),
                                    "pseudo": fence(pseudo, tag="pseudo_graph"), "facts": fence(listed, tag="facts")},
                            max_repairs=self.settings.max_repairs, max_tokens=384)
        if res.value is None:
            return fixed
        triples = list(fixed.triples)
        deleted = list(fixed.deleted)
        for e in res.value.edits:
            if e.op == "delete" and e.pseudo is not None:
                triples = [t for t in triples if t.pseudo != e.pseudo]
                deleted.append(e.pseudo)
            elif e.op == "replace" and e.pseudo is not None and e.fact in ids:
                c = ids[e.fact]
                triples = [t for t in triples if t.pseudo != e.pseudo]
                triples.append(FixedTriple(status="replaced", triple=evidence_of(c), pseudo=e.pseudo, kg=c.kg, score=c.score))
            elif e.op == "add" and e.fact in ids:
                c = ids[e.fact]
                if not any((t.triple.subject, t.triple.predicate, t.triple.object) == (c.subject, c.predicate, c.object)
                           for t in triples):
                    triples.append(FixedTriple(status="added", triple=evidence_of(c), pseudo=e.pseudo, kg=c.kg,
                                               score=c.score))
        return FixedGraph(triples=triples, deleted=sorted(set(deleted)), source="llm")
