"""TeamRunner: ask a team a question; get a well-formed Answer back, always.

One ``ask`` = one turn of a session: the question goes on a fresh AutoGen bus (see
:mod:`kgteam.agents.bus`), every envelope is persisted and streamed as it happens, and the run
ends in exactly one of these ways (``Answer.stopped_by``):

* ``done`` — a role produced a terminal answer (an ``Answer`` no route consumes), or the bus ran
  dry (then the answer role is asked to ``finalize``; else "I don't know");
* a budget name — a ``BudgetExceeded`` envelope, then ``finalize`` / "I don't know";
* ``cancelled`` — the ``cancel`` event was set (Ctrl-C, stop button); in-flight model and tool
  awaits are cancelled. Cancelling the task running ``ask`` ends the bus too and closes the turn
  as cancelled, then re-raises;
* ``error`` — a role raised (or the model failed for good): ``status="error"`` and ``error``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import structlog
from autogen_core import CancellationToken

from kgteam.agents.accounting import AccountingModel, tool_trace_hook
from kgteam.agents.budget_policy import StopReason
from kgteam.agents.bus import BusTeam, RoleAgent, agent_name_for, run_bus, tag_answers
from kgteam.agents.logging import quiet_by_default
from kgteam.agents.sessions import SessionStore
from kgteam.agents.supervisor import DEFAULT_CONCURRENCY, Delivery, ModelWait, Supervisor
from kgteam.agents.trace import RunTrace, TraceTap
from kgteam.llm.base import ChatModel
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.calibration import CalibrationMap
from kgteam.protocols.envelope import Envelope, new_id
from kgteam.protocols.errors import KgteamError
from kgteam.protocols.payloads import Answer, BudgetExceeded, Question
from kgteam.protocols.routes import Route
from kgteam.roles.base import Role, RoleContext, TraceSink
from kgteam.tools.tool_cache import ToolCache
from kgteam.tools.toolbox import Toolbox

quiet_by_default()
log = structlog.get_logger("kgteam.team")

FINALIZE_TIMEOUT_S = 5.0  # finalize must be quick; a hung finalize must not hang the run
TEARDOWN_GRACE_S = 2.0  # after a stop request, how long the bus may take to wind down
CANCEL_GRACE_S = 1.0  # when ask itself is cancelled, how long the torn-down bus may take to end

EventCallback = Callable[[Envelope], Any]
T = TypeVar("T")


async def _off_loop(store: SessionStore, call: Callable[..., T], *args: Any) -> T:
    """A store call that round-trips to a server runs in a worker thread, so the event loop keeps
    serving other sessions meanwhile; a local store (SQLite) is called directly."""
    if store.network:
        return await asyncio.to_thread(call, *args)
    return call(*args)


def cancelled_answer() -> Answer:
    return Answer(text="Stopped before an answer was found.", status="unknown", stopped_by="cancelled")


class TeamWiringError(KgteamError, ValueError):
    """Roles and routes handed to ``TeamRunner`` do not fit (unknown role in a route, no entry role)."""


class TeamRunner:
    """Runs a playbook (roles + routes) on questions, within budgets."""

    def __init__(self, roles: dict[str, Role], routes: list[Route], model: ChatModel, tools: Any,
                 budgets: Budgets | None = None, entry_role: str | None = None, answer_role: str | None = None,
                 session_store: SessionStore | None = None, trace: TraceSink | None = None, *,
                 role_models: dict[str, ChatModel] | None = None, grants: dict[str, list[str]] | None = None,
                 concurrency: int = DEFAULT_CONCURRENCY, kg: Any = None, calibration: CalibrationMap | None = None):
        if not roles:
            raise TeamWiringError("a team needs at least one role")
        self.roles = dict(roles)
        self.model = model
        self.role_models = dict(role_models or {})
        # a KGTools (tests, scripts) offers its own tools; a team built from YAML passes a Toolbox
        self.tools: Toolbox = tools if isinstance(tools, Toolbox) else (
            tools.toolbox() if tools is not None and hasattr(tools, "toolbox") else Toolbox())
        self.kg = kg if kg is not None or isinstance(tools, Toolbox) else tools  # the KG tools, for the eval harness
        self.grants = {name: list(grants[name]) if grants and name in grants else list(getattr(role, "tools", ()))
                       for name, role in roles.items()}
        self.concurrency = concurrency
        self.calibration = calibration  # applied to every final answer's confidence by the supervisor
        self.budgets = budgets or Budgets()
        self.session_store = session_store
        self.trace = trace
        self.routes = list(routes)
        unknown = sorted({name for r in self.routes for name in r.to if name not in self.roles})
        if unknown:
            raise TeamWiringError(f"routes name unknown roles {unknown}; roles are {sorted(self.roles)}")
        for name in (entry_role, answer_role):
            if name is not None and name not in self.roles:
                raise TeamWiringError(f"role {name!r} is not in the team {sorted(self.roles)}")
        if not any(r.kind in ("question", "*") for r in self.routes):
            entry = entry_role or next(
                (n for n, r in self.roles.items() if "question" in getattr(r, "consumes", ())), None)
            if entry is None:
                raise TeamWiringError("no route for 'question' and no role consumes questions: set entry_role")
            self.routes.insert(0, Route(kind="question", to=[entry], sender="user"))
        self.entry_role = entry_role
        self.answer_role = answer_role or next(
            (n for n, r in self.roles.items() if "answer" in getattr(r, "produces", ())), None)
        self._agent_names = {name: agent_name_for(name, i) for i, name in enumerate(self.roles)}
        self._memory_history: dict[str, list[tuple[str, Answer]]] = {}
        self._memory_turns: dict[str, int] = {}
        self.last_run: Supervisor | None = None  # for benchmarks and the chat's /budget
        # the loop keeps only weak references to tasks: an async listener's task is held here until it ends
        self._listener_tasks: set[asyncio.Future[Any]] = set()
        # one ToolCache per run (a run is one Supervisor): the same KG call twice in a question runs once
        self._tool_caches: weakref.WeakKeyDictionary[Supervisor, ToolCache] = weakref.WeakKeyDictionary()

    # -- public API ---------------------------------------------------------------------------
    async def ask(self, question: str, *, session_id: str | None = None,
                  on_event: EventCallback | None = None, cancel: asyncio.Event | None = None,
                  on_trace: TraceTap | None = None, turn: int | None = None) -> Answer:
        """Answer one question (one turn of ``session_id``). Never raises for run failures; a
        cancelled caller gets its ``CancelledError`` back after the run is torn down.

        Runs of different sessions may be awaited at once (a server does): each has its own bus and
        supervisor; roles, models and tools are shared and keep no per-run state. ``on_trace``
        hears this run's trace events (tool and LLM calls) as they are recorded. ``turn`` is one the
        caller began already with ``session_store.begin_turn`` (a server announces it at once)."""
        session_id = session_id or uuid.uuid4().hex[:12]
        started = time.monotonic()
        store = self.session_store
        if store is not None:
            turn = await _off_loop(store, store.begin_turn, session_id, question) if turn is None else turn
            history = await _off_loop(store, store.history, session_id)
        else:
            turn = self._memory_turns.get(session_id, 0)
            self._memory_turns[session_id] = turn + 1
            history = list(self._memory_history.get(session_id, []))
        state = Supervisor(session_id, turn, self.routes, self.roles, self.budgets, started=started,
                           concurrency=self.concurrency, model_name=getattr(self.model, "name", None),
                           calibration=self.calibration)
        state.evidence_tagger = getattr(self.kg, "tag_evidence", None)
        self.last_run = state
        trace = RunTrace(session_id, turn, store, self.trace, tap=on_trace)
        log.info("question_started", session_id=session_id, turn=turn, question=question)

        def emit(envelope: Envelope) -> None:
            if envelope.id in state.emitted:
                return
            state.emitted.add(envelope.id)
            if store is not None:
                store.append_envelope(envelope)
            if on_event is not None:
                try:
                    result = on_event(envelope)
                    if inspect.isawaitable(result):
                        self._keep_listener_task(asyncio.ensure_future(result))
                except Exception as exc:  # a broken listener must not break the run
                    log.warning("on_event_failed", error=str(exc))

        state.on_envelope = emit
        try:
            answer = await self._run(question, state, trace, history, emit, cancel)
        except asyncio.CancelledError:  # the caller gave up (wait_for, task.cancel): close the turn anyway
            answer = state.complete_answer(cancelled_answer())
            last = state.transcript[-1].id if state.transcript else None
            with contextlib.suppress(Exception):
                emit(Envelope(session_id=session_id, turn=turn, sender="supervisor", payload=answer,
                              parents=[last] if last else []))
            log.info("question_cancelled", session_id=session_id, turn=turn, llm_calls=answer.cost.llm_calls)
            with contextlib.suppress(Exception):
                self._finish_turn(session_id, turn, question, answer)
            raise
        except Exception as exc:  # last line of defence: ask never raises for run failures
            log.exception("run_failed", session_id=session_id, turn=turn)
            answer = Answer(text=f"Error: {type(exc).__name__}: {exc}", status="error", stopped_by="error",
                            error=f"{type(exc).__name__}: {exc}")
            state.complete_answer(answer)
            with contextlib.suppress(Exception):
                emit(Envelope(session_id=session_id, turn=turn, sender="supervisor", payload=answer))
        log.info("question_finished", session_id=session_id, turn=turn, status=answer.status,
                 stopped_by=answer.stopped_by, grounded=answer.grounded, llm_calls=answer.cost.llm_calls,
                 tokens=answer.cost.total_tokens, seconds=round(answer.cost.seconds, 3), error=answer.error)
        if store is not None:
            await _off_loop(store, store.finish_turn, session_id, turn, answer)
        else:
            self._finish_turn(session_id, turn, question, answer)
        return answer

    def _finish_turn(self, session_id: str, turn: int, question: str, answer: Answer) -> None:
        if self.session_store is not None:
            self.session_store.finish_turn(session_id, turn, answer)
        else:
            self._memory_history.setdefault(session_id, []).append((question, answer))

    def _keep_listener_task(self, task: asyncio.Future[Any]) -> None:
        self._listener_tasks.add(task)
        task.add_done_callback(self._listener_done)

    def _listener_done(self, task: asyncio.Future[Any]) -> None:
        self._listener_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:  # retrieved: no "never retrieved" noise
            log.warning("on_event_failed", error=str(task.exception()))

    async def stream(self, question: str, *, session_id: str | None = None,
                     cancel: asyncio.Event | None = None, on_trace: TraceTap | None = None
                     ) -> AsyncIterator[Envelope]:
        """Yield every envelope as it happens: the question first, the final answer last.

        Leaving the loop early cancels the run. With a session store, an envelope is yielded only
        once the store has committed it: whatever a client was shown survives a crash.
        """
        queue: asyncio.Queue[Envelope | None] = asyncio.Queue()
        cancel = cancel or asyncio.Event()
        task = asyncio.create_task(self.ask(question, session_id=session_id, on_event=queue.put_nowait,
                                            cancel=cancel, on_trace=on_trace))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while True:
                item = await queue.get()
                if item is None:
                    break
                if self.session_store is not None:
                    await self.session_store.wait_written()
                yield item
        finally:
            if not task.done():
                cancel.set()
            await task

    def history(self, session_id: str) -> list[tuple[str, Answer]]:
        if self.session_store is not None:
            return self.session_store.history(session_id)
        return list(self._memory_history.get(session_id, []))

    # -- one run ------------------------------------------------------------------------------
    def _context(self, name: str, state: Supervisor, trace: RunTrace, history: list[tuple[str, Answer]],
                 delivery: Delivery | None = None) -> RoleContext:
        """A role's context for one step (lineage of the handled message) or for ``finalize``
        (no message; ``run`` shows every branch)."""
        role = self.roles[name]
        model = self.role_models.get(name, self.model)
        cache = self._tool_caches.setdefault(state, ToolCache())
        tools = (self.tools.only(self.grants.get(name, []), owner=name)
                 .with_hook(tool_trace_hook(state, trace, name)).with_cache(cache))
        ctx = RoleContext(model=AccountingModel(model, state, trace, role=name), tools=tools, trace=trace,
                          history=history, session_id=state.session_id)
        if delivery is not None:
            ctx.message = delivery.envelope
            ctx.lineage = state.lineage(delivery.envelope, role)
            ctx.budgets = state.budget_view(delivery.envelope)
        else:
            ctx.run = state.run_view(role)
            ctx.lineage = ctx.run.branches[-1].lineage if ctx.run.branches else ctx.lineage
            ctx.budgets = state.budget_view()
        return ctx

    async def _run(self, question: str, state: Supervisor, trace: RunTrace, history: list[tuple[str, Answer]],
                   emit: Callable[[Envelope], None], cancel: asyncio.Event | None) -> Answer:
        agents = [RoleAgent(self._agent_names[name], name, role, state,
                            lambda d, n=name: self._context(n, state, trace, history, d))
                  for name, role in self.roles.items()]
        team = BusTeam(agents, state, self._agent_names)
        question_env = Envelope(session_id=state.session_id, turn=state.turn, sender="user",
                                payload=Question(text=question))
        token = CancellationToken()
        bus_error: list[BaseException] = []

        async def consume() -> None:  # drives the bus; the supervisor streams what it admits
            try:
                async for _ in run_bus(team, question_env, token):
                    pass
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # AutoGen surfaced an error of its own
                bus_error.append(exc)

        bus = asyncio.create_task(consume())
        waiters: set[asyncio.Future[Any]] = {bus}
        cancel_wait: asyncio.Task[Any] | None = None
        if cancel is not None:
            cancel_wait = asyncio.create_task(cancel.wait())
            waiters.add(cancel_wait)
        try:
            try:
                await asyncio.wait(waiters, timeout=max(state.remaining_s(), 0.0),
                                   return_when=asyncio.FIRST_COMPLETED)
            except BaseException:  # the task running ask was cancelled: the bus must not outlive it
                if not bus.done():
                    state.request_stop("cancelled")
                    token.cancel()
                    bus.cancel()
                    await asyncio.wait({bus}, timeout=CANCEL_GRACE_S)
                raise
            if not bus.done():
                if cancel is not None and cancel.is_set():
                    state.request_stop("cancelled")
                else:
                    state.budget_stop("timeout_s", round(state.elapsed(), 3))
                await asyncio.wait({bus}, timeout=TEARDOWN_GRACE_S)
            if not bus.done():  # the bus did not wind down: tear it down
                token.cancel()
                bus.cancel()
                await asyncio.wait({bus}, timeout=TEARDOWN_GRACE_S)  # never wait_for: it can hang
        finally:
            if cancel_wait is not None:
                cancel_wait.cancel()
        if bus_error and (state.stop is None or state.stop.reason in ("done", "no_answer")) and state.final is None:
            state.stop = StopReason("error", error=f"runtime error: {bus_error[0]}")
        state.used.seconds = state.elapsed()
        return await self._conclude(state, trace, history, emit)

    async def _conclude(self, state: Supervisor, trace: RunTrace, history: list[tuple[str, Answer]],
                        emit: Callable[[Envelope], None]) -> Answer:
        stop = state.stop or StopReason("no_answer")
        last_id = state.transcript[-1].id if len(state.transcript) else None
        parents = [last_id] if last_id else []
        if stop.reason == "done" and state.final is not None:
            answer = state.final.payload
            assert isinstance(answer, Answer)
            if state.final.id not in state.emitted:  # a torn-down bus may not have streamed it
                emit(state.final)
            return answer
        # a run that went dry after its branches were pruned stopped because of that budget
        pruned_by = state.last_prune_reason() if stop.reason == "no_answer" else None
        budget = stop.reason if stop.is_budget else pruned_by if pruned_by in ("max_depth", "max_breadth",
                                                                                "max_retries") else None
        if budget is not None:
            limit = stop.limit if stop.is_budget else state.policy.limit(budget)
            used = stop.used if stop.is_budget else getattr(state.used, {"max_depth": "depth", "max_breadth": "breadth",
                                                                         "max_retries": "retries"}[budget])
            exceeded = BudgetExceeded(budget=budget, limit=float(limit or 0), used=float(used or 0))  # type: ignore[arg-type]
            env = Envelope(session_id=state.session_id, turn=state.turn, sender="supervisor", payload=exceeded,
                           parents=parents, step=new_id(), depth=state.used.depth)
            state.transcript.append(env)
            emit(env)
            parents = [env.id]
            trace.record("budget_exceeded", role="supervisor", budget=budget, limit=limit, used=used)
        sender = "supervisor"
        if stop.reason == "error":
            answer = Answer(text=f"Sorry, the run failed: {stop.error}", status="error", stopped_by="error",
                            error=stop.error)
        elif stop.reason == "cancelled":
            answer = cancelled_answer()
        else:
            answer, finalizer = await self._best_so_far(state, trace, history, budget or stop.reason)
            if finalizer is not None:
                sender = finalizer
            answer.stopped_by = budget or "done"  # type: ignore[assignment]
            if stop.reason == "timeout_s" and state.stalled_on is not None:
                answer = _model_stalled(answer, state.stalled_on, state.budgets.timeout_s)
                trace.record("model_stalled", role=state.stalled_on.role, model=state.stalled_on.model,
                             base_url=state.stalled_on.base_url, waited_s=round(state.stalled_on.waited_s, 3))
        if state.evidence_tagger is not None:
            await tag_answers([answer], state.evidence_tagger)
        state.complete_answer(answer)
        env = Envelope(session_id=state.session_id, turn=state.turn, sender=sender, payload=answer,
                       parents=parents, step=new_id())
        state.transcript.append(env)
        emit(env)
        return answer

    async def _best_so_far(self, state: Supervisor, trace: RunTrace, history: list[tuple[str, Answer]],
                           reason: str) -> tuple[Answer, str | None]:
        """The answer role's ``finalize`` first, then every other role that offers one; else "I don't know"."""
        order = [self.answer_role] if self.answer_role is not None else []
        order += [n for n, r in self.roles.items() if n not in order and r.offers_finalize()]
        for name in order:
            answer = await self._finalize(name, self._context(name, state, trace, history), reason, trace)
            if answer is not None:
                return answer, name
        return Answer(text="I don't know.", status="unknown"), None

    async def _finalize(self, name: str, ctx: RoleContext, reason: str, trace: RunTrace) -> Answer | None:
        role = self.roles[name]
        try:
            result = await asyncio.wait_for(role.finalize(ctx, reason), FINALIZE_TIMEOUT_S)
        except Exception as exc:  # includes BudgetExhausted: the budgets are spent by now
            trace.record("finalize_failed", role=name, reason=reason, error=f"{type(exc).__name__}: {exc}")
            return None
        if result is not None and not isinstance(result, Answer):
            trace.record("finalize_failed", role=name, reason=reason, error=f"returned {type(result).__name__}")
            return None
        if result is not None:
            trace.record("finalized", role=name, reason=reason, status=result.status)
        return result


def _model_stalled(answer: Answer, wait: ModelWait, limit_s: float) -> Answer:
    """A run whose time ran out inside a model call says so: a hung model is an error, not "I don't know".

    An answer the roles could still give from what they had (a grounded finalize) is kept, with the
    stalled model named beside it.
    """
    note = f"{wait.describe()}; the run's time budget (timeout_s={limit_s:g} s) ran out while waiting for it"
    if answer.status == "answered":
        return answer.model_copy(update={"error": note})
    return answer.model_copy(update={"text": f"No answer: {note}.", "status": "error", "error": note})
