"""Two real ``kgteam serve`` workers on one PostgreSQL database: a session started on worker A is
listed, read and continued on worker B; ``kill -9`` of A mid-answer leaves B an ``interrupted``
turn with every streamed message stored, and the session goes on on B."""

from __future__ import annotations

import signal
import time

import httpx
import pytest
from served import ServerProcess, parse_sse, sse_events

pytestmark = pytest.mark.integration


@pytest.fixture
def workers(serve_home, postgres_server, tmp_path):
    url = postgres_server.create_database("serve")
    a, b = (ServerProcess(serve_home, url, log=tmp_path / f"{name}.log") for name in ("a", "b"))
    try:
        yield a.wait_ready(), b.wait_ready()  # both started before either is waited for
    finally:
        for worker in (a, b):
            worker.stop()


def ask(http: httpx.Client, sid: str, question: str) -> list[dict]:
    response = http.post(f"/v1/sessions/{sid}/questions", json={"question": question})
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


def stored_message_ids(http: httpx.Client, sid: str) -> list[str]:
    lines = http.get(f"/v1/sessions/{sid}/trace").text.splitlines()
    return [httpx.Response(200, content=line).json()["id"] for line in lines if '"message"' in line]


def test_a_session_moves_between_workers_and_survives_kill_9_of_one(workers):
    a, b = workers
    with httpx.Client(base_url=a.url, timeout=30) as on_a, httpx.Client(base_url=b.url, timeout=30) as on_b:
        sid = on_a.post("/v1/sessions", json={"title": "shared"}).json()["id"]
        events = ask(on_a, sid, "who directed Kismet")
        assert events[-2]["data"]["text"] == "William Dieterle" and events[-1]["data"] == {"status": "done"}
        streamed_on_a = [e["data"]["id"] for e in events if e["event"] == "message"]

        # B lists it, reads its turn and answer, and its messages
        listed = {s["id"]: s for s in on_b.get("/v1/sessions").json()["sessions"]}
        assert listed[sid]["title"] == "shared" and listed[sid]["turns"] == 1 and not listed[sid]["running"]
        turns = on_b.get(f"/v1/sessions/{sid}").json()["turns"]
        assert [(t["question"], t["status"], t["answer"]["text"]) for t in turns] == [
            ("who directed Kismet", "done", "William Dieterle")]
        assert turns[0]["answer"]["evidence"]["triples"][0]["o_label"] == "William Dieterle"
        assert stored_message_ids(on_b, sid) == streamed_on_a

        # B continues it: its follow-up sees A's turn in the history
        events = ask(on_b, sid, "recall")
        assert events[0]["data"]["turn"] == 1 and events[-2]["data"]["text"] == "who directed Kismet"

        # A dies mid-answer: B sees the turn interrupted, what A streamed kept, and goes on
        seen: list[str] = []
        try:
            with on_a.stream("POST", f"/v1/sessions/{sid}/questions", json={"question": "slow 400"}) as response:
                for _, event in sse_events(response):
                    if event["event"] == "message":
                        seen.append(event["data"]["id"])
                    if len(seen) == 15:
                        a.proc.send_signal(signal.SIGKILL)
        except httpx.HTTPError:
            pass  # the connection died with the worker
        assert a.stop() == -signal.SIGKILL and len(seen) >= 15
        # the database notices the dead worker's connection (and drops its lock) within moments
        deadline = time.monotonic() + 15
        while True:
            detail = on_b.get(f"/v1/sessions/{sid}").json()
            statuses = [t["status"] for t in detail["turns"]]
            if statuses[-1] != "running" or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert statuses == ["done", "done", "interrupted"] and not detail["running"]
        stored = stored_message_ids(on_b, sid)
        assert stored[:len(streamed_on_a)] == streamed_on_a
        killed_turn = stored[len(streamed_on_a) + 2:]  # after turn 1's question and answer
        assert killed_turn[:len(seen)] == seen  # everything A streamed before dying is stored, in order
        events = ask(on_b, sid, "recall")  # the interrupted turn has no answer: not in the history
        assert events[0]["data"]["turn"] == 3
        assert events[-2]["data"]["text"] == "who directed Kismet | recall"
        assert [t["status"] for t in on_b.get(f"/v1/sessions/{sid}").json()["turns"]] == [
            "done", "done", "interrupted", "done"]
