"""The PostgreSQL session store: several ``kgteam serve`` workers share one database.

psycopg 3's ``AsyncConnectionPool`` runs on an event loop of the store's own (a daemon thread),
so the store serves callers on any loop or none (``Team.ask`` starts a loop per call).
Messages and trace events never wait for the network on the caller's thread: they are queued
and a writer task commits everything queued since its last commit in one transaction, in order
(group commit). ``flush`` and ``wait_written`` return once all that was queued before them is
committed; reads and turn changes flush first, so a caller always reads its own writes.

Each store holds a session-level advisory lock (``WORKER_LOCK``, its key) on a connection of its
own while open and writes that key on the turns it begins. The server drops the lock the moment
the worker's connection dies (``kill -9``, a lost machine), so any store reading a session marks
a running turn whose key no one holds as ``interrupted``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import random
import re
import socket
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import structlog

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

log = structlog.get_logger("kgteam.sessions")
T = TypeVar("T")

MIGRATION_LOCK = (0x6B670001, 0)  # pg_advisory_xact_lock(classid, objid) while migrating
WORKER_LOCK = 0x6B670002  # pg_advisory_lock(WORKER_LOCK, key) held by each open store
WATCHDOG_S = 10.0  # how often the liveness connection is checked (and re-made after a drop)
RETRY_MAX_S = 2.0  # longest pause between attempts to commit a batch while the server is away

INSERT_MESSAGE = ("INSERT INTO messages (session_id, turn, seq, envelope_id, kind, sender, created_at, json) "
                  "VALUES (%s, %s, %s, %s, %s, %s, %s, %s::json)")
INSERT_EVENT = ("INSERT INTO events (session_id, turn, seq, event, role, created_at, json) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s::json)")
TOUCH = ("INSERT INTO sessions (session_id, created_at, updated_at, title) VALUES (%s, %s, %s, %s) "
         "ON CONFLICT (session_id) DO UPDATE SET updated_at = EXCLUDED.updated_at, "
         "title = COALESCE(sessions.title, EXCLUDED.title)")


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _now() -> datetime:
    return datetime.now(UTC)


def _import_psycopg() -> tuple[Any, Any]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise SessionStoreError("a postgresql:// session store needs psycopg 3 and psycopg-pool: "
                                "pip install 'kgteam[postgres]'") from None
    return psycopg, psycopg_pool


class PostgresSessionStore:
    """Session store on PostgreSQL; thread-safe, shared by any number of processes."""

    network = True

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8, timeout_s: float = 30.0) -> None:
        self._psycopg, self._psycopg_pool = _import_psycopg()
        self.url = url
        self.timeout_s = timeout_s
        self._min_size, self._max_size = min_size, max_size
        self._seq: dict[tuple[str, int, str], int] = {}
        self._seq_lock = threading.Lock()
        self._open_turns: set[tuple[str, int]] = set()
        self._queue: list[tuple[str, Any]] = []
        self._queue_lock = threading.Lock()
        self._enqueued = 0
        self._written = 0
        self._dropped = 0
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kgteam-pg-sessions", daemon=True)
        self._thread.start()
        try:
            self._call(self._open())
        except BaseException:
            self._stop_loop()
            raise

    # -- the store's own loop ------------------------------------------------------------------
    def _call(self, coro: Awaitable[T], timeout: float | None = None) -> T:
        if threading.current_thread() is self._thread:
            raise RuntimeError("PostgresSessionStore called from its own loop")
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)  # type: ignore[arg-type]
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise SessionStoreError(f"the session database {redact(self.url)} did not answer in {timeout:g} s"
                                    ) from None
        except self._psycopg.OperationalError as exc:
            raise SessionStoreError(f"the session database {redact(self.url)} failed: {exc}") from None

    async def _open(self) -> None:
        self._wakeup = asyncio.Event()
        self._progress = asyncio.Condition()
        self._pool = self._psycopg_pool.AsyncConnectionPool(
            self.url, min_size=self._min_size, max_size=self._max_size, open=False, timeout=self.timeout_s,
            kwargs={"autocommit": True}, name="kgteam-sessions")
        try:
            await self._pool.open(wait=True, timeout=self.timeout_s)
        except Exception as exc:
            await self._pool.close()
            raise SessionStoreError(f"cannot connect to the session database {redact(self.url)}: {exc}") from None
        try:
            await self._migrate()
            await self._take_worker_lock()
        except BaseException:
            await self._pool.close()
            raise
        self._writer = asyncio.create_task(self._write_loop())
        self._watchdog = asyncio.create_task(self._watch_liveness())
        await self._interrupt_dead_turns(None)

    async def _migrate(self) -> None:
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", MIGRATION_LOCK)
            await conn.execute(SCHEMA_VERSION_TABLE["postgres"])
            cur = await conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version")
            current = int((await cur.fetchone())[0])
            for step in pending(current, redact(self.url)):
                for statement in step.postgres:
                    await conn.execute(statement)
                await conn.execute("INSERT INTO schema_version (version, name) VALUES (%s, %s)",
                                   (step.version, step.name))

    async def _take_worker_lock(self, key: int | None = None) -> None:
        self._liveness = await self._psycopg.AsyncConnection.connect(self.url, autocommit=True)
        while True:
            key = key or random.randint(1, 2**31 - 1)
            cur = await self._liveness.execute("SELECT pg_try_advisory_lock(%s, %s)", (WORKER_LOCK, key))
            if (await cur.fetchone())[0]:
                break
            key = None
        self.worker_key = key
        self.worker = f"{key}@{socket.gethostname()}:{os.getpid()}"

    async def _watch_liveness(self) -> None:
        """Re-make the liveness connection (and its lock) if the server dropped it."""
        while True:
            await asyncio.sleep(WATCHDOG_S)
            try:
                await self._liveness.execute("SELECT 1")
            except Exception:
                log.warning("session_store_liveness_lost", url=redact(self.url))
                try:
                    await self._liveness.close()
                    await self._take_worker_lock(self.worker_key)
                except Exception as exc:
                    log.warning("session_store_liveness_retry", error=str(exc))

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()

    def close(self) -> None:
        """Commits what is queued; turns this store began and never ended become ``interrupted``."""
        if self._closed:
            return
        try:
            self.flush()
            for session_id, turn in list(self._open_turns):
                self.end_turn(session_id, turn, "interrupted")
        except SessionStoreError as exc:
            log.error("session_store_close_failed", error=str(exc), unwritten=self._enqueued - self._written)
        finally:
            self._closed = True
            try:
                self._call(self._shutdown(), timeout=self.timeout_s)
            finally:
                self._stop_loop()

    async def _shutdown(self) -> None:
        for task in (self._writer, self._watchdog):
            task.cancel()
        await asyncio.gather(self._writer, self._watchdog, return_exceptions=True)
        await self._liveness.close()
        await self._pool.close()

    def __enter__(self) -> PostgresSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the writer ----------------------------------------------------------------------------
    def _enqueue(self, kind: str, item: Any) -> None:
        if self._closed:
            raise SessionStoreError("the session store is closed")
        with self._queue_lock:
            self._queue.append((kind, item))
            self._enqueued += 1
        self._loop.call_soon_threadsafe(self._wakeup.set)

    async def _write_loop(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while True:
                with self._queue_lock:
                    batch, self._queue = self._queue, []
                    upto = self._enqueued
                if not batch:
                    break
                await self._commit(batch)
                async with self._progress:
                    self._written = upto
                    self._progress.notify_all()

    async def _commit(self, batch: list[tuple[str, Any]]) -> None:
        """One transaction for the whole batch; retried while the server is unreachable. A batch
        the server refuses for its content is retried row by row and the refused rows logged."""
        delay = 0.05
        while True:
            try:
                async with self._pool.connection() as conn, conn.transaction():
                    await self._apply(conn, batch)
                return
            except self._psycopg.OperationalError as exc:
                log.warning("session_store_write_retry", error=str(exc), rows=len(batch))
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_S)
            except self._psycopg.Error:
                break
        for item in batch:
            try:
                async with self._pool.connection() as conn, conn.transaction():
                    await self._apply(conn, [item])
            except self._psycopg.Error as exc:
                self._dropped += 1
                log.error("session_store_row_refused", kind=item[0], error=str(exc))

    @staticmethod
    async def _apply(conn: Any, batch: list[tuple[str, Any]]) -> None:
        async with conn.cursor() as cur:
            messages = [item for kind, item in batch if kind == "message"]
            events = [item for kind, item in batch if kind == "event"]
            if messages:
                await cur.executemany(INSERT_MESSAGE, messages)
            if events:
                await cur.executemany(INSERT_EVENT, events)
            for kind, item in batch:
                if kind == "sql":
                    await cur.execute(*item)

    async def _until_written(self, target: int) -> None:
        async with self._progress:
            await self._progress.wait_for(lambda: self._written >= target)

    def flush(self) -> None:
        """Return once everything queued before the call is committed."""
        target = self._enqueued
        if self._written >= target:
            return
        self._call(self._until_written(target), timeout=self.timeout_s)

    async def wait_written(self) -> None:
        """``flush`` for a caller on an event loop: awaits the writer without blocking the loop."""
        target = self._enqueued
        if self._written < target:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._until_written(target), self._loop))

    @property
    def dropped_rows(self) -> int:
        """Rows the server refused for their content (logged); 0 in normal operation."""
        return self._dropped

    # -- queries -------------------------------------------------------------------------------
    def _run(self, work: Callable[[Any], Awaitable[T]], *, transaction: bool = False) -> T:
        """Flush, then ``work(cursor)`` on a pooled connection (in one transaction if asked)."""
        self.flush()

        async def run() -> T:
            async with self._pool.connection() as conn:
                if transaction:
                    async with conn.transaction(), conn.cursor(row_factory=self._dict_rows()) as cur:
                        return await work(cur)
                async with conn.cursor(row_factory=self._dict_rows()) as cur:
                    return await work(cur)

        return self._call(run(), timeout=self.timeout_s * 2)

    def _dict_rows(self) -> Any:
        from psycopg.rows import dict_row

        return dict_row

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        async def work(cur: Any) -> list[dict[str, Any]]:
            await cur.execute(sql, params)
            return list(await cur.fetchall())

        return self._run(work)

    def _rowcount(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        async def work(cur: Any) -> int:
            await cur.execute(sql, params)
            return int(cur.rowcount)

        return self._run(work)

    def schema_version(self) -> int:
        return int(self._rows("SELECT MAX(version) AS v FROM schema_version")[0]["v"])

    # -- writing -------------------------------------------------------------------------------
    def create_session(self, session_id: str, *, title: str | None = None, owner: str | None = None) -> SessionInfo:
        """A new, empty session (``SessionStoreError`` if the id is taken)."""
        now = _now()
        added = self._rowcount(
            "INSERT INTO sessions (session_id, created_at, updated_at, title, owner) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (session_id) DO NOTHING", (session_id, now, now, plain_text(title), owner))
        if not added:
            raise SessionStoreError(f"session {session_id!r} exists already")
        info = self.session(session_id)
        assert info is not None
        return info

    def begin_turn(self, session_id: str, question: str) -> int:
        async def work(cur: Any) -> int:
            now = _now()
            # the upsert locks the session's row: concurrent begin_turns of one session take turns
            await cur.execute(TOUCH, (session_id, now, now, plain_text(question[:80])))
            await cur.execute("SELECT COALESCE(MAX(turn), -1) + 1 AS turn FROM turns WHERE session_id = %s",
                              (session_id,))
            turn = int((await cur.fetchone())["turn"])
            await cur.execute("INSERT INTO turns (session_id, turn, question, status, started_at, worker) "
                              "VALUES (%s, %s, %s, 'running', %s, %s)",
                              (session_id, turn, plain_text(question), now, self.worker))
            return turn

        turn = self._run(work, transaction=True)
        with self._seq_lock:
            self._seq[(session_id, turn, "messages")] = -1
            self._seq[(session_id, turn, "events")] = -1
        self._open_turns.add((session_id, turn))
        return turn

    def finish_turn(self, session_id: str, turn: int, answer: Answer) -> None:
        now = _now()
        self._enqueue("sql", ("UPDATE turns SET status = %s, answer_json = %s::json, finished_at = %s "
                              "WHERE session_id = %s AND turn = %s",
                              (status_after(answer), answer.model_dump_json(), now, session_id, turn)))
        self._enqueue("sql", (TOUCH, (session_id, now, now, None)))
        self.flush()
        self._open_turns.discard((session_id, turn))

    def end_turn(self, session_id: str, turn: int, status: EndStatus) -> bool:
        """Mark a still-running turn ``interrupted`` or ``cancelled`` (no answer); False if it had ended."""
        if status not in ("interrupted", "cancelled"):
            raise ValueError(f"a turn ends as 'interrupted' or 'cancelled', not {status!r}")
        changed = self._rowcount("UPDATE turns SET status = %s, finished_at = %s "
                                 "WHERE session_id = %s AND turn = %s AND status = 'running'",
                                 (status, _now(), session_id, turn))
        self._open_turns.discard((session_id, turn))
        return changed > 0

    def _next_seq(self, table: str, session_id: str, turn: int) -> int:
        key = (session_id, turn, table)
        with self._seq_lock:
            if key in self._seq:
                self._seq[key] += 1
                return self._seq[key]
        last = self._rows(f"SELECT COALESCE(MAX(seq), -1) AS seq FROM {table} "  # noqa: S608
                          "WHERE session_id = %s AND turn = %s", (session_id, turn))[0]["seq"]
        with self._seq_lock:
            self._seq[key] = max(self._seq.get(key, -1), int(last)) + 1
            return self._seq[key]

    def append_envelope(self, envelope: Envelope) -> None:
        """Queued for the writer (no network wait here); ``flush``/``wait_written`` see it committed."""
        seq = self._next_seq("messages", envelope.session_id, envelope.turn)
        self._enqueue("message", (envelope.session_id, envelope.turn, seq, envelope.id, envelope.kind,
                                  envelope.sender, envelope.created_at, envelope.model_dump_json()))

    def append_event(self, session_id: str, turn: int, event: str, data: dict[str, Any]) -> None:
        seq = self._next_seq("events", session_id, turn)
        self._enqueue("event", (session_id, turn, seq, event, data.get("role"), _now(),
                                json.dumps(data, default=str)))

    def save_settings(self, session_id: str, settings: dict[str, Any]) -> dict[str, Any]:
        """Record what the session runs on the first time; later calls keep (and return) the first."""
        self._rowcount("INSERT INTO session_settings (session_id, settings_json, created_at) "
                       "VALUES (%s, %s::json, %s) ON CONFLICT (session_id) DO NOTHING",
                       (session_id, json.dumps(settings, sort_keys=True), _now()))
        saved = self.settings(session_id)
        assert saved is not None
        return saved

    def settings(self, session_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT settings_json FROM session_settings WHERE session_id = %s", (session_id,))
        return rows[0]["settings_json"] if rows else None

    def delete_session(self, session_id: str) -> bool:
        """Remove the session and everything in it; False if there was no such session."""
        async def work(cur: Any) -> int:
            found = 0
            for table in ("sessions", "turns", "messages", "events", "session_settings"):
                await cur.execute(f"DELETE FROM {table} WHERE session_id = %s", (session_id,))  # noqa: S608
                found += cur.rowcount
            return found

        found = self._run(work, transaction=True)
        with self._seq_lock:
            for key in [k for k in self._seq if k[0] == session_id]:
                del self._seq[key]
        self._open_turns = {t for t in self._open_turns if t[0] != session_id}
        return found > 0

    async def _interrupt_dead_turns(self, session_id: str | None) -> None:
        """Running turns whose worker no longer holds its lock were cut off: mark them ``interrupted``."""
        where = " AND session_id = %s" if session_id is not None else ""
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT session_id, turn, worker FROM turns WHERE status = 'running'" + where,
                (session_id,) if session_id is not None else ())
            running = await cur.fetchall()
            if not running:
                return
            cur = await conn.execute(
                "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 "
                "AND classid::bigint = %s AND database = (SELECT oid FROM pg_database "
                "WHERE datname = current_database())", (WORKER_LOCK,))
            live = {int(r[0]) for r in await cur.fetchall()}
            dead = [(s, t) for s, t, worker in running if _worker_key(worker) not in live]
            if dead:
                async with conn.cursor() as c:
                    await c.executemany("UPDATE turns SET status = 'interrupted', finished_at = %s "
                                        "WHERE session_id = %s AND turn = %s AND status = 'running'",
                                        [(_now(), s, t) for s, t in dead])

    def _sweep(self, session_id: str | None) -> None:
        self.flush()
        self._call(self._interrupt_dead_turns(session_id), timeout=self.timeout_s * 2)

    # -- reading -------------------------------------------------------------------------------
    def turns(self, session_id: str) -> list[TurnRecord]:
        self._sweep(session_id)
        rows = self._rows("SELECT * FROM turns WHERE session_id = %s ORDER BY turn", (session_id,))
        return [
            TurnRecord(
                session_id=r["session_id"], turn=r["turn"], question=r["question"],
                status=r["status"] if r["status"] in TURN_STATUSES else "done",
                answer=Answer.model_validate(r["answer_json"], context=STORED) if r["answer_json"] is not None else None,
                started_at=_iso(r["started_at"]) or "", finished_at=_iso(r["finished_at"]),
            )
            for r in rows
        ]

    def history(self, session_id: str) -> list[tuple[str, Answer]]:
        """Turns that ended with an answer, oldest first: what a follow-up question may refer to."""
        return [(t.question, t.answer) for t in self.turns(session_id) if t.complete and t.answer is not None]

    def incomplete_turns(self, session_id: str) -> list[TurnRecord]:
        return [t for t in self.turns(session_id) if not t.complete]

    def _infos(self, where: str, args: tuple[Any, ...]) -> list[SessionInfo]:
        rows = self._rows(
            "SELECT s.session_id, s.created_at, s.updated_at, s.title, s.owner, COUNT(t.turn) AS n, "
            "COUNT(t.turn) FILTER (WHERE t.answer_json IS NULL OR t.status = 'running') AS open "
            f"FROM sessions s LEFT JOIN turns t ON t.session_id = s.session_id {where} "
            "GROUP BY s.session_id ORDER BY s.updated_at DESC, s.session_id", args)
        return [SessionInfo(session_id=r["session_id"], created_at=_iso(r["created_at"]) or "",
                            updated_at=_iso(r["updated_at"]) or "", turns=int(r["n"]),
                            incomplete_turns=int(r["open"]), title=r["title"], owner=r["owner"])
                for r in rows]

    def session(self, session_id: str) -> SessionInfo | None:
        self._sweep(session_id)
        found = self._infos("WHERE s.session_id = %s", (session_id,))
        return found[0] if found else None

    def list_sessions(self, owner: str | None = None) -> list[SessionInfo]:
        """Most recently updated first; only ``owner``'s when given."""
        self._sweep(None)
        return self._infos("WHERE s.owner = %s", (owner,)) if owner is not None else self._infos("", ())

    def messages(self, session_id: str, turn: int | None = None) -> list[Envelope]:
        query = "SELECT json FROM messages WHERE session_id = %s"
        args: tuple[Any, ...] = (session_id,)
        if turn is not None:
            query += " AND turn = %s"
            args += (turn,)
        return [Envelope.model_validate(r["json"]) for r in self._rows(query + " ORDER BY turn, seq", args)]

    def events(self, session_id: str, turn: int | None = None) -> list[dict[str, Any]]:
        query = "SELECT turn, seq, event, created_at, json FROM events WHERE session_id = %s"
        args: tuple[Any, ...] = (session_id,)
        if turn is not None:
            query += " AND turn = %s"
            args += (turn,)
        return [{"turn": r["turn"], "seq": r["seq"], "event": r["event"], "created_at": _iso(r["created_at"]),
                 **r["json"]} for r in self._rows(query + " ORDER BY turn, seq", args)]


def _worker_key(worker: str | None) -> int | None:
    head = (worker or "").partition("@")[0]
    return int(head) if head.isdigit() else None
