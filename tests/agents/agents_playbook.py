"""Tiny test playbooks for the runtime: roles that branch, go deep, join, retry, fail, sleep.

They call the model through ``ctx.model`` (a ScriptedModel behind the runtime's accounting
wrapper) so the model budgets are exercised for real; no network, no AutoGen in the roles.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.evidence import Evidence, EvidenceQuery
from kgteam.protocols.payloads import (
    Answer,
    AnswerValue,
    Axiom,
    Candidate,
    CandidateQuery,
    EntityCandidates,
    Join,
    MissingInfo,
    QueryCandidates,
    QueryResult,
    Question,
    RelationCandidates,
    RetryHint,
    RetrySignal,
)
from kgteam.protocols.routes import Route
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contract import handles


def any_reply_model(reply: str = "ok") -> ScriptedModel:
    return ScriptedModel([("*", None, reply)])


class Brancher(Role):
    """question -> ``n`` axioms (alternative branches), scored ``scores[i]`` when given."""

    name = "brancher"
    branches = (Axiom,)  # its axioms are alternatives: each opens a branch, kept within max_breadth

    def __init__(self, n: int = 2, scores: list[float] | None = None, **kw: Any):
        super().__init__(**kw)
        self.n = n
        self.scores = scores

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Axiom]:
        await ctx.model.chat([{"role": "user", "content": f"branch: {q.text}"}], role=self.name)
        return [Axiom(text=f"axiom {i}", score=self.scores[i] if self.scores else None) for i in range(self.n)]


class Diver(Role):
    """axiom / missing_info -> one hop deeper (``missing_info``), answering at ``answer_at`` (never: None).

    ``answer_on`` limits answering to axioms whose text is listed (the other branches dive on).
    ``finalize`` returns the deepest finding so far: the "best grounded answer" for budget stops.
    """

    name = "diver"
    deepens = (MissingInfo,)
    reads = (Axiom, MissingInfo)

    def __init__(self, answer_at: int | None = None, sleep_s: float = 0.0, prompt_size: int = 40,
                 answer_on: tuple[str, ...] | None = None, **kw: Any):
        super().__init__(**kw)
        self.answer_at = answer_at
        self.sleep_s = sleep_s
        self.prompt_size = prompt_size
        self.answer_on = answer_on

    @handles
    async def on_step(self, msg: Axiom | MissingInfo, ctx: RoleContext) -> list[MissingInfo | Answer]:
        if self.sleep_s:
            await asyncio.sleep(self.sleep_s)
        await ctx.model.chat([{"role": "user", "content": "d" * self.prompt_size}], role=self.name)
        depth = ctx.message.depth if ctx.message else 0
        axiom = ctx.ancestor(Axiom)
        may_answer = self.answer_on is None or (axiom is not None and axiom.text in self.answer_on)
        if self.answer_at is not None and depth >= self.answer_at and may_answer:
            return [Answer(confidence=1.0, text=f"found at depth {depth}" + (f" via {axiom.text}" if axiom else ""),
                           values=[AnswerValue(label=f"depth {depth}")])]
        return [MissingInfo(description=f"hop from depth {depth}")]

    async def finalize(self, ctx: RoleContext, reason: str) -> Answer | None:
        depths = [len(b.lineage.ancestors(MissingInfo)) for b in ctx.run.branches]
        if not any(depths):
            return None
        return Answer(confidence=1.0, text=f"partial: reached depth {max(depths)}", status="answered")


class Surfacer(Role):
    """question -> a first axiom; a branch that went deep enough without an answer -> a new axiom
    (a new branch), R3-style. Later axioms score lower, so max_breadth keeps the early ones."""

    name = "surfacer"
    branches = (Axiom,)
    reads = (Axiom,)

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Axiom]:
        return [Axiom(text="axiom 0", score=1.0)]

    @handles
    async def on_stuck(self, stuck: MissingInfo, ctx: RoleContext) -> list[Axiom]:
        n = len(ctx.ancestors(Axiom))
        return [Axiom(text=f"axiom {n}", score=1.0 / (n + 1))]


def deepen_then_branch_routes() -> list[Route]:
    """Deeper while depth < max_depth, else a new axiom: the condition names the budget."""
    return [
        Route(kind="question", to=["surfacer"]),
        Route(kind="axiom", to=["diver"]),
        Route(kind="missing_info", to=["diver"], when={"envelope.depth": {"lt": "max_depth"}}),
        Route(kind="missing_info", to=["surfacer"], when={"envelope.depth": {"ge": "max_depth"}}),
    ]


def explore_routes() -> list[Route]:
    return [
        Route(kind="question", to=["brancher"]),
        Route(kind="axiom", to=["diver"]),
        Route(kind="missing_info", to=["diver"]),
    ]


class Judge(Role):
    """join of the branches' answers -> one answer naming every branch's finding (and the pruned)."""

    name = "judge"

    @handles
    async def on_join(self, join: Join, ctx: RoleContext) -> list[Answer]:
        found = sorted(a.text for a in join.items if isinstance(a, Answer))
        pruned = sorted(f"{p.branch}:{p.reason}" for p in join.pruned)
        return [Answer(confidence=1.0, text="; ".join(found) + (f" | pruned {', '.join(pruned)}" if pruned else ""),
                       values=[AnswerValue(label=t) for t in found])]


def join_routes(mode: str = "all") -> list[Route]:
    return [*explore_routes(), Route(kind="answer", to=["judge"], sender="diver", join=mode)]


class Peeker(Role):
    """axiom -> answer listing every axiom it can see in its lineage (must be only its own)."""

    name = "peeker"
    reads = (Axiom,)

    def __init__(self, sleep_s: float = 0.0, **kw: Any):
        super().__init__(**kw)
        self.sleep_s = sleep_s

    @handles
    async def on_axiom(self, axiom: Axiom, ctx: RoleContext) -> list[Answer]:
        if self.sleep_s:
            await asyncio.sleep(self.sleep_s)
        seen = [a.text for a in ctx.ancestors(Axiom)]
        return [Answer(confidence=1.0, text=f"{axiom.text} sees {seen}", values=[AnswerValue(label=s) for s in seen])]


# -- one plan in several payloads ---------------------------------------------------------------


class Planner(Role):
    """question -> one plan in one step: the entity, one relation-candidate set per hop, the query.

    Several ``relation_candidates`` from one step describe different hops of the same plan, not
    alternatives: the role declares no ``branches``, so they open no branch.
    """

    name = "planner"
    informs = (EntityCandidates, RelationCandidates)

    def __init__(self, hops: int = 2, **kw: Any):
        super().__init__(**kw)
        self.hops = hops

    @handles
    async def on_question(self, q: Question, ctx: RoleContext
                          ) -> list[EntityCandidates | RelationCandidates | QueryCandidates]:
        await ctx.model.chat([{"role": "user", "content": f"plan: {q.text}"}], role=self.name)
        out: list[EntityCandidates | RelationCandidates | QueryCandidates] = [
            EntityCandidates(mention="film", placeholder="E0", candidates=[Candidate(iri=":film", label="film")])]
        out += [RelationCandidates(phrase=f"hop {i}", placeholder=f"R{i}",
                                   candidates=[Candidate(iri=f":r{i}", label=f"r{i}")]) for i in range(self.hops)]
        out.append(QueryCandidates(queries=[CandidateQuery(sparql="SELECT ?x WHERE { :film :r0/:r1 ?x }")],
                                   selected=0))
        return out


class Executor(Role):
    """query_candidates -> the answer (the per-hop candidate sets are for the trace)."""

    name = "executor"

    @handles
    async def on_plan(self, plan: QueryCandidates, ctx: RoleContext) -> list[Answer]:
        return [Answer(confidence=1.0, text="Joel Zwick", values=[AnswerValue(label="Joel Zwick")])]


def plan_routes() -> list[Route]:
    return [Route(kind="question", to=["planner"]), Route(kind="query_candidates", to=["executor"])]


# -- retry loop ---------------------------------------------------------------------------------

TOY_KG: dict[str, list[dict[str, str]]] = {
    "SELECT ?x WHERE { :film :directed_by ?x }": [],
    "SELECT ?x WHERE { ?x :directed :film }": [{"x": "Joel Zwick"}],
}


class Querier(Role):
    """Writes a query with the model; the retry hint goes into the prompt; runs it on a toy KG."""

    name = "querier"

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[QueryResult]:
        return [await self._query(ctx, "write a query")]

    @handles
    async def on_retry(self, retry: RetrySignal, ctx: RoleContext) -> list[QueryResult]:
        return [await self._query(ctx, f"write a query\nprevious attempt failed: {retry.hint.note}")]

    async def _query(self, ctx: RoleContext, prompt: str) -> QueryResult:
        reply = await ctx.model.chat([{"role": "user", "content": prompt}], role=self.name)
        query = reply.text.strip()
        ctx.trace.record("tool_call", role=self.name, tool="run_sparql", args=[query])
        return QueryResult(sparql=query, rows=list(TOY_KG.get(query, [])))


class Checker(Role):
    """Empty result -> RetrySignal with a hint naming the failed query; else the answer."""

    name = "checker"

    @handles
    async def on_result(self, result: QueryResult, ctx: RoleContext) -> list[RetrySignal | Answer]:
        if not result.rows:
            return [RetrySignal(phase="query", reason="empty_result",
                                hint=RetryHint(note=f"the query `{result.sparql}` returned nothing; use a different one"),
                                attempt=ctx.budgets.used.retries + 1)]
        return [Answer(confidence=1.0, text=", ".join(row["x"] for row in result.rows),
                       values=[AnswerValue(label=row["x"]) for row in result.rows],
                       grounded=True, evidence=Evidence(queries=[EvidenceQuery(sparql=result.sparql,
                                                                                row_count=len(result.rows))]))]


def retry_routes() -> list[Route]:
    return [
        Route(kind="question", to=["querier"]),
        Route(kind="query_result", to=["checker"]),
        Route(kind="retry_signal", to=["querier"], when={"phase": "query"}),
    ]


# -- failures and slow roles ----------------------------------------------------------------------


class Exploder(Role):
    name = "exploder"

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Answer]:
        raise ValueError("kaboom in test role")


class Sleeper(Role):
    """A chain of ``steps`` messages; on a question containing "slow" it sleeps at step ``sleep_at``
    (a slow tool or model call) — long enough for a test to cancel or kill it."""

    name = "sleeper"
    reads = (Question, MissingInfo)

    def __init__(self, steps: int = 3, sleep_at: int = 2, sleep_s: float = 3600.0, **kw: Any):
        super().__init__(**kw)
        self.steps = steps
        self.sleep_at = sleep_at
        self.sleep_s = sleep_s

    @handles
    async def on_step(self, msg: Question | MissingInfo, ctx: RoleContext) -> list[MissingInfo | Answer]:
        step = 1 + len(ctx.ancestors(MissingInfo))
        asked = ctx.ancestor(Question)
        if asked is not None and "slow" in asked.text and step == self.sleep_at:
            await asyncio.sleep(self.sleep_s)
        if step >= self.steps:
            return [Answer(confidence=1.0, text=f"done after {step} steps")]
        return [MissingInfo(description=f"step {step}")]


def sleeper_routes() -> list[Route]:
    return [Route(kind="question", to=["sleeper"]), Route(kind="missing_info", to=["sleeper"])]
