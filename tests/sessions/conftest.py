"""The session-store contract runs on every store: SQLite in a temporary file and PostgreSQL on a
throwaway server the suite starts (and stops) itself, a fresh database per test."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "agents"))  # the runtime's test playbooks (agents_playbook)

from kgteam.sessions import SessionStore, open_session_store  # noqa: E402

# postgres_server (one throwaway server for the run) is in tests/conftest.py


STORES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)]


@pytest.fixture(params=STORES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL to an empty session database of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sessions.sqlite'}"
    return request.getfixturevalue("postgres_server").create_database()


@pytest.fixture
def open_store(store_url: str) -> Iterator[Callable[[], SessionStore]]:
    """Opens (another) store on the test's database; all are closed at the end."""
    opened: list[SessionStore] = []

    def open_one() -> SessionStore:
        store = open_session_store(store_url)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: Callable[[], SessionStore]) -> SessionStore:
    return open_store()


ORCHARD = HERE.parent / "data" / "orchard.ttl"


@pytest.fixture(scope="session")
def orchard_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kgteam home with the 20-triple orchard KG (no embeddings): for real teams with ``model: none``."""
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("orchard-home")
    build_kg([ORCHARD], "orchard", home=home, progress=False, embed=False)
    return home
