"""Fixtures shared by test folders: one throwaway PostgreSQL server for the whole run (the session
stores and the served workers both use it; each test takes a fresh database on it), and one
install of the bundled demo KG (its vectors take the longest to build of any test KG) and one of
the atelier KG that roles and eval tests read. The shared data is looked up in one place for every
test: ``shared_paths.SHARED_DATA`` (``KGTEAM_DATA_DIR``, else ``<repo>/../shared/data``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "sessions"))

from pg_server import PostgresServer, start_postgres, unavailable_reason  # noqa: E402
from shared_paths import SHARED_DATA  # noqa: E402

ATELIER_TTL = Path(__file__).resolve().parent / "data" / "kgs" / "atelier" / "atelier.ttl"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder (tests/shared_paths.py); a test needing a file there skips when it is absent."""
    return SHARED_DATA


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


@pytest.fixture(scope="session")
def demo_kg_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KGTEAM home holding the bundled MetaQA demo KG with its vectors, installed once per run.

    Readers only: every user opens it read-only (``open_kg``); a test that changes a KG builds its own.
    """
    from kgteam.tools.kg import ensure_demo_kg

    home = tmp_path_factory.mktemp("demo_kg_home")
    ensure_demo_kg(home=home).close()
    return home


@pytest.fixture(scope="session")
def atelier_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KGTEAM home holding the atelier KG (tests/data/kgs/atelier), built once per run; read-only."""
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("atelier_home")
    build_kg([ATELIER_TTL], "atelier", home=home, progress=False)
    return home
