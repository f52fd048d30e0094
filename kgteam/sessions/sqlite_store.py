"""The SQLite session store: one file, WAL, one commit per message; the default.

``synchronous=NORMAL`` in WAL mode: each commit survives a process kill (not a power cut), so a
killed run loses nothing it had emitted. Trace events are buffered and written in the same
transaction as the next envelope (or at turn end): a kill loses at most the events since the
last message, for a third of the commits. Commits are local (tens of microseconds), so the
runtime calls this store on its event loop (``network = False``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import STORED, Answer
from kgteam.sessions.migrations import SCHEMA_VERSION_TABLE, pending
from kgteam.sessions.records import (
    TURN_STATUSES,
    EndStatus,
    SessionInfo,
    SessionStoreError,
    TurnRecord,
    plain_text,
    status_after,
)
from kgteam.sessions.workers import local_worker_alive, local_worker_id


def _now() -> str:
    return datetime.now(UTC).isoformat()


class SqliteSessionStore:
    """SQLite session store; safe to share between threads and concurrent runs of one process,
    and between processes on one machine."""

    network = False

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}" if str(path) != ":memory:" else "sqlite:///:memory:"
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise SessionStoreError(f"cannot open the session database {self.path}: {exc}") from None
        self.worker = local_worker_id()
        self._seq: dict[tuple[str, int, str], int] = {}
        self._pending_events: list[tuple[Any, ...]] = []
        self._open_turns: set[tuple[str, int]] = set()
        self._interrupt_dead_turns(None)

    def _migrate(self) -> None:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")  # one opener at a time applies the steps
            try:
                self._conn.execute(SCHEMA_VERSION_TABLE["sqlite"])
                current = int(self._conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0])
                for step in pending(current, str(self.path)):
                    for statement in step.sqlite:
                        self._conn.execute(statement)
                    self._conn.execute("INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                                       (step.version, step.name, _now()))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def schema_version(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0])

    def journal_mode(self) -> str:
        with self._lock:
            return str(self._conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()

    def close(self) -> None:
        """Writes what is buffered; turns this store began and never ended become ``interrupted``."""
        with self._lock:
            if self._conn is None:
                return
            self.flush()
            for session_id, turn in list(self._open_turns):
                self.end_turn(session_id, turn, "interrupted")
            self._conn.close()
            self._conn = None  # type: ignore[assignment]

    def __enter__(self) -> SqliteSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------------
    def _transaction(self, begin: str = "BEGIN") -> _Transaction:
        return _Transaction(self._conn, begin)

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
            (session_id, now, now, plain_text(title)),
        )

    def create_session(self, session_id: str, *, title: str | None = None, owner: str | None = None) -> SessionInfo:
        """A new, empty session (``SessionStoreError`` if the id is taken)."""
        now = _now()
        with self._lock:
            try:
                self._conn.execute(
                    "INSERT INTO sessions (session_id, created_at, updated_at, title, owner) VALUES (?, ?, ?, ?, ?)",
                    (session_id, now, now, plain_text(title), owner))
            except sqlite3.IntegrityError:
                raise SessionStoreError(f"session {session_id!r} exists already") from None
        info = self.session(session_id)
        assert info is not None
        return info

    def begin_turn(self, session_id: str, question: str) -> int:
        with self._lock, self._transaction("BEGIN IMMEDIATE"):
            self._touch(session_id, title=question[:80])
            row = self._conn.execute(
                "SELECT COALESCE(MAX(turn), -1) FROM turns WHERE session_id=?", (session_id,)
            ).fetchone()
            turn = int(row[0]) + 1
            self._conn.execute(
                "INSERT INTO turns (session_id, turn, question, status, started_at, worker) "
                "VALUES (?, ?, ?, 'running', ?, ?)",
                (session_id, turn, plain_text(question), _now(), self.worker),
            )
            self._open_turns.add((session_id, turn))
            return turn

    def flush(self) -> None:
        """Write buffered trace events now."""
        with self._lock:
            if self._pending_events:
                with self._transaction():
                    self._write_events()

    async def wait_written(self) -> None:
        """Appends commit before they return: nothing to wait for."""

    def _write_events(self) -> None:
        if self._pending_events:
            self._conn.executemany(
                "INSERT INTO events (session_id, turn, seq, event, role, created_at, json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                self._pending_events,
            )
            self._pending_events.clear()

    def finish_turn(self, session_id: str, turn: int, answer: Answer) -> None:
        self.flush()
        with self._lock, self._transaction():
            self._conn.execute(
                "UPDATE turns SET status=?, answer_json=?, finished_at=? WHERE session_id=? AND turn=?",
                (status_after(answer), answer.model_dump_json(), _now(), session_id, turn),
            )
            self._touch(session_id)
            self._open_turns.discard((session_id, turn))

    def end_turn(self, session_id: str, turn: int, status: EndStatus) -> bool:
        """Mark a still-running turn ``interrupted`` or ``cancelled`` (no answer); False if it had ended."""
        if status not in ("interrupted", "cancelled"):
            raise ValueError(f"a turn ends as 'interrupted' or 'cancelled', not {status!r}")
        self.flush()
        with self._lock:
            changed = self._conn.execute(
                "UPDATE turns SET status=?, finished_at=? WHERE session_id=? AND turn=? AND status='running'",
                (status, _now(), session_id, turn)).rowcount
            self._open_turns.discard((session_id, turn))
        return changed > 0

    def append_envelope(self, envelope: Envelope) -> None:
        """Committed before returning, together with the trace events recorded before it."""
        row = (envelope.session_id, envelope.turn, envelope.id, envelope.kind, envelope.sender,
               envelope.created_at.isoformat(), envelope.model_dump_json())
        with self._lock, self._transaction():
            self._write_events()
            seq = self._next_seq("messages", envelope.session_id, envelope.turn)
            self._conn.execute(
                "INSERT INTO messages (session_id, turn, seq, envelope_id, kind, sender, created_at, json) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (*row[:2], seq, *row[2:]),
            )

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

    def delete_session(self, session_id: str) -> bool:
        """Remove the session and everything in it; False if there was no such session."""
        self.flush()
        with self._lock, self._transaction("BEGIN IMMEDIATE"):
            found = self._conn.execute("DELETE FROM sessions WHERE session_id=?", (session_id,)).rowcount
            for table in ("turns", "messages", "events", "session_settings"):
                found += self._conn.execute(f"DELETE FROM {table} WHERE session_id=?",  # noqa: S608
                                            (session_id,)).rowcount
            for key in [k for k in self._seq if k[0] == session_id]:
                del self._seq[key]
            self._open_turns = {t for t in self._open_turns if t[0] != session_id}
        return found > 0

    def _interrupt_dead_turns(self, session_id: str | None) -> None:
        """Running turns whose worker process is gone were cut off: mark them ``interrupted``."""
        query = "SELECT session_id, turn, worker FROM turns WHERE status='running'"
        args: tuple[Any, ...] = ()
        if session_id is not None:
            query += " AND session_id=?"
            args = (session_id,)
        with self._lock:
            dead = [(r["session_id"], r["turn"]) for r in self._conn.execute(query, args).fetchall()
                    if not local_worker_alive(r["worker"])]
            if dead:
                now = _now()
                with self._transaction():
                    self._conn.executemany(
                        "UPDATE turns SET status='interrupted', finished_at=? WHERE session_id=? AND turn=? "
                        "AND status='running'", [(now, s, t) for s, t in dead])

    # -- reading ------------------------------------------------------------------------------
    def turns(self, session_id: str) -> list[TurnRecord]:
        self._interrupt_dead_turns(session_id)
        with self._lock:
            rows = self._conn.execute(
                "SELECT * FROM turns WHERE session_id=? ORDER BY turn", (session_id,)
            ).fetchall()
        return [
            TurnRecord(
                session_id=row["session_id"], turn=row["turn"], question=row["question"],
                status=row["status"] if row["status"] in TURN_STATUSES else "done",
                answer=Answer.model_validate_json(row["answer_json"], context=STORED) if row["answer_json"] else None,
                started_at=row["started_at"], finished_at=row["finished_at"],
            )
            for row in rows
        ]

    def history(self, session_id: str) -> list[tuple[str, Answer]]:
        """Turns that ended with an answer, oldest first: what a follow-up question may refer to."""
        return [(t.question, t.answer) for t in self.turns(session_id) if t.complete and t.answer is not None]

    def incomplete_turns(self, session_id: str) -> list[TurnRecord]:
        return [t for t in self.turns(session_id) if not t.complete]

    def _infos(self, where: str, args: tuple[Any, ...]) -> list[SessionInfo]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT s.session_id, s.created_at, s.updated_at, s.title, s.owner, COUNT(t.turn) AS n, "
                "SUM(CASE WHEN t.answer_json IS NULL OR t.status = 'running' THEN 1 ELSE 0 END) AS open "
                f"FROM sessions s LEFT JOIN turns t ON t.session_id = s.session_id {where} "
                "GROUP BY s.session_id ORDER BY s.updated_at DESC, s.session_id", args,
            ).fetchall()
        return [
            SessionInfo(session_id=r["session_id"], created_at=r["created_at"], updated_at=r["updated_at"],
                        turns=int(r["n"] or 0), incomplete_turns=int(r["open"] or 0), title=r["title"],
                        owner=r["owner"])
            for r in rows
        ]

    def session(self, session_id: str) -> SessionInfo | None:
        self._interrupt_dead_turns(session_id)
        found = self._infos("WHERE s.session_id = ?", (session_id,))
        return found[0] if found else None

    def list_sessions(self, owner: str | None = None) -> list[SessionInfo]:
        """Most recently updated first; only ``owner``'s when given."""
        self._interrupt_dead_turns(None)
        return self._infos("WHERE s.owner = ?", (owner,)) if owner is not None else self._infos("", ())

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


class _Transaction:
    """``BEGIN`` … ``COMMIT``, or ``ROLLBACK`` on any exception (the connection is in autocommit)."""

    def __init__(self, conn: sqlite3.Connection, begin: str) -> None:
        self.conn = conn
        self.begin = begin

    def __enter__(self) -> None:
        self.conn.execute(self.begin)

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
