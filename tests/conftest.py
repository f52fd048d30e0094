"""Fixtures shared by test folders: one throwaway PostgreSQL server for the whole run (the session
stores and the served workers both use it; each test takes a fresh database on it)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "sessions"))

from pg_server import PostgresServer, start_postgres, unavailable_reason  # noqa: E402


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    server = start_postgres()
    try:
        yield server
    finally:
        server.stop()
