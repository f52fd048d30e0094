"""A real ``kgteam serve`` process: the official ``openai`` client against the facade, SSE over a
socket (events arrive as they happen; cancel mid-run), a taken port, and ``kill -9`` mid-answer."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import httpx
import openai
import pytest
from served import ServerProcess, parse_sse, sse_events

KEY = "k-test"
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture(scope="module")
def server(serve_home, tmp_path_factory):
    sessions = tmp_path_factory.mktemp("served") / "sessions.sqlite"
    proc = ServerProcess(serve_home, sessions, env={"KGTEAM_API_KEYS": KEY}).wait_ready()
    yield proc
    assert proc.stop() == 0, proc.log.read_text()  # SIGTERM: a clean exit


def test_the_openai_client_talks_to_the_team_streaming_and_not(server):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0)
    assert [m.id for m in client.models.list()] == ["mini-serve"]
    reply = client.chat.completions.create(model="mini-serve", user="chat-1",
                                           messages=[{"role": "user", "content": "who directed Kismet"}])
    assert reply.choices[0].message.content == "William Dieterle"
    assert reply.choices[0].finish_reason == "stop" and reply.usage.total_tokens > 0
    extra = reply.model_extra["kgteam"]
    assert extra["session"] == "chat-1" and extra["turn"] == 0
    assert extra["answer"]["evidence"]["triples"][0]["o_label"] == "William Dieterle"
    chunks = list(client.chat.completions.create(
        model="mini-serve", user="chat-1", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "who directed Kismet"}, {"role": "assistant", "content": "William Dieterle"},
                  {"role": "user", "content": "what did Joel Zwick direct"}]))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Fat Albert, My Big Fat Greek Wedding"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0
    last = next(c for c in chunks if c.choices and c.choices[0].finish_reason == "stop")
    assert last.model_extra["kgteam"]["turn"] == 1  # the same session: its second question
    with pytest.raises(openai.NotFoundError, match="serves the team 'mini-serve'"):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=server.url + "/v1", api_key="wrong", max_retries=0).models.list()
    history = httpx.get(f"{server.url}/v1/sessions/chat-1", headers=AUTH).json()
    assert [t["question"] for t in history["turns"]] == ["who directed Kismet", "what did Joel Zwick direct"]


def test_events_stream_as_they_happen_and_cancel_ends_the_stream(server):
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["id"]
        with http.stream("POST", f"/v1/sessions/{sid}/questions", json={"question": "slow 25"}) as response:
            timed = list(sse_events(response))
        first_at, done_at = timed[0][0], timed[-1][0]
        assert timed[0][1]["event"] == "turn" and timed[-1][1]["data"] == {"status": "done"}
        assert sum(1 for _, e in timed if e["event"] == "message") == 27  # question, 25 steps, answer
        assert done_at - first_at > 0.3  # the first event came long before the last: streamed, not buffered
        with http.stream("POST", f"/v1/sessions/{sid}/questions", json={"question": "sleep"}) as response:
            events = []
            for _, event in sse_events(response):
                events.append(event)
                if event["event"] == "message" and event["data"]["kind"] == "question":  # under way: stop it
                    assert http.post(f"/v1/sessions/{sid}/cancel").json() == {"cancelled": True}
        assert events[-1]["data"] == {"status": "cancelled"}
        assert [t["status"] for t in http.get(f"/v1/sessions/{sid}").json()["turns"]] == ["done", "cancelled"]


def test_a_taken_port_is_refused_with_a_clear_message(server, serve_home):
    out = subprocess.run([sys.executable, str(server.proc.args[1]), "serve", "--team", str(serve_home / "team.yaml"),
                          "--port", str(server.port)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "KGTEAM_HOME": str(serve_home)})
    assert out.returncode == 1
    assert f"port {server.port} on 127.0.0.1 is already in use" in out.stderr and "Traceback" not in out.stderr


def test_kill_9_mid_answer_keeps_what_was_streamed_and_the_session_goes_on(serve_home, tmp_path):
    sessions = tmp_path / "sessions.sqlite"
    first = ServerProcess(serve_home, sessions).wait_ready()
    seen: list[str] = []
    try:
        with httpx.Client(base_url=first.url, timeout=30) as http:
            sid = http.post("/v1/sessions").json()["id"]
            with http.stream("POST", f"/v1/sessions/{sid}/questions", json={"question": "slow 400"}) as response:
                try:
                    for _, event in sse_events(response):
                        if event["event"] == "message":
                            seen.append(event["data"]["id"])
                        if len(seen) == 15:
                            first.proc.send_signal(signal.SIGKILL)
                except httpx.HTTPError:
                    pass  # the connection died with the server
    finally:
        assert first.stop() == -signal.SIGKILL
    second = ServerProcess(serve_home, sessions).wait_ready()
    try:
        with httpx.Client(base_url=second.url, timeout=30) as http:
            detail = http.get(f"/v1/sessions/{sid}").json()
            assert [t["status"] for t in detail["turns"]] == ["interrupted"]
            trace = [line for line in http.get(f"/v1/sessions/{sid}/trace").text.splitlines() if '"message"' in line]
            stored = [httpx.Response(200, content=line).json()["id"] for line in trace]
            assert stored[:len(seen)] == seen  # everything streamed before the kill was stored, in order
            events = parse_sse(http.post(f"/v1/sessions/{sid}/questions", json={"question": "who directed Kismet"}).text)
            assert events[0]["data"]["turn"] == 1 and events[-2]["data"]["text"] == "William Dieterle"
            assert [t["status"] for t in http.get(f"/v1/sessions/{sid}").json()["turns"]] == ["interrupted", "done"]
    finally:
        assert second.stop() == 0
