"""The supervisor's state for one question: envelope bookkeeping, budgets, and the delivery queue.

AutoGen-free on purpose: the AutoGen manager (:mod:`kgteam.agents.bus`) only asks this object
"what next?", so the scheduling rules below are testable and survive a runtime swap.

Scheduling: deliveries are kept in one FIFO queue. A role's outputs are accepted in the order
the role returned them; each output's recipients are appended in route order. So the bus runs
breadth-first and a run is fully deterministic for a deterministic model.

Budget rules (all per question):

* ``max_turns``: role messages; the message past the cap is not delivered.
* ``max_depth``: an output keeps its parent's depth unless the role lists its kind in
  ``Role.deepens`` (one hop / level deeper: +1); an envelope deeper than the cap is not delivered.
* ``max_breadth``: the widest fan-out of one step: the number of payloads of one kind a role
  returns for one message, counted only for kinds the role lists in ``Role.branches``
  (alternative branches; several payloads of other kinds are parts of one plan, e.g. one
  candidate set per hop), or the recipients of one envelope.
* ``max_retries``: ``RetrySignal`` envelopes; the one past the cap is not delivered.
* ``max_llm_calls`` / ``max_tokens``: enforced by :class:`~kgteam.agents.accounting.AccountingModel`.
* ``timeout_s``: clock starts at ``ask``; checked before every step and enforced by a timer.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kgteam.agents.routing import route
from kgteam.protocols.budgets import Budgets, BudgetUsage
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.evidence import Usage
from kgteam.protocols.payloads import Answer, Payload
from kgteam.protocols.routes import Route
from kgteam.roles.base import Role

BUDGET_FIELDS = {
    "max_depth": "depth", "max_breadth": "breadth", "max_retries": "retries", "max_turns": "turns",
    "max_llm_calls": "llm_calls", "max_tokens": "tokens", "timeout_s": "seconds",
}


@dataclass
class Delivery:
    envelope: Envelope
    to: str


@dataclass
class StopReason:
    """Why a run stopped: ``done``, ``no_answer``, a budget name, ``cancelled`` or ``error``."""

    reason: str
    limit: float | None = None
    used: float | None = None
    error: str | None = None

    @property
    def is_budget(self) -> bool:
        return self.reason in BUDGET_FIELDS


@dataclass
class RunState:
    session_id: str
    turn: int
    routes: list[Route]
    roles: dict[str, Role]
    budgets: Budgets
    started: float = field(default_factory=time.monotonic)
    used: BudgetUsage = field(default_factory=BudgetUsage)
    usage: Usage = field(default_factory=Usage)  # model usage of the whole run
    role_usage: dict[str, Usage] = field(default_factory=dict)
    transcript: list[Envelope] = field(default_factory=list)
    pending: deque[Delivery] = field(default_factory=deque)
    stop: StopReason | None = None
    final: Envelope | None = None  # the terminal answer, when a role produced one
    active_role: str | None = None
    inflight: set[asyncio.Future[Any]] = field(default_factory=set)
    runtime_s: float = 0.0  # time spent in supervisor bookkeeping (for the overhead benchmark)
    role_s: float = 0.0  # time inside Role.handle (includes tool and model time)
    tool_s: float = 0.0
    model_s: float = 0.0
    steps: int = 0
    emitted: set[str] = field(default_factory=set)  # ids streamed/persisted so far
    _next_branch: int = 1

    # -- time ---------------------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def remaining_s(self) -> float:
        return self.budgets.timeout_s - self.elapsed()

    # -- stopping -----------------------------------------------------------------------------
    def request_stop(self, reason: str, *, limit: float | None = None, used: float | None = None,
                     error: str | None = None) -> None:
        """First reason wins; in-flight role work is cancelled so the run ends promptly."""
        if self.stop is None:
            self.stop = StopReason(reason, limit, used, error)
        for future in list(self.inflight):
            future.cancel()

    def budget_stop(self, budget: str, used: float) -> None:
        self.request_stop(budget, limit=float(getattr(self.budgets, budget)), used=used)

    def check_clock(self) -> bool:
        """True when the run may go on."""
        self.used.seconds = self.elapsed()
        if self.stop is None and self.used.seconds >= self.budgets.timeout_s:
            self.budget_stop("timeout_s", self.used.seconds)
        return self.stop is None

    # -- envelopes ----------------------------------------------------------------------------
    def is_terminal_answer(self, envelope: Envelope) -> bool:
        return envelope.kind == "answer" and not route(envelope, self.routes)

    def make_envelopes(self, parent: Envelope, sender: str, payloads: list[Payload], step_usage: Usage,
                       ) -> list[Envelope]:
        """Wrap a role's outputs: depth, branch, attempt, parents; step usage on the first one.

        A terminal answer (one no route consumes) gets the run's cost and ``stopped_by="done"``
        here, before it is streamed, so what listeners see is what ``ask`` returns.
        """
        role = self.roles.get(sender)
        deepens = set(getattr(role, "deepens", ()) or ())
        branching = self._branch_kinds(sender)
        seen_kinds: dict[str, int] = {}
        envelopes: list[Envelope] = []
        for index, payload in enumerate(payloads):
            sibling = seen_kinds.get(payload.kind, 0)
            seen_kinds[payload.kind] = sibling + 1
            branch = parent.branch
            if sibling > 0 and payload.kind in branching:  # an alternative: a branch of its own
                branch = self._next_branch
                self._next_branch += 1
            attempt = parent.attempt
            if payload.kind == "retry_signal":
                attempt = self.used.retries + 1
            envelope = Envelope(
                session_id=self.session_id, turn=self.turn, sender=sender, payload=payload,
                parents=[parent.id], depth=parent.depth + (1 if payload.kind in deepens else 0),
                branch=branch, attempt=attempt,
                usage=step_usage if index == 0 else Usage(),
            )
            if self.is_terminal_answer(envelope) and isinstance(payload, Answer):
                self.complete_answer(payload)
            envelopes.append(envelope)
        return envelopes

    def _branch_kinds(self, sender: str) -> frozenset[str]:
        """Kinds whose same-step siblings are alternative branches (``Role.branches``)."""
        return frozenset(getattr(self.roles.get(sender), "branches", ()) or ())

    def complete_answer(self, answer: Answer) -> Answer:
        answer.cost = Usage(
            llm_calls=self.usage.llm_calls, prompt_tokens=self.usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens, seconds=round(self.elapsed(), 6),
        )
        if answer.evidence.is_empty():
            answer.grounded = False
        return answer

    def start(self, question: Envelope) -> None:
        """Accept the user's question (not counted as a turn) and route it."""
        self.transcript.append(question)
        self._enqueue(question)

    def accept(self, envelopes: list[Envelope]) -> None:
        """Admit one step's outputs: budgets first, then routing into the FIFO queue."""
        t0 = time.perf_counter()
        try:
            if self.stop is not None:
                return
            per_kind: dict[str, int] = {}
            for envelope in envelopes:  # alternatives only: per-hop parts of one plan are not branches
                if envelope.kind in self._branch_kinds(envelope.sender):
                    per_kind[envelope.kind] = per_kind.get(envelope.kind, 0) + 1
            widest = max(per_kind.values(), default=0)
            self.used.breadth = max(self.used.breadth, widest)
            if widest > self.budgets.max_breadth:
                self.budget_stop("max_breadth", widest)
                return
            for envelope in envelopes:
                self.used.turns += 1
                if self.used.turns > self.budgets.max_turns:
                    self.budget_stop("max_turns", self.used.turns)
                    return
                self.used.depth = max(self.used.depth, envelope.depth)
                if envelope.depth > self.budgets.max_depth:
                    self.budget_stop("max_depth", envelope.depth)
                    return
                if envelope.kind == "retry_signal":
                    self.used.retries += 1
                    if self.used.retries > self.budgets.max_retries:
                        self.budget_stop("max_retries", self.used.retries)
                        return
                self.transcript.append(envelope)
                if self.is_terminal_answer(envelope):
                    self.final = envelope
                    self.request_stop("done")
                    return
                self._enqueue(envelope)
        finally:
            self.runtime_s += time.perf_counter() - t0

    def _enqueue(self, envelope: Envelope) -> None:
        recipients = route(envelope, self.routes)
        if len(recipients) > 1:
            self.used.breadth = max(self.used.breadth, len(recipients))
            if len(recipients) > self.budgets.max_breadth:
                self.budget_stop("max_breadth", len(recipients))
                return
        for name in recipients:
            self.pending.append(Delivery(envelope, name))

    def next_delivery(self) -> Delivery | None:
        """The next step, or None when the run is over (``stop`` then says why)."""
        if not self.check_clock():
            return None
        if not self.pending:
            if self.stop is None:
                self.request_stop("no_answer")
            return None
        return self.pending.popleft()

    def record_model_call(self, role: str, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        call = Usage(llm_calls=1, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                     seconds=seconds)
        self.usage = self.usage + call
        self.role_usage[role] = self.role_usage.get(role, Usage()) + call
        self.used.llm_calls = self.usage.llm_calls
        self.used.tokens = self.usage.total_tokens
        self.model_s += seconds
