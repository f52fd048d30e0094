"""A small KG (tests/data/orchard.ttl, with its vectors) and the command line that serves it over MCP.

The server is the real ``python -m kgteam mcp`` of this checkout, driven by the SDK's own client.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ELM = "http://example.org/orchard/Elm"
ADA = "http://example.org/orchard/Ada"
TENDED_BY = "http://example.org/orchard/tendedBy"
KG_TOOLS = {"search_entities", "neighbors", "entity_schema", "run_sparql", "similar_triples"}


@pytest.fixture(scope="session")
def mcp_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("mcp-home")
    build_kg([ROOT / "tests" / "data" / "orchard.ttl"], "orchard", home=home, progress=False, embed=True)
    return home


def server_command(home: Path, *extra: str) -> list[str]:
    """``python -m kgteam mcp`` on the orchard KG with the deterministic floor (no model server)."""
    return [sys.executable, "-m", "kgteam", "mcp", "--kg", "orchard", "--model", "none", "--home", str(home), *extra]


def server_env(home: Path) -> dict[str, str]:
    """This checkout first on the path (not whichever kgteam the venv installed)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "KGTEAM_HOME": str(home), "PYTHONUNBUFFERED": "1"}
