"""A served mini team, in-process (ASGI) for the endpoint tests; a real process for the CLI test."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve_roles  # noqa: E402
from served import app_client  # noqa: E402

from kgteam.serve import TeamService  # noqa: E402


@pytest.fixture(scope="session")
def serve_home(tmp_path_factory) -> Path:
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("serve-home")
    (home / "kb.txt").write_text(serve_roles.KB, encoding="utf-8")
    build_kg([home / "kb.txt"], "mini", home=home, format="metaqa", progress=False)
    serve_roles.write_team(home)
    return home


@pytest.fixture(scope="session")
def service(serve_home) -> Iterator[TeamService]:
    """One team for all in-process tests (built once: the KG and store stay open)."""
    from kgteam.api import Team
    from kgteam.config import registry

    serve_roles.register()
    try:
        team = Team.from_yaml(serve_home / "team.yaml", home=serve_home, sessions=serve_home / "sessions.sqlite")
    finally:
        registry.refresh()
    with team:
        yield TeamService(team, home=serve_home)


@pytest.fixture
async def client(service) -> Any:
    async with app_client(service, rate_per_minute=0) as c:
        yield c
