"""The supervisor of one question: admits outputs under the budgets, routes them, schedules rounds.

AutoGen-free on purpose: the AutoGen manager (:mod:`kgteam.agents.bus`) only asks "which
deliveries next?", so scheduling is testable and survives a runtime swap. Parts: the branch tree
(:mod:`~kgteam.agents.branches`), the budget policy (:mod:`~kgteam.agents.budget_policy`), metrics
(:mod:`~kgteam.agents.metrics`), the indexed transcript (:mod:`~kgteam.agents.run_transcript`) and
the join waits below.

Scheduling: pending deliveries form one FIFO queue. Each *round* takes up to ``concurrency`` of
them; they run concurrently (independent branches advance together), and their outputs are
admitted in delivery order once the whole round is back, so a run is deterministic for a
deterministic model however the steps interleave. Every message is streamed (``on_envelope``:
persisted, shown) when it is admitted, in that order; one refused by a budget is streamed too
(it was said) but does not enter the transcript roles read from.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kgteam.agents.branches import TRUNK, BranchBook
from kgteam.agents.budget_policy import BudgetPolicy, StopReason
from kgteam.agents.metrics import RunMetrics
from kgteam.agents.routing import matching_routes
from kgteam.agents.run_transcript import RunTranscript
from kgteam.protocols.budgets import Budgets, BudgetUsage
from kgteam.protocols.calibration import CalibrationMap
from kgteam.protocols.envelope import Envelope, new_id
from kgteam.protocols.evidence import Evidence, Usage
from kgteam.protocols.payloads import (
    KG_MAP_CEILING,
    Answer,
    BranchPruned,
    Join,
    Payload,
    PruneReason,
    kg_map_of,
    kind_of,
)
from kgteam.protocols.routes import Route
from kgteam.roles.base import BudgetView, Role
from kgteam.roles.lineage import BranchView, Lineage, RunView

DEFAULT_CONCURRENCY = 4


@dataclass
class Delivery:
    """One step to run: ``to`` handles ``envelope``; its outputs carry ``step``."""

    envelope: Envelope
    to: str
    step: str = field(default_factory=new_id)


@dataclass
class ModelWait:
    """A model call in flight: who asked which model, since when (to say what a timeout cut short)."""

    role: str
    model: str
    base_url: str | None
    started: float = field(default_factory=time.monotonic)
    waited_s: float = 0.0  # filled in when the run's clock stops it

    def describe(self) -> str:
        where = f" at {self.base_url}" if self.base_url else ""
        return (f"the model {self.model!r}{where} did not answer role {self.role!r} within {self.waited_s:.1f} s")


@dataclass
class JoinWait:
    route: Route
    target: str
    family: str
    items: list[Envelope] = field(default_factory=list)
    closed: bool = False


class Supervisor:
    def __init__(self, session_id: str, turn: int, routes: list[Route], roles: dict[str, Role], budgets: Budgets,
                 *, started: float | None = None, concurrency: int = DEFAULT_CONCURRENCY,
                 on_envelope: Callable[[Envelope], None] | None = None, model_name: str | None = None,
                 calibration: CalibrationMap | None = None):
        self.session_id = session_id
        self.turn = turn
        self.routes = routes
        self.roles = roles
        self.concurrency = max(1, concurrency)
        self.policy = BudgetPolicy(budgets, started if started is not None else time.monotonic())
        self.metrics = RunMetrics()
        self.branches = BranchBook()
        self.transcript = RunTranscript(self.branches)
        self.pending: deque[Delivery] = deque()
        self.final: Envelope | None = None
        self.inflight: set[asyncio.Future[Any]] = set()  # role tasks, cancelled when the run stops
        self.emitted: set[str] = set()  # ids streamed/persisted so far
        self.on_envelope = on_envelope  # streams (persists, shows) every admitted message
        self.model_name = model_name  # stamped on the answer ("none": scorers only)
        self.calibration = calibration  # the team's score -> probability map (None: raw scores)
        # a several-KG team's KG tools name the KG of each answer's evidence triple (kg_union.KGUnion)
        self.evidence_tagger: Callable[[Evidence], Awaitable[Evidence]] | None = None
        self.model_waits: dict[int, ModelWait] = {}  # model calls in flight
        self.stalled_on: ModelWait | None = None  # the call the run still waited on when its time ran out
        self._round: list[Delivery] = []
        self._collected: dict[str, list[Envelope]] = {}
        self._joins: dict[tuple[int, str, str], JoinWait] = {}
        self._unrouted: set[str] = set()  # alternatives cut by max_breadth: kept for the trace only

    # ------------------------------------------------------------------ views
    @property
    def budgets(self) -> Budgets:
        return self.policy.budgets

    @property
    def used(self) -> BudgetUsage:
        return self.policy.used

    @property
    def stop(self) -> StopReason | None:
        return self.policy.stop

    @property
    def usage(self) -> Usage:
        return self.metrics.usage

    def elapsed(self) -> float:
        return self.policy.elapsed()

    def remaining_s(self) -> float:
        return self.policy.remaining_s()

    def budget_view(self, envelope: Envelope | None = None) -> BudgetView:
        if envelope is None:
            return BudgetView(self.budgets, self.used)
        return BudgetView(self.budgets, self.used, depth=envelope.depth,
                          branch_retries=sum(self.branches.retries[b] for b in self.branches.chain(envelope.branch)))

    def lineage(self, envelope: Envelope, role: Role | None) -> Lineage:
        allowed = role.readable_types() if role is not None else None
        return Lineage.of(self.transcript.lineage(envelope), allowed=allowed,
                          owner=role.instance_name if role is not None else "", message=envelope)

    def run_view(self, role: Role | None = None) -> RunView:
        """Every branch with the lineage of its last message, for ``finalize``."""
        allowed = role.readable_types() if role is not None else None
        owner = role.instance_name if role is not None else ""
        views = []
        for branch, info in sorted(self.branches.info.items()):
            last = self.transcript.last_on_branch(branch)
            if last is None:
                continue
            lineage = Lineage.of(self.transcript.lineage(last), allowed=allowed, owner=owner)
            views.append(BranchView(branch, lineage, info.pruned))
        return RunView(tuple(views))

    # ------------------------------------------------------------------ stopping
    def request_stop(self, reason: str, *, limit: float | None = None, used: float | None = None,
                     error: str | None = None) -> None:
        """First reason wins; in-flight role work is cancelled so the run ends promptly."""
        if reason == "timeout_s" and self.stop is None and self.model_waits:
            wait = min(self.model_waits.values(), key=lambda w: w.started)
            wait.waited_s = time.monotonic() - wait.started
            self.stalled_on = wait
        self.policy.set_stop(reason, limit=limit, used=used, error=error)
        for future in list(self.inflight):
            future.cancel()

    def budget_stop(self, budget: str, used: float) -> None:
        self.request_stop(budget, limit=self.policy.limit(budget), used=used)

    def check_clock(self) -> bool:
        ok = self.policy.clock_ok()
        if not ok:
            self.request_stop(self.stop.reason if self.stop else "timeout_s")
        return ok

    # ------------------------------------------------------------------ model accounting
    def record_model_call(self, role: str, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        self.metrics.record_model_call(role, prompt_tokens, completion_tokens, seconds, self.used)

    # ------------------------------------------------------------------ envelopes
    def is_terminal_answer(self, envelope: Envelope) -> bool:
        return envelope.kind == "answer" and not matching_routes(envelope, self.routes, self.budgets)

    def complete_answer(self, answer: Answer) -> Answer:
        """Stamp the run's cost and pruned branches on the answer people will see."""
        u = self.metrics.usage
        answer.cost = Usage(llm_calls=u.llm_calls, prompt_tokens=u.prompt_tokens,
                            completion_tokens=u.completion_tokens, seconds=round(self.elapsed(), 6))
        answer.pruned = self.branches.pruned()
        answer.model = answer.model or self.model_name
        if answer.evidence.is_empty():
            answer.grounded = False
        signal_map = self.calibration is not None and self.calibration.signals is not None
        if self.calibration is not None and answer.confidence is not None and answer.raw_confidence is None \
                and (not signal_map or (answer.status == "answered" and answer.signals is not None)):
            # a signal map was fitted on stated answers' signals: it maps those, nothing else
            answer.raw_confidence = answer.confidence
            answer.confidence = round(self.calibration.calibrate(answer.confidence, answer.signals), 4)
            answer.calibration = self.calibration.name
            if signal_map and answer.status == "answered" and answer.confidence < SIGNAL_STATING_LINE:
                _say_as_guess(answer)
        elif answer.confidence is not None and answer.confidence > KG_MAP_CEILING and kg_map_of(answer) is not None:
            answer.confidence = KG_MAP_CEILING
        return answer

    def make_envelopes(self, delivery: Delivery, sender: str, payloads: list[Payload], step_usage: Usage,
                       ) -> list[Envelope]:
        """Wrap one step's outputs: step, parents, depth, branch (alternatives open branches, the
        best-scored kept within ``max_breadth``), attempt; step usage on the first one."""
        parent = delivery.envelope
        role = self.roles.get(sender)
        deepens = {kind_of(c) for c in getattr(role, "deepens", ())}
        branching = {kind_of(c) for c in getattr(role, "branches", ())}
        keep = self._breadth_keep(payloads, branching)
        envelopes: list[Envelope] = []
        for index, payload in enumerate(payloads):
            branch = parent.branch
            if payload.kind in branching:
                branch = self.branches.open(parent.branch, delivery.step, payload.kind)
            attempt = parent.attempt
            if payload.kind == "retry_signal":
                attempt = self.branches.retries[parent.branch] + 1
            depth = parent.depth + (1 if payload.kind in deepens else 0)
            if payload.kind in branching:
                depth = 0  # depth counts levels on a branch: a new branch starts at the top
            envelope = Envelope(
                session_id=self.session_id, turn=self.turn, sender=sender, payload=payload,
                parents=[parent.id], step=delivery.step, depth=depth,
                branch=branch, attempt=attempt, usage=step_usage if index == 0 else Usage(),
            )
            if payload.kind in branching and index not in keep:
                self._unrouted.add(envelope.id)
                self.branches.prune(branch, "max_breadth", depth=envelope.depth,
                                    detail=f"{payload.kind} beyond the {self.budgets.max_breadth} best")
            if isinstance(payload, Answer) and self.is_terminal_answer(envelope):
                self.complete_answer(payload)
            envelopes.append(envelope)
        return envelopes

    def _breadth_keep(self, payloads: list[Payload], branching: set[str]) -> set[int]:
        """Indexes of the alternatives that fit ``max_breadth`` (best ``score`` first, ties by order)."""
        keep: set[int] = set()
        by_kind: dict[str, list[int]] = {}
        for i, p in enumerate(payloads):
            if p.kind in branching:
                by_kind.setdefault(p.kind, []).append(i)
        for kind, indexes in by_kind.items():
            room = self.policy.breadth_capacity(self.branches.opened[kind])
            ranked = sorted(indexes, key=lambda i: (-(getattr(payloads[i], "score", None) or 0.0), i))
            keep |= set(ranked[:room])
            self.used.breadth = max(self.used.breadth, min(len(indexes), room) + self.branches.opened[kind])
        return keep

    # ------------------------------------------------------------------ admission and routing
    def _say(self, envelope: Envelope, *, keep: bool = True) -> None:
        """Stream ``envelope``; ``keep`` puts it in the transcript roles read from."""
        if keep:
            self.transcript.append(envelope)
        if self.on_envelope is not None:
            self.on_envelope(envelope)

    def start(self, question: Envelope) -> None:
        """Accept the user's question (not counted as a turn) and route it."""
        self._say(question)
        self._enqueue(question)

    def accept(self, envelopes: list[Envelope]) -> None:
        """Admit one step's outputs: budgets first, then routing into the FIFO queue."""
        t0 = time.perf_counter()
        try:
            for envelope in envelopes:
                if self.stop is not None:
                    return  # produced after the run ended: never said
                if self.branches.is_pruned(envelope.branch) and envelope.id not in self._unrouted:
                    continue  # late output of a branch pruned meanwhile (a join took the first result)
                if not self.policy.turn():
                    self._say(envelope, keep=False)
                    self.request_stop("max_turns", limit=self.budgets.max_turns, used=self.used.turns)
                    return
                if envelope.id in self._unrouted:  # an alternative cut by max_breadth
                    self._say(envelope)
                    self._announce_prune(envelope.branch, envelope)
                    continue
                if not self.policy.depth_ok(envelope.depth):
                    self._say(envelope, keep=False)
                    self._prune(envelope.branch, "max_depth", envelope,
                                detail=f"depth {envelope.depth} > {self.budgets.max_depth}")
                    continue
                if envelope.kind == "retry_signal":
                    self.branches.retries[envelope.branch] += 1
                    total = sum(self.branches.retries[b] for b in self.branches.chain(envelope.branch))
                    if not self.policy.retry_ok(total):
                        self._say(envelope, keep=False)
                        self._prune(envelope.branch, "max_retries", envelope,
                                    detail=f"retry {total} > {self.budgets.max_retries}")
                        continue
                self._say(envelope)
                if self.is_terminal_answer(envelope):
                    self.final = envelope
                    self.request_stop("done")
                    return
                self._enqueue(envelope)
        finally:
            self.metrics.runtime_s += time.perf_counter() - t0

    def _enqueue(self, envelope: Envelope) -> None:
        seen: set[str] = set()
        for index, route in enumerate(self.routes):
            if route not in matching_routes(envelope, [route], self.budgets):
                continue
            for name in route.to:
                if name in seen:
                    continue
                seen.add(name)
                if route.join is not None:
                    self._join(index, route, name, envelope)
                else:
                    self.pending.append(Delivery(envelope, name))

    # ------------------------------------------------------------------ pruning
    def _prune(self, branch: int, reason: PruneReason, at: Envelope, *, detail: str = "") -> None:
        if self.branches.prune(branch, reason, depth=at.depth, detail=detail) is not None:
            self._announce_prune(branch, at)
        self._drop_pending({branch})

    def _announce_prune(self, branch: int, at: Envelope) -> None:
        record = self.branches.info[branch].pruned
        if record is None:
            return
        # a refused message never enters the transcript: the note hangs off what it was built on
        parents = [at.id] if self.transcript.get(at.id) is not None else list(at.parents)
        note = Envelope(session_id=self.session_id, turn=self.turn, sender="supervisor",
                        payload=BranchPruned(pruned=record), parents=parents, step=new_id(),
                        depth=at.depth, branch=branch)
        self._say(note)

    def _drop_pending(self, branches: set[int]) -> None:
        self.pending = deque(d for d in self.pending
                             if not any(b in branches for b in self.branches.chain(d.envelope.branch)))

    def last_prune_reason(self) -> PruneReason | None:
        pruned = [i.pruned for i in self.branches.info.values() if i.pruned is not None]
        return pruned[-1].reason if pruned else None

    # ------------------------------------------------------------------ joins
    def _join(self, index: int, route: Route, target: str, envelope: Envelope) -> None:
        family = self.branches.family(envelope.branch)
        if not family:  # on the trunk: nothing to wait for
            self._fire(JoinWait(route, target, family, [envelope], closed=True))
            return
        wait = self._joins.setdefault((index, target, family), JoinWait(route, target, family))
        if wait.closed:
            return
        wait.items.append(envelope)
        if route.join == "first":
            wait.closed = True
            for b in self.branches.members(family):
                if b not in self.branches.chain(envelope.branch) and not self.branches.is_pruned(b):
                    self._prune(b, "join_first", envelope, detail=f"branch {envelope.branch} answered first")
            self._fire(wait)

    def _family_busy(self, family: str) -> bool:
        members = set(self.branches.members(family))
        work = [*self.pending, *self._round]
        return any(set(self.branches.chain(d.envelope.branch)) & members for d in work)

    def _fire_ready_joins(self) -> None:
        for wait in self._joins.values():
            if not wait.closed and not self._family_busy(wait.family):
                wait.closed = True
                self._fire(wait)

    def _fire(self, wait: JoinWait) -> None:
        items = wait.items
        members = self.branches.members(wait.family) if wait.family else []
        pruned = [self.branches.info[b].pruned for b in members if self.branches.info[b].pruned is not None]
        home = TRUNK
        if items:
            chain = self.branches.chain(items[0].branch)
            home = self.branches.info[chain[-2]].parent if len(chain) >= 2 else TRUNK  # type: ignore[assignment]
        payload = Join(of=wait.route.kind if wait.route.kind != "*" else (items[0].kind if items else "*"),
                       items=[e.payload for e in items], branches=[e.branch for e in items],
                       pruned=[p for p in pruned if p is not None])
        env = Envelope(session_id=self.session_id, turn=self.turn, sender="supervisor", payload=payload,
                       parents=[e.id for e in items], step=new_id(), depth=min((e.depth for e in items), default=0),
                       branch=home or TRUNK)
        self._say(env)
        self.pending.append(Delivery(env, wait.target))

    # ------------------------------------------------------------------ rounds
    def has_work(self) -> bool:
        return bool(self.pending) or bool(self._round) or any(not w.closed for w in self._joins.values())

    def next_round(self) -> list[Delivery]:
        """The deliveries to run now (concurrently), or [] when the run is over (``stop`` says why)."""
        t0 = time.perf_counter()
        try:
            if self.stop is not None or not self.check_clock():
                return []
            if not self.pending:
                self._fire_ready_joins()
            if not self.pending:
                self.request_stop("no_answer")
                return []
            batch: list[Delivery] = []
            while self.pending and len(batch) < self.concurrency:
                delivery = self.pending.popleft()
                if self.branches.is_pruned(delivery.envelope.branch):
                    continue
                batch.append(delivery)
            if not batch:
                return self.next_round()
            self._round = batch
            self._collected = {}
            return batch
        finally:
            self.metrics.runtime_s += time.perf_counter() - t0

    def collect(self, delivery: Delivery, envelopes: list[Envelope]) -> None:
        """A step came back; once the whole round is back its outputs are admitted in delivery order."""
        self._collected[delivery.step] = envelopes
        if all(d.step in self._collected for d in self._round):
            round_, collected = self._round, self._collected
            self._round, self._collected = [], {}
            for d in round_:
                self.accept(collected.get(d.step, []))


# A stated answer whose signals put it below this probability is said as a guess: what the reading
# left out (unread words, a described topic, an inferred relation) outweighed the score it was
# stated on. The playbooks' own stating line (``min_confidence``) is 0.5 too.
SIGNAL_STATING_LINE = 0.5


def _say_as_guess(answer: Answer) -> None:
    """Turn ``answer`` (in place: the run holds it) into "I don't know", its values kept as the guess."""
    signals = answer.signals
    why = []
    if signals is not None and signals.unread:
        why.append(f"it leaves {', '.join(repr(w) for w in signals.unread[:3])} unread")
    if signals is not None and signals.described:
        why.append("its topic is itself a guess")
    if signals is not None and signals.inferred:
        why.append("a relation was inferred, not named")
    said = "; ".join(why) or "what the reading knows"
    guess = ", ".join(v.label for v in answer.values[:5])
    answer.text = (f"I don't know: my reading is only a guess ({said}; probability {answer.confidence:.2f}). "
                   f"Best guess: {guess}.")
    answer.status, answer.grounded = "unknown", False
    answer.guess, answer.values = list(answer.values), []
