"""Who hears about a model call being retried, while it waits (the run's trace, a server's stream).

The model clients are shared by every run of a team, so the listener is not an attribute of the
client: it is a context variable that the runtime sets around one role's call (each run is a task
of its own, so concurrent runs never hear each other's retries).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class ModelRetry:
    """One failed attempt that will be tried again: retry ``retry`` of at most ``of``, after ``wait_s``."""

    retry: int
    of: int
    reason: str  # short, for people: "model not reachable", "model server busy (HTTP 503)" ...
    wait_s: float

    @property
    def message(self) -> str:
        return f"{self.reason}, retry {self.retry}/{self.of}"


RetryListener = Callable[[ModelRetry], None]
_listener: ContextVar[RetryListener | None] = ContextVar("kgteam_model_retry_listener", default=None)


@contextlib.contextmanager
def retries_heard_by(listener: RetryListener) -> Iterator[None]:
    """Calls made inside the block tell ``listener`` of each retry before waiting for it."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def announce_retry(retry: ModelRetry) -> None:
    """Tell the current listener, if any; a failing listener never breaks the call."""
    listener = _listener.get()
    if listener is not None:
        with contextlib.suppress(Exception):
            listener(retry)
