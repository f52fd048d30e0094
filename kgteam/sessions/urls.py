"""Which store a session URL names: a path or ``sqlite:///PATH`` is SQLite, ``postgresql://…``
is PostgreSQL. ``sqlite:///rel.db`` is relative and ``sqlite:////abs.db`` absolute, as in
SQLAlchemy; ``sqlite://`` alone (or ``sqlite:///:memory:``) is an in-memory database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgteam.sessions.records import SessionStore, SessionStoreError

POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
SCHEMES = ("sqlite", *POSTGRES_SCHEMES)


def scheme_of(url: str) -> str | None:
    """The URL's scheme, or None for a plain path."""
    head, sep, _ = url.partition("://")
    return head.lower() if sep and head and "/" not in head else None


def sqlite_path(url_or_path: str | Path) -> str:
    """The file (or ``:memory:``) a SQLite URL or path names."""
    if isinstance(url_or_path, Path):
        return str(url_or_path)
    if scheme_of(url_or_path) != "sqlite":
        return url_or_path
    rest = url_or_path.partition("://")[2]
    if rest in ("", "/", "/:memory:"):
        return ":memory:"
    if not rest.startswith("/"):
        raise SessionStoreError(f"{url_or_path!r}: a SQLite URL is sqlite:///PATH (three slashes)")
    return rest[1:]


def check_url(url: str) -> str:
    """``url`` when it names a store kgteam has; else a ``SessionStoreError`` saying which do."""
    scheme = scheme_of(url)
    if scheme is not None and scheme not in SCHEMES:
        raise SessionStoreError(f"unknown session store {scheme}://: use a file path, sqlite:///PATH or "
                                "postgresql://USER@HOST:PORT/DATABASE")
    if scheme == "sqlite":
        sqlite_path(url)
    return url


def resolve_relative(url: str, base_dir: Path) -> str:
    """A SQLite path relative to ``base_dir`` (a team file's folder); other URLs unchanged."""
    if scheme_of(url) not in (None, "sqlite"):
        return url
    path = sqlite_path(url)
    if path == ":memory:":
        return url
    p = Path(path).expanduser()
    return str(p if p.is_absolute() else (base_dir / p).resolve())


def open_session_store(url_or_path: str | Path, **options: Any) -> SessionStore:
    """The store a path or URL names, opened and migrated to the current schema.

    ``options`` go to the PostgreSQL store (``min_size``, ``max_size``, ``timeout_s``)."""
    if isinstance(url_or_path, Path) or scheme_of(check_url(url_or_path)) in (None, "sqlite"):
        from kgteam.sessions.sqlite_store import SqliteSessionStore

        return SqliteSessionStore(Path(sqlite_path(url_or_path)).expanduser()
                                  if sqlite_path(url_or_path) != ":memory:" else ":memory:")
    from kgteam.sessions.postgres_store import PostgresSessionStore

    url = str(url_or_path)
    if scheme_of(url) == "postgresql+psycopg":
        url = "postgresql" + url[len("postgresql+psycopg"):]
    return PostgresSessionStore(url, **options)
