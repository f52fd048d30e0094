"""``kgteam mcp --kg A --kg B``: one server over two KGs joined by name, as ``ask`` and ``serve`` read them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

NOTES = """@prefix n: <http://example.org/notes/> .
@prefix schema: <http://schema.org/> .
n:favouriteFilm schema:name "favourite film" .
n:ana schema:name "Ana Ruiz" ; n:favouriteFilm n:br .
n:br schema:name "Blade Runner" .
"""
FILMS = """@prefix f: <http://example.org/films/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
f:directedBy rdfs:label "directed by" .
f:bladeRunner rdfs:label "Blade Runner" ; f:directedBy f:scott .
f:scott rdfs:label "Ridley Scott" .
"""


ROOT = Path(__file__).resolve().parents[2]


def server_env(home: Path) -> dict[str, str]:
    """This checkout first on the path (not whichever kgteam the venv installed)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "KGTEAM_HOME": str(home), "PYTHONUNBUFFERED": "1"}


@pytest.fixture(scope="module")
def two_kg_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("mcp-two-kgs")
    for name, text in (("notes", NOTES), ("films", FILMS)):
        (home / f"{name}.ttl").write_text(text, encoding="utf-8")
        build_kg([home / f"{name}.ttl"], name, home=home, progress=False)
    return home


async def test_repeated_kg_serves_both_kgs_joined(two_kg_home: Path, tmp_path: Path) -> None:
    args = ["-m", "kgteam", "mcp", "--kg", "notes", "--kg", "films", "--model", "none", "--home", str(two_kg_home)]
    params = StdioServerParameters(command=sys.executable, args=args, env=server_env(two_kg_home), cwd=tmp_path)
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            # a path that starts in one KG and ends in the other runs on the one server
            found = await session.call_tool("run_sparql", {"query": (
                "SELECT ?d WHERE { <http://example.org/notes/ana> <http://example.org/notes/favouriteFilm> ?f . "
                "?f <http://example.org/films/directedBy> ?d }")})
            assert not found.is_error, found.content
            assert "http://example.org/films/scott" in found.content[0].text
    log = (tmp_path / "stderr.log").read_text()
    assert "on KG 'notes + films'" in log and "Traceback" not in log
