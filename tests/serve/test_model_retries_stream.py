"""A dead model URL (nothing listens on the port): the stream says each retry as it happens, as a
``progress`` event, then the failure once. Real app, real OpenAI client, real refused connection."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
import serve_roles
from served import app_client, parse_sse

from kgteam.serve import TeamService

DEAD_TEAM = """\
name: dead-model
model: {{provider: openai, base_url: "http://127.0.0.1:{port}/v1", model: gone, api_key: unused,
        max_retries: 3, backoff_s: 0.01}}
kg: {{backend: oxigraph, name: mini}}
roles: [s_entry, s_answerer]
routes:
  - {{kind: question, sender: user, to: s_entry}}
  - {{kind: missing_info, to: s_entry}}
  - {{kind: entity_candidates, to: s_answerer}}
"""


def closed_port() -> int:
    with socket.socket() as s:  # bound then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def dead_service(serve_home, tmp_path_factory) -> Iterator[TeamService]:
    from kgteam.api import Team
    from kgteam.config import registry

    team_file = tmp_path_factory.mktemp("dead") / "team.yaml"
    team_file.write_text(DEAD_TEAM.format(port=closed_port()), encoding="utf-8")
    serve_roles.register()
    try:
        team = Team.from_yaml(team_file, home=serve_home, sessions=":memory:")
    finally:
        registry.refresh()
    with team:
        yield TeamService(team, home=serve_home)


async def test_retries_stream_as_progress_then_one_error(dead_service):
    async with app_client(dead_service, rate_per_minute=0) as client:
        sid = (await client.post("/v1/sessions", json={})).json()["id"]
        response = await client.post(f"/v1/sessions/{sid}/questions", json={"question": "who directed Kismet"})
    events = parse_sse(response.text)
    kinds = [e["event"] for e in events]
    progress = [e["data"] for e in events if e["event"] == "progress"]
    assert [(p["retry"], p["of"]) for p in progress] == [(1, 3), (2, 3), (3, 3)]
    assert progress[1]["message"] == "model not reachable, retry 2/3" and progress[1]["role"] == "s_entry"
    assert kinds.index("progress") < kinds.index("answer")  # said while the run waited, before the end
    errors = [e["data"] for e in events if e["event"] == "error"]
    assert len(errors) == 1 and errors[0]["code"] == "run_failed"
    assert "after 4 attempt(s)" in errors[0]["message"] and "not reachable" not in errors[0]["message"]
    answer = next(e["data"] for e in events if e["event"] == "answer")
    assert answer["status"] == "error" and kinds[-1] == "done" and events[-1]["data"] == {"status": "error"}
