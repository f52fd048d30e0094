"""Request slots of a model server, and how long a question was blocked waiting for one.

A llama.cpp server answers one request at a time: with several questions in flight, the others
queue. That wait is not the question's own work, so ``kgteam eval`` reports seconds per question
without it (4 concurrent questions on one local model would otherwise each report about 4 times
their own run time). Calls queue here, in the client, where the wait can be measured.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar


class WaitClock:
    """Seconds during which one question was blocked: some model call of it waiting for a slot
    and none holding one (its branches share the clock through the context they inherit)."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.queued_s = 0.0
        self._waiting = 0
        self._holding = 0
        self._blocked_since: float | None = None

    def _change(self, waiting: int, holding: int) -> None:
        now = time.perf_counter()
        if self._blocked_since is not None:
            self.queued_s += now - self._blocked_since
        self._waiting += waiting
        self._holding += holding
        self._blocked_since = now if self._waiting > 0 and self._holding == 0 else None

    @property
    def elapsed_s(self) -> float:
        """Wall time since the clock started."""
        return time.perf_counter() - self.started

    def start_waiting(self) -> None:
        self._change(+1, 0)

    def stop_waiting(self, *, acquired: bool) -> None:
        self._change(-1, +1 if acquired else 0)

    def released(self) -> None:
        self._change(0, -1)


_clock: ContextVar[WaitClock | None] = ContextVar("kgteam_wait_clock", default=None)


@contextmanager
def wait_clock() -> Iterator[WaitClock]:
    """A fresh clock for the code inside and every task it starts (one question)."""
    clock = WaitClock()
    token = _clock.set(clock)
    try:
        yield clock
    finally:
        _clock.reset(token)


class ModelSlots:
    """At most ``limit`` requests in flight to one server; shared by every client of that server."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError("a model server needs at least one slot")
        self.limit = limit
        # an asyncio.Semaphore belongs to one event loop; CLIs and tests may run several
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = self._semaphores[loop] = asyncio.Semaphore(self.limit)
        return sem

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Wait for a slot (the wait is charged to the question's clock, if any), hold it inside."""
        sem = self._semaphore()
        clock = _clock.get()
        if clock is not None:
            clock.start_waiting()
        try:
            await sem.acquire()
        except BaseException:
            if clock is not None:
                clock.stop_waiting(acquired=False)
            raise
        if clock is not None:
            clock.stop_waiting(acquired=True)
        try:
            yield
        finally:
            sem.release()
            if clock is not None:
                clock.released()
