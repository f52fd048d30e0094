"""A session keeps its team and KG on the server too: another team's or KG's session is refused
(409, saying both) on the session API and the OpenAI facade, and is not listed. Over a SQLite
file and an in-memory store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import serve_roles
from served import app_client

from kgteam.cli.team_setup import session_settings
from kgteam.config.schema import TeamSpec
from kgteam.serve import TeamService


@pytest.fixture(scope="module")
def memory_service(serve_home) -> Iterator[TeamService]:
    from kgteam.api import Team
    from kgteam.config import registry

    serve_roles.register()
    try:
        team = Team.from_yaml(serve_home / "team.yaml", home=serve_home, sessions=":memory:")
    finally:
        registry.refresh()
    with team:
        yield TeamService(team, home=serve_home)


@pytest.fixture(params=["sqlite", "memory"])
def svc(request, service, memory_service) -> TeamService:
    return service if request.param == "sqlite" else memory_service


def cli_session(svc: TeamService, sid: str, team_name: str, kg: str, tmp_path: Path) -> None:
    """A session as ``kgteam ask --team FILE --kg KG`` records it (settings, then a turn)."""
    spec = TeamSpec.model_validate({"name": team_name, "playbook": "triad", "kg": {"backend": "oxigraph", "name": kg}})
    svc.store.save_settings(sid, session_settings(spec, tmp_path / f"{team_name}.yaml", None, kg))
    svc.store.begin_turn(sid, "who directed Kismet")


async def test_a_session_of_another_team_is_refused_with_409_and_not_listed(svc, tmp_path):
    other = f"r3-{id(svc)}"
    cli_session(svc, other, "r3", "mini", tmp_path)
    async with app_client(svc, rate_per_minute=0) as client:
        ours = (await client.post("/v1/sessions", json={})).json()["id"]
        refused = await client.post(f"/v1/sessions/{other}/questions", json={"question": "who directed Kismet"})
        assert refused.status_code == 409, refused.text
        error = refused.json()["error"]
        assert error["code"] == "session_on_other_team"
        assert "team 'r3'" in error["message"] and "serves team 'mini-serve'" in error["message"]
        assert len(svc.store.turns(other)) == 1  # nothing was asked in it
        facade = await client.post("/v1/chat/completions", headers={"X-Session-Id": other},
                                   json={"messages": [{"role": "user", "content": "who directed Kismet"}]})
        assert facade.status_code == 409 and facade.json()["error"]["code"] == "session_on_other_team"
        listed = {s["id"] for s in (await client.get("/v1/sessions")).json()["sessions"]}
        assert ours in listed and other not in listed


async def test_a_session_on_another_kg_is_refused_and_not_listed(svc, tmp_path):
    other = f"kg-{id(svc)}"
    cli_session(svc, other, "mini-serve", "films", tmp_path)
    async with app_client(svc, rate_per_minute=0) as client:
        refused = await client.post(f"/v1/sessions/{other}/questions", json={"question": "who directed Kismet"})
        assert refused.status_code == 409
        error = refused.json()["error"]
        assert error["code"] == "session_on_other_kg" and "'films'" in error["message"] and "'mini'" in error["message"]
        assert other not in {s["id"] for s in (await client.get("/v1/sessions")).json()["sessions"]}


async def test_only_sessions_recorded_for_this_team_and_kg_are_listed(svc, tmp_path):
    """One sessions file per home holds every team's and KG's sessions: one with no record (as
    `kgteam demo` wrote them) may be of any, so the web chat does not list it."""
    bare, same = f"bare-{id(svc)}", f"same-{id(svc)}"
    svc.store.begin_turn(bare, "who directed Kismet")  # a session with no settings record
    cli_session(svc, same, "mini-serve", "mini", tmp_path)  # `kgteam ask` with this server's team and KG
    async with app_client(svc, rate_per_minute=0) as client:
        listed = {s["id"] for s in (await client.get("/v1/sessions")).json()["sessions"]}
    assert same in listed and bare not in listed
