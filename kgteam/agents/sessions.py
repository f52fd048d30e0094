"""Session persistence for the runtime: the stores live in :mod:`kgteam.sessions`; this module
keeps the names the runtime and older code import."""

from kgteam.sessions import (
    SessionInfo,
    SessionStore,
    SessionStoreError,
    SqliteSessionStore,
    TurnRecord,
    open_session_store,
)

__all__ = ["SessionInfo", "SessionStore", "SessionStoreError", "SqliteSessionStore", "TurnRecord",
           "open_session_store"]
