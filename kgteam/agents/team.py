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
from collections.abc import AsyncIterator, Callable
from typing import Any

import structlog
from autogen_core import CancellationToken

from kgteam.agents.accounting import AccountingModel, TimedTools
from kgteam.agents.bus import BusTeam, RoleAgent, agent_name_for, run_bus
from kgteam.agents.sessions import SessionStore
from kgteam.agents.supervisor import RunState, StopReason
from kgteam.agents.trace import RunTrace
from kgteam.llm.base import ChatModel
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer, BudgetExceeded, Question
from kgteam.protocols.routes import Route
from kgteam.roles.base import BudgetView, Role, RoleContext, TraceSink

log = structlog.get_logger("kgteam.team")

FINALIZE_TIMEOUT_S = 5.0  # finalize must be quick; a hung finalize must not hang the run
TEARDOWN_GRACE_S = 2.0  # after a stop request, how long the bus may take to wind down
CANCEL_GRACE_S = 1.0  # when ask itself is cancelled, how long the torn-down bus may take to end

EventCallback = Callable[[Envelope], Any]


def cancelled_answer() -> Answer:
    return Answer(text="Stopped before an answer was found.", status="unknown", stopped_by="cancelled")


class TeamConfigError(ValueError):
    """The roles and routes do not fit together (unknown role in a route, no entry role ...)."""


class TeamRunner:
    """Runs a playbook (roles + routes) on questions, within budgets."""

    def __init__(self, roles: dict[str, Role], routes: list[Route], model: ChatModel, tools: Any,
                 budgets: Budgets | None = None, entry_role: str | None = None, answer_role: str | None = None,
                 session_store: SessionStore | None = None, trace: TraceSink | None = None, *,
                 role_models: dict[str, ChatModel] | None = None):
        if not roles:
            raise TeamConfigError("a team needs at least one role")
        self.roles = dict(roles)
        self.model = model
        self.role_models = dict(role_models or {})
        self.tools = tools
        self.budgets = budgets or Budgets()
        self.session_store = session_store
        self.trace = trace
        self.routes = list(routes)
        unknown = sorted({name for r in self.routes for name in r.to if name not in self.roles})
        if unknown:
            raise TeamConfigError(f"routes name unknown roles {unknown}; roles are {sorted(self.roles)}")
        for name in (entry_role, answer_role):
            if name is not None and name not in self.roles:
                raise TeamConfigError(f"role {name!r} is not in the team {sorted(self.roles)}")
        if not any(r.kind in ("question", "*") for r in self.routes):
            entry = entry_role or next(
                (n for n, r in self.roles.items() if "question" in getattr(r, "consumes", ())), None)
            if entry is None:
                raise TeamConfigError("no route for 'question' and no role consumes questions: set entry_role")
            self.routes.insert(0, Route(kind="question", to=[entry], sender="user"))
        self.entry_role = entry_role
        self.answer_role = answer_role or next(
            (n for n, r in self.roles.items() if "answer" in getattr(r, "produces", ())), None)
        self._agent_names = {name: agent_name_for(name, i) for i, name in enumerate(self.roles)}
        self._memory_history: dict[str, list[tuple[str, Answer]]] = {}
        self._memory_turns: dict[str, int] = {}
        self.last_run: RunState | None = None  # for benchmarks and the chat's /budget
        # the loop keeps only weak references to tasks: an async listener's task is held here until it ends
        self._listener_tasks: set[asyncio.Future[Any]] = set()

    # -- public API ---------------------------------------------------------------------------
    async def ask(self, question: str, *, session_id: str | None = None,
                  on_event: EventCallback | None = None, cancel: asyncio.Event | None = None) -> Answer:
        """Answer one question (one turn of ``session_id``). Never raises for run failures; a
        cancelled caller gets its ``CancelledError`` back after the run is torn down."""
        session_id = session_id or uuid.uuid4().hex[:12]
        started = time.monotonic()
        store = self.session_store
        if store is not None:
            turn = store.begin_turn(session_id, question)
            history = store.history(session_id)
        else:
            turn = self._memory_turns.get(session_id, 0)
            self._memory_turns[session_id] = turn + 1
            history = list(self._memory_history.get(session_id, []))
        state = RunState(session_id=session_id, turn=turn, routes=self.routes, roles=self.roles,
                         budgets=self.budgets, started=started)
        self.last_run = state
        trace = RunTrace(session_id, turn, store, self.trace)
        log.info("question_started", session_id=session_id, turn=turn, question=question)

        def emit(envelope: Envelope) -> None:
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
                     cancel: asyncio.Event | None = None) -> AsyncIterator[Envelope]:
        """Yield every envelope as it happens: the question first, the final answer last.

        Leaving the loop early cancels the run.
        """
        queue: asyncio.Queue[Envelope | None] = asyncio.Queue()
        cancel = cancel or asyncio.Event()
        task = asyncio.create_task(self.ask(question, session_id=session_id, on_event=queue.put_nowait,
                                            cancel=cancel))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while True:
                item = await queue.get()
                if item is None:
                    break
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
    def _context(self, name: str, state: RunState, trace: RunTrace, history: list[tuple[str, Answer]]
                 ) -> RoleContext:
        model = self.role_models.get(name, self.model)
        return RoleContext(
            model=AccountingModel(model, state, trace, role=name),
            tools=TimedTools(self.tools, state, trace) if self.tools is not None else None,  # type: ignore[arg-type]
            trace=trace, transcript=state.transcript, history=history,
            budgets=BudgetView(self.budgets, state.used), session_id=state.session_id,
        )

    async def _run(self, question: str, state: RunState, trace: RunTrace, history: list[tuple[str, Answer]],
                   emit: Callable[[Envelope], None], cancel: asyncio.Event | None) -> Answer:
        contexts = {name: self._context(name, state, trace, history) for name in self.roles}
        agents = [RoleAgent(self._agent_names[name], name, role, state, contexts[name])
                  for name, role in self.roles.items()]
        team = BusTeam(agents, state, self._agent_names)
        question_env = Envelope(session_id=state.session_id, turn=state.turn, sender="user",
                                payload=Question(text=question))
        token = CancellationToken()
        bus_error: list[BaseException] = []

        async def consume() -> None:
            try:
                async for envelope in run_bus(team, question_env, token):
                    emit(envelope)
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
        return await self._conclude(state, trace, history, emit, contexts)

    async def _conclude(self, state: RunState, trace: RunTrace, history: list[tuple[str, Answer]],
                        emit: Callable[[Envelope], None], contexts: dict[str, RoleContext]) -> Answer:
        stop = state.stop or StopReason("no_answer")
        last_id = state.transcript[-1].id if state.transcript else None
        parents = [last_id] if last_id else []
        if stop.reason == "done" and state.final is not None:
            answer = state.final.payload
            assert isinstance(answer, Answer)
            if state.final.id not in state.emitted:  # a torn-down bus may not have streamed it
                emit(state.final)
            return answer
        if stop.is_budget:
            exceeded = BudgetExceeded(budget=stop.reason, limit=float(stop.limit or 0), used=float(stop.used or 0))  # type: ignore[arg-type]
            env = Envelope(session_id=state.session_id, turn=state.turn, sender="supervisor", payload=exceeded,
                           parents=parents, depth=state.used.depth)
            state.transcript.append(env)
            emit(env)
            parents = [env.id]
            trace.record("budget_exceeded", role="supervisor", budget=stop.reason, limit=stop.limit, used=stop.used)
        sender = "supervisor"
        if stop.reason == "error":
            answer = Answer(text=f"Sorry, the run failed: {stop.error}", status="error", stopped_by="error",
                            error=stop.error)
        elif stop.reason == "cancelled":
            answer = cancelled_answer()
        else:
            stopped_by = "done" if stop.reason == "no_answer" else stop.reason
            answer = None
            if self.answer_role is not None:
                answer = await self._finalize(self.answer_role, contexts[self.answer_role], stop.reason, trace)
                if answer is not None:
                    sender = self.answer_role
            if answer is None:
                answer = Answer(text="I don't know.", status="unknown")
            answer.stopped_by = stopped_by
        state.complete_answer(answer)
        env = Envelope(session_id=state.session_id, turn=state.turn, sender=sender, payload=answer,
                       parents=parents)
        state.transcript.append(env)
        emit(env)
        return answer

    async def _finalize(self, name: str, ctx: RoleContext, reason: str, trace: RunTrace) -> Answer | None:
        role = self.roles[name]
        finalize = getattr(role, "finalize", None)
        if finalize is None:
            return None
        try:
            result = finalize(ctx, reason)
            if inspect.isawaitable(result):
                result = await asyncio.wait_for(result, FINALIZE_TIMEOUT_S)
        except Exception as exc:  # includes BudgetExhausted: the budgets are spent by now
            trace.record("finalize_failed", role=name, reason=reason, error=f"{type(exc).__name__}: {exc}")
            return None
        if result is not None and not isinstance(result, Answer):
            trace.record("finalize_failed", role=name, reason=reason, error=f"returned {type(result).__name__}")
            return None
        if result is not None:
            trace.record("finalized", role=name, reason=reason, status=result.status)
        return result
