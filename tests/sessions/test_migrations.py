"""Schema migrations: applied on open, once, under a lock; an old SQLite file upgrades in place."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from kgteam.agents.team import cancelled_answer
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer, Question
from kgteam.sessions import SessionStoreError, SqliteSessionStore, open_session_store
from kgteam.sessions import migrations as migrations_module
from kgteam.sessions.migrations import LATEST, MIGRATIONS, Migration


def test_the_migration_list_is_numbered_from_one_and_has_both_dialects():
    assert [m.version for m in MIGRATIONS] == list(range(1, LATEST + 1))
    assert all(m.sqlite and m.postgres and m.name for m in MIGRATIONS)


def _versions(store_url: str, postgres_server=None) -> list[int]:
    if store_url.startswith("sqlite"):
        with sqlite3.connect(store_url.removeprefix("sqlite:///")) as conn:
            return [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")]
    import psycopg

    with psycopg.connect(store_url) as conn:
        return [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")]


def test_opening_twice_applies_each_step_once(store_url):
    for _ in range(2):
        open_session_store(store_url).close()
    assert _versions(store_url) == list(range(1, LATEST + 1))


def test_many_processes_opening_a_new_database_at_once_migrate_it_once(store_url):
    """Threads with a connection each: to the database they are as many workers starting together."""
    barrier = threading.Barrier(6)
    errors: list[BaseException] = []
    stores = []

    def start() -> None:
        barrier.wait()
        try:
            stores.append(open_session_store(store_url))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for store in stores:
        store.close()
    assert errors == []
    assert _versions(store_url) == list(range(1, LATEST + 1))


def test_a_database_newer_than_this_code_is_refused_with_a_clear_message(store_url):
    open_session_store(store_url).close()
    if store_url.startswith("sqlite"):
        with sqlite3.connect(store_url.removeprefix("sqlite:///")) as conn:
            conn.execute("INSERT INTO schema_version VALUES (?, 'from the future', 'now')", (LATEST + 1,))
    else:
        import psycopg

        with psycopg.connect(store_url) as conn:
            conn.execute("INSERT INTO schema_version (version, name) VALUES (%s, 'from the future')", (LATEST + 1,))
    with pytest.raises(SessionStoreError, match=f"schema version {LATEST + 1}, newer than this kgteam"):
        open_session_store(store_url)


def test_a_failing_step_leaves_the_database_as_it_was(store_url, monkeypatch):
    open_session_store(store_url).close()
    broken = Migration(LATEST + 1, "broken", sqlite=("CREATE TABLE half_done (x INTEGER)", "NOT SQL AT ALL"),
                       postgres=("CREATE TABLE half_done (x INTEGER)", "NOT SQL AT ALL"))
    monkeypatch.setattr(migrations_module, "MIGRATIONS", (*MIGRATIONS, broken))
    monkeypatch.setattr(migrations_module, "LATEST", LATEST + 1)
    with pytest.raises(Exception, match="(?i)syntax"):
        open_session_store(store_url)
    monkeypatch.undo()
    assert _versions(store_url) == list(range(1, LATEST + 1))
    store = open_session_store(store_url)  # still opens with the real list
    try:
        store.begin_turn("s", "q")
    finally:
        store.close()
    if store_url.startswith("sqlite"):
        with sqlite3.connect(store_url.removeprefix("sqlite:///")) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    else:
        import psycopg

        with psycopg.connect(store_url) as conn:
            tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert "half_done" not in tables and "turns" in tables


def test_a_file_from_before_migrations_upgrades_in_place_without_losing_anything(tmp_path):
    from legacy_sqlite_store import SqliteSessionStore as LegacyStore

    path = tmp_path / "sessions.sqlite"
    old = LegacyStore(path)
    envelopes = []
    for session_id, question, answer in [("s1", "who tends Old Elm", Answer(confidence=1.0, text="Ada Quill")),
                                         ("s1", "and Young Oak?", cancelled_answer()),
                                         ("s2", "cut off", None)]:
        turn = old.begin_turn(session_id, question)
        env = Envelope(session_id=session_id, turn=turn, sender="user", payload=Question(text=question))
        old.append_envelope(env)
        envelopes.append(env)
        old.append_event(session_id, turn, "tool_call", {"role": "linker", "tool": "search", "n": turn})
        if answer is not None:
            old.finish_turn(session_id, turn, answer)
    old.save_settings("s1", {"kg": "orchard"})
    old.close()  # s2's turn stays 'running', as after a crash
    before = sqlite3.connect(path)
    counts = {t: before.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # noqa: S608
              for t in ("sessions", "turns", "messages", "events", "session_settings")}
    before.close()

    store = SqliteSessionStore(path)
    assert store.schema_version() == LATEST and store.journal_mode() == "wal"
    after = {t: store._conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in counts}  # noqa: S608
    assert after == counts
    assert [m.id for m in store.messages("s1")] == [e.id for e in envelopes[:2]]
    assert [(t.question, t.status) for t in store.turns("s1")] == [("who tends Old Elm", "done"),
                                                                  ("and Young Oak?", "cancelled")]
    assert [(t.status, t.answer) for t in store.turns("s2")] == [("interrupted", None)]  # no live worker wrote it
    assert [a.text for _, a in store.history("s1")] == ["Ada Quill", cancelled_answer().text]
    assert store.settings("s1") == {"kg": "orchard"}
    assert [e["n"] for e in store.events("s1")] == [0, 1]
    assert {s.session_id: s.title for s in store.list_sessions()} == {"s1": "who tends Old Elm", "s2": "cut off"}
    assert store.begin_turn("s1", "a third question") == 2
    store.close()
    store = SqliteSessionStore(path)  # and opening it again changes nothing
    assert store.schema_version() == LATEST and len(store.turns("s1")) == 3
    store.close()
