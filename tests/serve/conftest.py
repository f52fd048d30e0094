"""A served mini team, in-process (ASGI) for the endpoint tests; a real process for the CLI test."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve_roles  # noqa: E402

from kgteam.serve import ServeSettings, TeamService, create_app  # noqa: E402


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


def app_client(service: TeamService, key: str | None = None, **settings: Any) -> httpx.AsyncClient:
    app = create_app(service, ServeSettings(**settings))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(transport=transport, base_url="http://kgteam.test", headers=headers, timeout=30)


@pytest.fixture
async def client(service) -> Any:
    async with app_client(service, rate_per_minute=0) as c:
        yield c


def parse_sse(text: str) -> list[dict[str, Any]]:
    """``[{"id": 1, "event": "turn", "data": {...}}, ...]``; keep-alive comments skipped."""
    events = []
    for block in text.split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.splitlines():
            if line.startswith(":"):
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        if "data" in fields:
            data = fields["data"]
            events.append({"id": int(fields["id"]) if "id" in fields else None, "event": fields.get("event"),
                           "data": data if data == "[DONE]" else json.loads(data)})
    return events


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
