"""Tiny test playbooks for the runtime: roles that branch, go deep, retry, fail, sleep.

They call the model through ``ctx.model`` (a ScriptedModel behind the runtime's accounting
wrapper) so the model budgets are exercised for real; no network, no AutoGen in the roles.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.evidence import Evidence, EvidenceQuery
from kgteam.protocols.payloads import (
    Answer,
    AnswerValue,
    Axiom,
    Candidate,
    CandidateQuery,
    EntityCandidates,
    MissingInfo,
    Payload,
    QueryCandidates,
    QueryResult,
    RelationCandidates,
    RetrySignal,
)
from kgteam.protocols.routes import Route
from kgteam.roles.base import Role, RoleContext


def any_reply_model(reply: str = "ok") -> ScriptedModel:
    return ScriptedModel([("*", None, reply)])


class Brancher(Role):
    """question -> ``n`` axioms (alternative branches)."""

    name = "brancher"
    consumes = ("question",)
    produces = ("axiom",)
    branches = ("axiom",)  # its axioms are alternatives: each is a branch, counted by max_breadth

    def __init__(self, n: int = 2, **kw: Any):
        super().__init__(**kw)
        self.n = n

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        await ctx.model.chat([{"role": "user", "content": f"branch: {message.payload.text}"}], role=self.name)
        return [Axiom(text=f"axiom {i}") for i in range(self.n)]


class Diver(Role):
    """axiom / missing_info -> one hop deeper (``missing_info``), answering at ``answer_at`` (never: None).

    ``finalize`` returns the deepest finding so far: the "best grounded answer" for budget stops.
    """

    name = "diver"
    consumes = ("axiom", "missing_info")
    produces = ("missing_info", "answer")
    deepens = ("missing_info",)

    def __init__(self, answer_at: int | None = None, sleep_s: float = 0.0, prompt_size: int = 40, **kw: Any):
        super().__init__(**kw)
        self.answer_at = answer_at
        self.sleep_s = sleep_s
        self.prompt_size = prompt_size

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        if self.sleep_s:
            await asyncio.sleep(self.sleep_s)
        await ctx.model.chat([{"role": "user", "content": "d" * self.prompt_size}], role=self.name)
        if self.answer_at is not None and message.depth >= self.answer_at:
            return [Answer(text=f"found at depth {message.depth}",
                           values=[AnswerValue(label=f"depth {message.depth}")])]
        return [MissingInfo(description=f"hop from depth {message.depth}")]

    async def finalize(self, ctx: RoleContext, reason: str) -> Answer | None:
        hops = [e for e in ctx.transcript if e.kind == "missing_info"]
        if not hops:
            return None
        deepest = max(hops, key=lambda e: e.depth)
        return Answer(text=f"partial: reached depth {deepest.depth}", status="answered")


def explore_routes() -> list[Route]:
    return [
        Route(kind="question", to=["brancher"]),
        Route(kind="axiom", to=["diver"]),
        Route(kind="missing_info", to=["diver"]),
    ]


# -- one plan in several payloads ---------------------------------------------------------------


class Planner(Role):
    """question -> one plan in one step: the entity, one relation-candidate set per hop, the query.

    Several ``relation_candidates`` from one step describe different hops of the same plan, not
    alternatives: the role declares no ``branches``, so they do not count against ``max_breadth``.
    """

    name = "planner"
    consumes = ("question",)
    produces = ("entity_candidates", "relation_candidates", "query_candidates")

    def __init__(self, hops: int = 2, **kw: Any):
        super().__init__(**kw)
        self.hops = hops

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        await ctx.model.chat([{"role": "user", "content": f"plan: {message.payload.text}"}], role=self.name)
        out: list[Payload] = [EntityCandidates(mention="film", placeholder="E0",
                                               candidates=[Candidate(iri=":film", label="film")])]
        out += [RelationCandidates(phrase=f"hop {i}", placeholder=f"R{i}",
                                   candidates=[Candidate(iri=f":r{i}", label=f"r{i}")]) for i in range(self.hops)]
        out.append(QueryCandidates(queries=[CandidateQuery(sparql="SELECT ?x WHERE { :film :r0/:r1 ?x }")],
                                   selected=0))
        return out


class Executor(Role):
    """query_candidates -> the answer (the per-hop candidate sets are for the trace)."""

    name = "executor"
    consumes = ("query_candidates",)
    produces = ("answer",)

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        return [Answer(text="Joel Zwick", values=[AnswerValue(label="Joel Zwick")])]


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
    consumes = ("question", "retry_signal")
    produces = ("query_result",)

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        prompt = "write a query"
        if isinstance(message.payload, RetrySignal):
            prompt += f"\nprevious attempt failed: {message.payload.hint}"
        reply = await ctx.model.chat([{"role": "user", "content": prompt}], role=self.name)
        query = reply.text.strip()
        ctx.trace.record("tool_call", role=self.name, tool="run_sparql", args=[query])
        return [QueryResult(sparql=query, rows=list(TOY_KG.get(query, [])))]


class Checker(Role):
    """Empty result -> RetrySignal with a hint naming the failed query; else the answer."""

    name = "checker"
    consumes = ("query_result",)
    produces = ("retry_signal", "answer")

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        result = message.payload
        assert isinstance(result, QueryResult)
        if not result.rows:
            return [RetrySignal(phase="query", reason="empty_result",
                                hint=f"the query `{result.sparql}` returned nothing; use a different one",
                                attempt=ctx.budgets.used.retries + 1)]
        return [Answer(text=", ".join(row["x"] for row in result.rows),
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
    consumes = ("question",)
    produces = ("answer",)

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        raise ValueError("kaboom in test role")


class Sleeper(Role):
    """A chain of ``steps`` messages; on a question containing "slow" it sleeps at step ``sleep_at``
    (a slow tool or model call) — long enough for a test to cancel or kill it."""

    name = "sleeper"
    consumes = ("question", "missing_info")
    produces = ("missing_info", "answer")

    def __init__(self, steps: int = 3, sleep_at: int = 2, sleep_s: float = 3600.0, **kw: Any):
        super().__init__(**kw)
        self.steps = steps
        self.sleep_at = sleep_at
        self.sleep_s = sleep_s

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        step = 1 + sum(1 for e in ctx.transcript if e.sender == self.name)
        question = ctx.transcript[0].payload.text  # type: ignore[attr-defined]
        if "slow" in question and step == self.sleep_at:
            await asyncio.sleep(self.sleep_s)
        if step >= self.steps:
            return [Answer(text=f"done after {step} steps")]
        return [MissingInfo(description=f"step {step}")]


def sleeper_routes() -> list[Route]:
    return [Route(kind="question", to=["sleeper"]), Route(kind="missing_info", to=["sleeper"])]
