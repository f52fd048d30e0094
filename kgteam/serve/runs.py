"""Questions running in this server process: at most one per session, each a task of its own.

A run is not tied to the HTTP request that started it: a client that disconnects does not stop
it (the answer is still persisted, and the session shows it); ``cancel`` does. Its events go to
a queue that the request streaming them reads. Runs of different sessions proceed concurrently
on the one team (``TeamRunner.ask`` keeps all per-run state in the run's own supervisor).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import structlog

from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer
from kgteam.serve.events import Event, RunEvents, done_status

log = structlog.get_logger("kgteam.serve")

SHUTDOWN_GRACE_S = 5.0
T = TypeVar("T")
# events whose rows were committed before they were queued (begin_turn and finish_turn commit at
# once; an error or done event stands for no row):
# they need not wait for the store's writer, busy with other sessions' messages
COMMITTED_ALREADY = frozenset({"turn", "answer", "error", "done"})


async def off_loop(store: Any, call: Callable[..., T], *args: Any) -> T:
    """A store call that round-trips to a server (PostgreSQL) runs in a worker thread, so the loop
    goes on serving other sessions meanwhile; a local store (SQLite) is called directly."""
    if getattr(store, "network", False):
        return await asyncio.to_thread(call, *args)
    return call(*args)


class SessionBusy(Exception):  # noqa: N818 - the name says what happened
    """The session already has a question running."""


class QuestionRun:
    """One question of one session: its task, its cancel switch and its stream of events."""

    def __init__(self, session_id: str, question: str, events: RunEvents, store: Any = None):
        self.session_id = session_id
        # a store that commits in the background (PostgreSQL) is waited for before each event goes out
        self._committed = store.wait_written if store is not None and getattr(store, "network", False) else None
        self.question = question
        self.cancel = asyncio.Event()
        self.translate = events
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self.answer: Answer | None = None
        self.status = "running"
        self.task: asyncio.Task[None] | None = None
        self.done = asyncio.Event()

    @property
    def turn(self) -> int | None:
        return self.translate.turn

    def _put(self, events: list[Event]) -> None:
        for event in events:
            self.queue.put_nowait(event)

    def on_envelope(self, env: Envelope) -> None:
        """Called once the envelope is handed to the store; :meth:`events` lets it out only once
        the store has it committed: the stream never shows what the store lacks."""
        self._put(self.translate.envelope(env))

    def on_trace(self, event: str, data: dict[str, Any]) -> None:
        self._put(self.translate.trace(event, data))

    def finish(self, status: str, answer: Answer | None = None, error: dict[str, str] | None = None) -> None:
        self.status = status
        self.answer = answer
        if answer is not None:
            self._put(self.translate.answer(answer))
        if error is not None:
            self._put([("error", error)])
        self._put([("done", {"status": status})])
        self.queue.put_nowait(None)
        self.done.set()

    async def events(self, idle_s: float | None = None) -> AsyncIterator[Event | None]:
        """The run's events until ``done`` (for the one request that streams them); ``None`` after
        each ``idle_s`` without one (time for a keep-alive)."""
        while True:
            try:
                item = self.queue.get_nowait()  # no suspension while events are waiting
            except asyncio.QueueEmpty:
                try:
                    async with asyncio.timeout(idle_s):
                        item = await self.queue.get()
                except TimeoutError:
                    yield None
                    continue
            if item is None:
                return
            if self._committed is not None and item[0] not in COMMITTED_ALREADY:
                await self._committed()
            yield item


class QuestionRuns:
    """The running questions, by session."""

    def __init__(self, team: Any, max_running: int = 0, max_active: int = 0):
        self.team = team
        self.max_running = max_running
        self._runs: dict[str, QuestionRun] = {}
        # questions answered at once; the others wait in line (already announced to their client)
        self._active = asyncio.Semaphore(max_active) if max_active else None

    def __len__(self) -> int:
        return len(self._runs)

    def get(self, session_id: str) -> QuestionRun | None:
        return self._runs.get(session_id)

    def full(self) -> bool:
        return bool(self.max_running) and len(self._runs) >= self.max_running

    async def start(self, session_id: str, question: str) -> QuestionRun:
        """Start answering; raises :class:`SessionBusy` when the session has a question running."""
        if session_id in self._runs:
            raise SessionBusy(session_id)
        runner = self.team.runner
        store = self.team.store
        run = QuestionRun(session_id, question, RunEvents(session_id, question, runner.budgets, runner.routes), store)
        self._runs[session_id] = run  # taken before the first await: a second question is refused meanwhile
        # the turn is stored as running before the run starts, and announced at once: the client's
        # first event does not wait for the run to get going on a busy loop
        try:
            turn = await off_loop(store, store.begin_turn, session_id, question)
        except BaseException:
            self._runs.pop(session_id, None)
            raise
        run._put(run.translate.begin(turn))
        run.task = asyncio.create_task(self._drive(run, turn), name=f"kgteam-question-{session_id}")
        return run

    async def _drive(self, run: QuestionRun, turn: int) -> None:
        try:
            async with self._active or contextlib.nullcontext():
                answer = await self.team.aask(run.question, session=run.session_id, on_event=run.on_envelope,
                                              on_trace=run.on_trace, cancel=run.cancel, turn=turn)
        except asyncio.CancelledError:  # the server is shutting down: the runner closed the turn
            run.finish("interrupted", error={"code": "server_shutdown",
                                             "message": "the server stopped while the question was running"})
            raise
        except Exception as exc:  # the store failed, or a bug: the client hears it, the log has the rest
            with contextlib.suppress(Exception):  # the stream must end even if logging fails
                log.exception("question_failed", session_id=run.session_id)
            run.finish("error", error={"code": "internal_error",
                                       "message": f"the question failed: {type(exc).__name__}"})
        else:
            run.finish(done_status(answer), answer)
        finally:
            self._runs.pop(run.session_id, None)

    def cancel(self, session_id: str) -> bool:
        run = self._runs.get(session_id)
        if run is None or run.cancel.is_set():
            return False
        run.cancel.set()
        return True

    async def shutdown(self) -> None:
        """Stop every run (each turn is closed as cancelled) and wait a little for them to end."""
        tasks = [r.task for r in self._runs.values() if r.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            with contextlib.suppress(Exception):
                await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE_S)
