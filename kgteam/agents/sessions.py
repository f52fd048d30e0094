"""Session persistence: every envelope and trace event is written as it happens.

SQLite (WAL, one commit per row) by default, so a killed process loses nothing it had emitted
and a session can be resumed, replayed and inspected. :class:`SessionStore` is the protocol a
PostgreSQL store (several ``kgteam serve`` workers) would implement; only SQLite exists now.

A question is a *turn*: ``begin_turn`` writes it as ``running``; ``finish_turn`` stores the
answer and marks it ``complete``. A turn still ``running`` when the store is reopened was cut
off: :meth:`SqliteSessionStore.turns` shows it as incomplete, ``history`` (what the
contextualizer sees) skips it, and the question can simply be asked again as a new turn.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    title TEXT
);
CREATE TABLE IF NOT EXISTS turns (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    question TEXT NOT NULL,
    status TEXT NOT NULL,            -- running | complete
    answer_json TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    PRIMARY KEY (session_id, turn)
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    envelope_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    sender TEXT NOT NULL,
    created_at TEXT NOT NULL,
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages (session_id, turn, seq);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    role TEXT,
    created_at TEXT NOT NULL,
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_session ON events (session_id, turn, seq);
CREATE TABLE IF NOT EXISTS session_settings (   -- what the session runs on: team, KG, model
    session_id TEXT PRIMARY KEY,
    settings_json TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class TurnRecord:
    session_id: str
    turn: int
    question: str
    complete: bool
    answer: Answer | None
    started_at: str
    finished_at: str | None = None


@dataclass
class SessionInfo:
    session_id: str
    created_at: str
    updated_at: str
    turns: int
    incomplete_turns: int
    title: str | None = None


class SessionStore(Protocol):
    """What the runtime, the CLI and the trace exporter need from a session store."""

    def begin_turn(self, session_id: str, question: str) -> int: ...
    def finish_turn(self, session_id: str, turn: int, answer: Answer) -> None: ...
    def append_envelope(self, envelope: Envelope) -> None: ...
    def append_event(self, session_id: str, turn: int, event: str, data: dict[str, Any]) -> None: ...
    def history(self, session_id: str) -> list[tuple[str, Answer]]: ...
    def turns(self, session_id: str) -> list[TurnRecord]: ...
    def list_sessions(self) -> list[SessionInfo]: ...
    def messages(self, session_id: str, turn: int | None = None) -> list[Envelope]: ...
    def save_settings(self, session_id: str, settings: dict[str, Any]) -> dict[str, Any]: ...
    def settings(self, session_id: str) -> dict[str, Any] | None: ...
    def events(self, session_id: str, turn: int | None = None) -> list[dict[str, Any]]: ...
    def create_session(self, session_id: str, *, title: str | None = None) -> SessionInfo: ...
    def delete_session(self, session_id: str) -> bool: ...


class SqliteSessionStore:
    """SQLite session store; safe to share between concurrent runs of one process."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL: each commit survives a process kill (not a power cut); much faster than FULL
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(SCHEMA)
        self._seq: dict[tuple[str, int, str], int] = {}
        # trace events are buffered and written in the same transaction as the next envelope (or
        # at turn end): a kill loses at most the events since the last message, for a third of
        # the commits
        self._pending_events: list[tuple[Any, ...]] = []

    def journal_mode(self) -> str:
        with self._lock:
            return str(self._conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------------
    def _next_seq(self, table: str, session_id: str, turn: int) -> int:
        key = (session_id, turn, table)
        if key not in self._seq:
            row = self._conn.execute(
                f"SELECT COALESCE(MAX(seq), -1) FROM {table} WHERE session_id=? AND turn=?",  # noqa: S608
                (session_id, turn),
            ).fetchone()
            self._seq[key] = int(row[0])
        self._seq[key] += 1
        return self._seq[key]

    def _touch(self, session_id: str, title: str | None = None) -> None:
        now = _now()
        self._conn.execute(
            "INSERT INTO sessions (session_id, created_at, updated_at, title) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(session_id) DO UPDATE SET updated_at=excluded.updated_at, "
            "title=COALESCE(sessions.title, excluded.title)",
            (session_id, now, now, title),
        )

    def create_session(self, session_id: str, *, title: str | None = None) -> SessionInfo:
        """An empty session (a server creates it before its first question); its title, when not
        given, becomes the first question. Creating one that exists changes nothing."""
        with self._lock:
            now = _now()
            self._conn.execute(
                "INSERT INTO sessions (session_id, created_at, updated_at, title) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(session_id) DO NOTHING", (session_id, now, now, title))
            row = self._conn.execute("SELECT * FROM sessions WHERE session_id=?", (session_id,)).fetchone()
        return SessionInfo(session_id=row["session_id"], created_at=row["created_at"], updated_at=row["updated_at"],
                           turns=0, incomplete_turns=0, title=row["title"])

    def delete_session(self, session_id: str) -> bool:
        """Remove a session and everything stored about it; False when there was none."""
        self.flush()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                found = self._conn.execute("DELETE FROM sessions WHERE session_id=?", (session_id,)).rowcount
                for table in ("turns", "messages", "events", "session_settings"):
                    found += self._conn.execute(f"DELETE FROM {table} WHERE session_id=?",  # noqa: S608
                                                (session_id,)).rowcount
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._seq = {k: v for k, v in self._seq.items() if k[0] != session_id}
        return found > 0

    def begin_turn(self, session_id: str, question: str) -> int:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._touch(session_id, title=question[:80])
                row = self._conn.execute(
                    "SELECT COALESCE(MAX(turn), -1) FROM turns WHERE session_id=?", (session_id,)
                ).fetchone()
                turn = int(row[0]) + 1
                self._conn.execute(
                    "INSERT INTO turns (session_id, turn, question, status, started_at) VALUES (?, ?, ?, 'running', ?)",
                    (session_id, turn, question, _now()),
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            return turn

    def flush(self) -> None:
        """Write buffered trace events now."""
        with self._lock:
            if self._pending_events:
                self._conn.execute("BEGIN")
                try:
                    self._write_events()
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise

    def _write_events(self) -> None:
        if self._pending_events:
            self._conn.executemany(
                "INSERT INTO events (session_id, turn, seq, event, role, created_at, json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                self._pending_events,
            )
            self._pending_events.clear()

    def finish_turn(self, session_id: str, turn: int, answer: Answer) -> None:
        self.flush()
        with self._lock:
            self._conn.execute(
                "UPDATE turns SET status='complete', answer_json=?, finished_at=? WHERE session_id=? AND turn=?",
                (answer.model_dump_json(), _now(), session_id, turn),
            )
            self._touch(session_id)

    def append_envelope(self, envelope: Envelope) -> None:
        """Committed before returning, together with the trace events recorded before it."""
        row = (envelope.session_id, envelope.turn, 0, envelope.id, envelope.kind, envelope.sender,
               envelope.created_at.isoformat(), envelope.model_dump_json())
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._write_events()
                seq = self._next_seq("messages", envelope.session_id, envelope.turn)
                self._conn.execute(
                    "INSERT INTO messages (session_id, turn, seq, envelope_id, kind, sender, created_at, json) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (*row[:2], seq, *row[3:]),
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def append_event(self, session_id: str, turn: int, event: str, data: dict[str, Any]) -> None:
        with self._lock:
            seq = self._next_seq("events", session_id, turn)
            self._pending_events.append(
                (session_id, turn, seq, event, data.get("role"), _now(), json.dumps(data, default=str)))

    def save_settings(self, session_id: str, settings: dict[str, Any]) -> dict[str, Any]:
        """Record what the session runs on (team, KG, model) the first time; later calls keep
        the first record, which is returned, so a resumed session cannot drift to another KG."""
        with self._lock:
            self._conn.execute(
                "INSERT INTO session_settings (session_id, settings_json, created_at) VALUES (?, ?, ?) "
                "ON CONFLICT(session_id) DO NOTHING", (session_id, json.dumps(settings, sort_keys=True), _now()))
        saved = self.settings(session_id)
        assert saved is not None
        return saved

    def settings(self, session_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("SELECT settings_json FROM session_settings WHERE session_id=?",
                                     (session_id,)).fetchone()
        return json.loads(row["settings_json"]) if row else None

    # -- reading ------------------------------------------------------------------------------
    def turns(self, session_id: str) -> list[TurnRecord]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT * FROM turns WHERE session_id=? ORDER BY turn", (session_id,)
            ).fetchall()
        return [
            TurnRecord(
                session_id=row["session_id"], turn=row["turn"], question=row["question"],
                complete=row["status"] == "complete",
                answer=Answer.model_validate_json(row["answer_json"]) if row["answer_json"] else None,
                started_at=row["started_at"], finished_at=row["finished_at"],
            )
            for row in rows
        ]

    def history(self, session_id: str) -> list[tuple[str, Answer]]:
        """Completed turns only, oldest first: what a follow-up question may refer to."""
        return [(t.question, t.answer) for t in self.turns(session_id) if t.complete and t.answer is not None]

    def incomplete_turns(self, session_id: str) -> list[TurnRecord]:
        return [t for t in self.turns(session_id) if not t.complete]

    def list_sessions(self) -> list[SessionInfo]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT s.session_id, s.created_at, s.updated_at, s.title, "
                "COUNT(t.turn) AS n, SUM(CASE WHEN t.status != 'complete' THEN 1 ELSE 0 END) AS open "
                "FROM sessions s LEFT JOIN turns t ON t.session_id = s.session_id "
                "GROUP BY s.session_id ORDER BY s.updated_at DESC"
            ).fetchall()
        return [
            SessionInfo(session_id=r["session_id"], created_at=r["created_at"], updated_at=r["updated_at"],
                        turns=int(r["n"] or 0), incomplete_turns=int(r["open"] or 0), title=r["title"])
            for r in rows
        ]

    def messages(self, session_id: str, turn: int | None = None) -> list[Envelope]:
        query = "SELECT json FROM messages WHERE session_id=?"
        args: tuple[Any, ...] = (session_id,)
        if turn is not None:
            query += " AND turn=?"
            args += (turn,)
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY turn, seq", args).fetchall()
        return [Envelope.model_validate_json(row["json"]) for row in rows]

    def events(self, session_id: str, turn: int | None = None) -> list[dict[str, Any]]:
        self.flush()
        query = "SELECT turn, seq, event, created_at, json FROM events WHERE session_id=?"
        args: tuple[Any, ...] = (session_id,)
        if turn is not None:
            query += " AND turn=?"
            args += (turn,)
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY turn, seq", args).fetchall()
        out = []
        for row in rows:
            data = json.loads(row["json"])
            out.append({"turn": row["turn"], "seq": row["seq"], "event": row["event"],
                        "created_at": row["created_at"], **data})
        return out
