"""The session schema as a versioned list of migrations, one list for both stores.

Each store applies, when it opens a database, every migration newer than the database's
``schema_version`` row, in one transaction (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: under a
transaction-scoped advisory lock), so two processes opening the same database at once apply
each step exactly once. Version 1 is the schema kgteam wrote before migrations existed, in
``IF NOT EXISTS`` form: such a file upgrades in place. Append new steps; never edit old ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgteam.sessions.records import SessionStoreError


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1, "sessions, turns, messages, events, session settings",
        sqlite=(
            "CREATE TABLE IF NOT EXISTS sessions (session_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, "
            "updated_at TEXT NOT NULL, title TEXT)",
            "CREATE TABLE IF NOT EXISTS turns (session_id TEXT NOT NULL, turn INTEGER NOT NULL, question TEXT NOT NULL, "
            "status TEXT NOT NULL, answer_json TEXT, started_at TEXT NOT NULL, finished_at TEXT, "
            "PRIMARY KEY (session_id, turn))",
            "CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, "
            "turn INTEGER NOT NULL, seq INTEGER NOT NULL, envelope_id TEXT NOT NULL, kind TEXT NOT NULL, "
            "sender TEXT NOT NULL, created_at TEXT NOT NULL, json TEXT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS messages_by_session ON messages (session_id, turn, seq)",
            "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, "
            "turn INTEGER NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL, role TEXT, created_at TEXT NOT NULL, "
            "json TEXT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS events_by_session ON events (session_id, turn, seq)",
            "CREATE TABLE IF NOT EXISTS session_settings (session_id TEXT PRIMARY KEY, settings_json TEXT NOT NULL, "
            "created_at TEXT NOT NULL)",
        ),
        postgres=(
            "CREATE TABLE IF NOT EXISTS sessions (session_id TEXT PRIMARY KEY, created_at TIMESTAMPTZ NOT NULL, "
            "updated_at TIMESTAMPTZ NOT NULL, title TEXT)",
            "CREATE TABLE IF NOT EXISTS turns (session_id TEXT NOT NULL, turn INTEGER NOT NULL, question TEXT NOT NULL, "
            "status TEXT NOT NULL, answer_json JSON, started_at TIMESTAMPTZ NOT NULL, finished_at TIMESTAMPTZ, "
            "PRIMARY KEY (session_id, turn))",
            "CREATE TABLE IF NOT EXISTS messages (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
            "session_id TEXT NOT NULL, turn INTEGER NOT NULL, seq INTEGER NOT NULL, envelope_id TEXT NOT NULL, "
            "kind TEXT NOT NULL, sender TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL, json JSON NOT NULL)",
            "CREATE INDEX IF NOT EXISTS messages_by_session ON messages (session_id, turn, seq)",
            "CREATE TABLE IF NOT EXISTS events (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
            "session_id TEXT NOT NULL, turn INTEGER NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL, role TEXT, "
            "created_at TIMESTAMPTZ NOT NULL, json JSON NOT NULL)",
            "CREATE INDEX IF NOT EXISTS events_by_session ON events (session_id, turn, seq)",
            "CREATE TABLE IF NOT EXISTS session_settings (session_id TEXT PRIMARY KEY, settings_json JSON NOT NULL, "
            "created_at TIMESTAMPTZ NOT NULL)",
        ),
    ),
    Migration(
        2, "turn status done/cancelled/interrupted, the worker of a turn, session owners",
        sqlite=(
            "ALTER TABLE sessions ADD COLUMN owner TEXT",
            "ALTER TABLE turns ADD COLUMN worker TEXT",
            "UPDATE turns SET status = CASE WHEN json_extract(answer_json, '$.stopped_by') = 'cancelled' "
            "THEN 'cancelled' ELSE 'done' END WHERE status = 'complete'",
            "CREATE INDEX IF NOT EXISTS sessions_by_owner ON sessions (owner, updated_at)",
            "CREATE INDEX IF NOT EXISTS running_turns ON turns (session_id) WHERE status = 'running'",
        ),
        postgres=(
            "ALTER TABLE sessions ADD COLUMN IF NOT EXISTS owner TEXT",
            "ALTER TABLE turns ADD COLUMN IF NOT EXISTS worker TEXT",
            "UPDATE turns SET status = CASE WHEN answer_json->>'stopped_by' = 'cancelled' "
            "THEN 'cancelled' ELSE 'done' END WHERE status = 'complete'",
            "CREATE INDEX IF NOT EXISTS sessions_by_owner ON sessions (owner, updated_at)",
            "CREATE INDEX IF NOT EXISTS running_turns ON turns (session_id) WHERE status = 'running'",
        ),
    ),
)

LATEST = MIGRATIONS[-1].version

SCHEMA_VERSION_TABLE = {
    "sqlite": "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
              "applied_at TEXT NOT NULL)",
    "postgres": "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
}


def pending(current: int, where: str) -> list[Migration]:
    """The steps a database at ``current`` still needs; a database newer than this code is refused."""
    if current > LATEST:
        raise SessionStoreError(
            f"the session database {where} has schema version {current}, newer than this kgteam knows "
            f"(up to {LATEST}); upgrade kgteam, or point it at another session store")
    return [m for m in MIGRATIONS if m.version > current]
