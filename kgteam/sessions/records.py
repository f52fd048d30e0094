"""What a session store hands back, and the protocol every store implements.

A session is a sequence of *turns* (one question each). A turn is ``running`` from
``begin_turn`` until ``finish_turn`` stores its answer (``done``, or ``cancelled`` when the
answer says the run was stopped); a turn that ends without an answer is marked ``cancelled``
or ``interrupted`` (its worker died mid-answer: noticed by any store on the same database).
Only turns with an answer are ``complete`` and enter ``history``, what follow-ups may refer to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

from kgteam.protocols.envelope import Envelope
from kgteam.protocols.errors import KgteamError
from kgteam.protocols.payloads import Answer

TurnStatus = Literal["running", "done", "interrupted", "cancelled"]
TURN_STATUSES: tuple[str, ...] = get_args(TurnStatus)
EndStatus = Literal["interrupted", "cancelled"]


class SessionStoreError(KgteamError, RuntimeError):
    """The session store cannot be opened or written (bad URL, newer schema, server gone)."""


@dataclass
class TurnRecord:
    session_id: str
    turn: int
    question: str
    status: TurnStatus
    answer: Answer | None
    started_at: str
    finished_at: str | None = None

    @property
    def complete(self) -> bool:
        """Ended with an answer (``done`` or ``cancelled`` with a partial answer)."""
        return self.answer is not None and self.status != "running"


@dataclass
class SessionInfo:
    session_id: str
    created_at: str
    updated_at: str
    turns: int
    incomplete_turns: int
    title: str | None = None
    owner: str | None = None


class SessionStore(Protocol):
    """What the runtime, the CLI, the trace exporter and ``kgteam serve`` need from a store.

    Methods are synchronous and thread-safe. ``network`` says whether calls round-trip to a
    server: the runtime then makes the turn-boundary calls from a worker thread and awaits
    :meth:`wait_written` before it streams an envelope (see docs/sessions.md).
    """

    network: bool
    url: str

    # turns and messages
    def begin_turn(self, session_id: str, question: str) -> int: ...
    def finish_turn(self, session_id: str, turn: int, answer: Answer) -> None: ...
    def end_turn(self, session_id: str, turn: int, status: EndStatus) -> bool: ...
    def append_envelope(self, envelope: Envelope) -> None: ...
    def append_event(self, session_id: str, turn: int, event: str, data: dict[str, Any]) -> None: ...
    def flush(self) -> None: ...
    async def wait_written(self) -> None: ...
    # sessions
    def create_session(self, session_id: str, *, title: str | None = None, owner: str | None = None) -> SessionInfo: ...
    def session(self, session_id: str) -> SessionInfo | None: ...
    def list_sessions(self, owner: str | None = None) -> list[SessionInfo]: ...
    def delete_session(self, session_id: str) -> bool: ...
    def save_settings(self, session_id: str, settings: dict[str, Any]) -> dict[str, Any]: ...
    def settings(self, session_id: str) -> dict[str, Any] | None: ...
    # reading
    def history(self, session_id: str) -> list[tuple[str, Answer]]: ...
    def turns(self, session_id: str) -> list[TurnRecord]: ...
    def incomplete_turns(self, session_id: str) -> list[TurnRecord]: ...
    def messages(self, session_id: str, turn: int | None = None) -> list[Envelope]: ...
    def events(self, session_id: str, turn: int | None = None) -> list[dict[str, Any]]: ...
    def schema_version(self) -> int: ...
    def close(self) -> None: ...


def status_after(answer: Answer) -> TurnStatus:
    """The status a turn ends in when its answer is stored."""
    return "cancelled" if answer.stopped_by == "cancelled" else "done"


def plain_text(value: str | None) -> str | None:
    """Question and title columns hold text without NUL characters (PostgreSQL refuses them);
    the question's envelope keeps the exact text."""
    return value.replace("\x00", "\ufffd") if value is not None else None
