"""Session stores: every question, role message and trace event of a conversation, persisted as
it happens. SQLite by default; PostgreSQL when several ``kgteam serve`` workers share sessions.
Pick one by URL with :func:`open_session_store` (see docs/sessions.md)."""

from kgteam.sessions.records import (
    EndStatus,
    SessionInfo,
    SessionStore,
    SessionStoreError,
    TurnRecord,
    TurnStatus,
)
from kgteam.sessions.sqlite_store import SqliteSessionStore
from kgteam.sessions.urls import open_session_store

__all__ = ["EndStatus", "SessionInfo", "SessionStore", "SessionStoreError", "SqliteSessionStore", "TurnRecord",
           "TurnStatus", "open_session_store"]
