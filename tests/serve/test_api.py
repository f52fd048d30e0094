"""The HTTP API in-process (ASGI): sessions, streamed questions, cancel, traces, errors."""

from __future__ import annotations

import asyncio
import json

from served import app_client, parse_sse

QUESTION = {"question": "who directed Kismet"}


async def new_session(client, **body) -> str:
    response = await client.post("/v1/sessions", json=body)
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def ask(client, sid: str, question: str) -> list[dict]:
    response = await client.post(f"/v1/sessions/{sid}/questions", json={"question": question})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return parse_sse(response.text)


async def wait_running(client, sid: str) -> None:
    for _ in range(200):
        detail = (await client.get(f"/v1/sessions/{sid}")).json()
        if detail["running"] and detail["turns"] and detail["turns"][-1]["status"] == "running":
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"session {sid} never ran")


async def test_health_kgs_and_teams_name_what_is_served(client):
    health = (await client.get("/health")).json()
    assert health["status"] == "ok" and health["team"] == "mini-serve" and health["kg"] == "mini"
    assert health["auth"] is False and isinstance(health["version"], str)
    kgs = (await client.get("/v1/kgs")).json()["kgs"]
    assert kgs[0]["name"] == "mini" and kgs[0]["served"] is True and kgs[0]["facts"] == 6
    teams = (await client.get("/v1/teams")).json()["teams"]
    assert teams[0]["name"] == "mini-serve" and teams[0]["roles"] == ["s_entry", "s_answerer"]
    assert teams[0]["budgets"]["max_llm_calls"] == 5
    assert {"triad", "kerag"} <= {t["name"] for t in teams[1:]}
    schema = (await client.get("/openapi.json")).json()
    assert {"/v1/sessions/{session_id}/questions", "/v1/chat/completions", "/v1/models", "/health"} <= set(
        schema["paths"])


async def test_a_question_streams_turn_messages_tool_calls_budgets_answer_then_done(client, service):
    sid = await new_session(client)
    events = await ask(client, sid, "who directed Kismet")
    kinds = [e["event"] for e in events]
    assert kinds[0] == "turn" and kinds[-1] == "done" and kinds[-2] == "answer"
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["data"] == {"session": sid, "turn": 0, "question": "who directed Kismet"}
    messages = [e["data"] for e in events if e["event"] == "message"]
    assert [m["kind"] for m in messages] == ["question", "entity_candidates", "answer"]
    assert [m["seq"] for m in messages] == [0, 1, 2]
    assert messages[0]["recipient"] == "s_entry" and messages[1]["recipient"] == "s_answerer"
    assert messages[2]["recipient"] is None and messages[1]["summary"] == "'Kismet' → Kismet"
    # a budget update follows every message, before anything else is said
    for i, kind in enumerate(kinds):
        if kind == "message":
            assert kinds[i + 1] == "budget"
    tools = [e["data"]["tool"] for e in events if e["event"] == "tool_call"]
    assert tools == ["search_entities", "run_sparql"]
    assert next(e for e in events if e["event"] == "tool_call")["data"]["args"]["text"] == "Kismet"
    budgets = [e["data"] for e in events if e["event"] == "budget"]
    assert budgets[0]["llm_calls"] == {"used": 0, "max": 5} and budgets[-1]["llm_calls"]["used"] == 1
    answer = events[-2]["data"]
    assert answer["text"] == "William Dieterle" and answer["stop_reason"] == "done"
    assert answer["evidence"]["triples"][0]["s_label"] == "Kismet"
    assert answer["evidence"]["triples"][0]["o_label"] == "William Dieterle"
    assert answer["evidence"]["queries"][0]["rows"] == 1 and answer["cost"]["llm_calls"] == 1
    assert events[-1]["data"] == {"status": "done"}
    # every streamed message is in the store, in order
    assert [env.id for env in service.store.messages(sid)] == [m["id"] for m in messages]
    detail = (await client.get(f"/v1/sessions/{sid}")).json()
    assert detail["turns"][0]["status"] == "done" and detail["turns"][0]["answer"] == answer
    assert detail["title"] == "who directed Kismet" and detail["running"] is False
    follow_up = await ask(client, sid, "what did Joel Zwick direct")
    assert follow_up[0]["data"]["turn"] == 1
    assert follow_up[-2]["data"]["text"] == "Fat Albert, My Big Fat Greek Wedding"


async def test_cancel_stops_the_running_question_and_a_second_question_meanwhile_is_409(client):
    sid = await new_session(client)
    stream = asyncio.create_task(client.post(f"/v1/sessions/{sid}/questions", json={"question": "sleep a while"}))
    await wait_running(client, sid)
    busy = await client.post(f"/v1/sessions/{sid}/questions", json=QUESTION)
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "session_busy"
    assert "cancel" in busy.json()["error"]["message"]
    assert (await client.delete(f"/v1/sessions/{sid}")).status_code == 409
    listed = {s["id"]: s for s in (await client.get("/v1/sessions")).json()["sessions"]}
    assert listed[sid]["running"] is True
    assert (await client.post(f"/v1/sessions/{sid}/cancel")).json() == {"cancelled": True}
    response = await asyncio.wait_for(stream, 10)
    events = parse_sse(response.text)
    assert events[-1] == {"id": len(events), "event": "done", "data": {"status": "cancelled"}}
    assert events[-2]["event"] == "answer" and events[-2]["data"]["stop_reason"] == "cancelled"
    assert (await client.post(f"/v1/sessions/{sid}/cancel")).json() == {"cancelled": False}
    detail = (await client.get(f"/v1/sessions/{sid}")).json()
    assert [t["status"] for t in detail["turns"]] == ["cancelled"] and detail["running"] is False
    events = await ask(client, sid, "who directed Kismet")  # the session goes on
    assert events[-1]["data"]["status"] == "done" and events[0]["data"]["turn"] == 1


async def test_many_sessions_answer_at_the_same_time_each_in_its_own_session(client, service):
    sids = [await new_session(client) for _ in range(12)]
    questions = ["who directed Kismet", "what did Joel Zwick direct", "who directed Fat Albert"]
    sleepers = [await new_session(client) for _ in range(2)]
    slow = [asyncio.create_task(client.post(f"/v1/sessions/{s}/questions", json={"question": "sleep"}))
            for s in sleepers]
    for s in sleepers:
        await wait_running(client, s)
    runs = await asyncio.gather(*(ask(client, sid, questions[i % 3]) for i, sid in enumerate(sids)))
    expected = ["William Dieterle", "Fat Albert, My Big Fat Greek Wedding", "Joel Zwick"]
    for i, (sid, events) in enumerate(zip(sids, runs, strict=True)):
        assert events[-2]["data"]["text"] == expected[i % 3]
        assert all(e["data"]["session"] == sid for e in events if e["event"] == "turn")
        streamed = [e["data"]["id"] for e in events if e["event"] == "message"]
        assert [env.id for env in service.store.messages(sid)] == streamed
        assert {env.session_id for env in service.store.messages(sid)} == {sid}
    for s in sleepers:  # the slow ones were running all along; they stop when asked
        assert (await client.post(f"/v1/sessions/{s}/cancel")).json() == {"cancelled": True}
    for task in slow:
        assert parse_sse((await asyncio.wait_for(task, 10)).text)[-1]["data"]["status"] == "cancelled"


async def test_a_failed_run_ends_with_its_answer_an_error_event_and_done_error(client):
    sid = await new_session(client)
    events = await ask(client, sid, "who directed Nobody At All")  # no scripted reply: the role fails
    kinds = [e["event"] for e in events]
    assert kinds[-3:] == ["answer", "error", "done"]
    assert events[-3]["data"]["stop_reason"] == "error"
    assert events[-2]["data"]["code"] == "run_failed" and "s_entry" in events[-2]["data"]["message"]
    assert events[-1]["data"] == {"status": "error"}


async def test_a_turn_cut_off_by_a_dead_server_reads_as_interrupted_and_the_session_goes_on(client, service):
    sid = await new_session(client)
    service.store.begin_turn(sid, "the question a killed server was answering")
    detail = (await client.get(f"/v1/sessions/{sid}")).json()
    assert [t["status"] for t in detail["turns"]] == ["interrupted"] and detail["turns"][0]["answer"] is None
    events = await ask(client, sid, "who directed Kismet")
    assert events[0]["data"]["turn"] == 1 and events[-1]["data"]["status"] == "done"


async def test_session_crud_and_trace(client, service):
    sid = await new_session(client, title="films")
    listed = (await client.get("/v1/sessions")).json()["sessions"]
    assert {"id": sid, "title": "films", "turns": 0, "running": False}.items() <= next(
        s for s in listed if s["id"] == sid).items()
    await ask(client, sid, "who directed Kismet")
    trace = await client.get(f"/v1/sessions/{sid}/trace")
    assert trace.status_code == 200 and trace.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in trace.text.splitlines()]
    assert lines[0]["type"] == "turn" and lines[0]["question"] == "who directed Kismet" and lines[0]["complete"]
    assert [r["kind"] for r in lines if r["type"] == "message"] == ["question", "entity_candidates", "answer"]
    assert {r["event"] for r in lines if r["type"] == "event"} >= {"tool_call", "llm_call"}
    assert (await client.get(f"/v1/sessions/{sid}")).json()["title"] == "films"
    assert (await client.delete(f"/v1/sessions/{sid}")).status_code == 204
    for call in (client.get(f"/v1/sessions/{sid}"), client.delete(f"/v1/sessions/{sid}"),
                 client.get(f"/v1/sessions/{sid}/trace"), client.post(f"/v1/sessions/{sid}/cancel"),
                 client.post(f"/v1/sessions/{sid}/questions", json=QUESTION)):
        response = await call
        assert response.status_code == 404 and response.json()["error"]["code"] == "session_not_found"
    assert service.store.messages(sid) == []


async def test_errors_are_json_with_a_clear_message_and_no_traceback(client, service, monkeypatch):
    sid = await new_session(client)
    cases = [
        (client.get("/v1/nowhere"), 404, "not_found", "no such endpoint"),
        (client.put("/v1/sessions"), 405, "method_not_allowed", "PUT is not allowed"),
        (client.post(f"/v1/sessions/{sid}/questions", content=b"{not json", headers={"content-type": "application/json"}),
         422, "invalid_request", "not valid JSON"),
        (client.post(f"/v1/sessions/{sid}/questions", json={"text": "x"}), 422, "invalid_request", "question: Field required"),
        (client.post(f"/v1/sessions/{sid}/questions", json={"question": "   "}), 422, "invalid_request", "must not be empty"),
        (client.post(f"/v1/sessions/{sid}/questions", json={"question": "x" * 4001}), 422, "invalid_request",
         "at most 4000 characters"),
        (client.get("/v1/sessions/no such id"), 404, "session_not_found", "no session"),
        (client.post("/v1/sessions", json={"title": "t" * 201}), 422, "invalid_request", "title"),
    ]
    for call, status, code, words in cases:
        response = await call
        assert response.status_code == status, response.text
        assert response.json()["error"]["code"] == code and words in response.json()["error"]["message"]

    def broken() -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(service.store, "list_sessions", broken)
    response = await client.get("/v1/sessions")
    assert response.status_code == 500 and response.json()["error"]["code"] == "internal_error"
    assert "secret internals" not in response.text and "Traceback" not in response.text

    class ClosedLog:  # e.g. structlog writing to a stream that was closed: the client still gets JSON
        def exception(self, *args, **kwargs):
            raise ValueError("I/O operation on closed file")

    monkeypatch.setattr("kgteam.serve.errors.log", ClosedLog())
    response = await client.get("/v1/sessions")
    assert response.status_code == 500 and response.json()["error"]["code"] == "internal_error"


async def test_api_keys_guard_v1_and_sessions_are_visible_to_their_key_only(service):
    keys = {"api_keys": ("k-alice", "k-bob"), "rate_per_minute": 0}
    async with app_client(service, **keys) as anon, app_client(service, "k-alice", **keys) as alice, \
            app_client(service, "k-bob", **keys) as bob, app_client(service, "k-mallory", **keys) as mallory:
        assert (await anon.get("/health")).json()["auth"] is True
        assert (await anon.get("/openapi.json")).status_code == 200
        for response in (await anon.get("/v1/sessions"), await anon.get("/v1/models"), await mallory.get("/v1/kgs")):
            assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
            assert response.json()["error"]["code"] == "unauthorized"
        sid = await new_session(alice)
        events = await ask(alice, sid, "who directed Kismet")
        assert events[-1]["data"]["status"] == "done"
        assert [s["id"] for s in (await alice.get("/v1/sessions")).json()["sessions"]] == [sid]
        assert (await bob.get("/v1/sessions")).json()["sessions"] == []
        for call in (bob.get(f"/v1/sessions/{sid}"), bob.get(f"/v1/sessions/{sid}/trace"),
                     bob.post(f"/v1/sessions/{sid}/cancel"), bob.delete(f"/v1/sessions/{sid}"),
                     bob.post(f"/v1/sessions/{sid}/questions", json=QUESTION)):
            assert (await call).status_code == 404
        chat = await bob.post("/v1/chat/completions", json={"model": "mini-serve", "user": sid,
                                                             "messages": [{"role": "user", "content": "who directed Kismet"}]})
        assert chat.status_code == 404  # another key's session cannot be borrowed through the facade
        assert len((await alice.get(f"/v1/sessions/{sid}")).json()["turns"]) == 1
        assert "k-alice" not in json.dumps(service.store.settings(sid))  # keys are never stored


async def test_rate_limit_answers_429_with_retry_after_per_key(service):
    settings = {"api_keys": ("k-one", "k-two"), "rate_per_minute": 6, "rate_burst": 3}
    async with app_client(service, "k-one", **settings) as one, app_client(service, "k-two", **settings) as two:
        assert [(await one.get("/v1/models")).status_code for _ in range(3)] == [200, 200, 200]
        refused = await one.get("/v1/models")
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limited"
        assert 1 <= int(refused.headers["retry-after"]) <= 10
        assert (await two.get("/v1/models")).status_code == 200  # another key has its own bucket
        assert (await one.get("/health")).status_code == 200  # health is not limited
    async with app_client(service, rate_per_minute=60, rate_burst=1) as by_ip:
        assert (await by_ip.get("/v1/models")).status_code == 200
        assert (await by_ip.get("/v1/models")).status_code == 429


async def test_request_bodies_over_the_limit_are_refused_before_they_are_read(service):
    async with app_client(service, max_request_bytes=2048, rate_per_minute=0) as small:
        sid = await new_session(small)
        big = {"question": "x" * 5000}
        response = await small.post(f"/v1/sessions/{sid}/questions", json=big)
        assert response.status_code == 413 and response.json()["error"]["code"] == "request_too_large"

        async def chunks():  # no Content-Length: the bytes are counted as they come
            for _ in range(10):
                yield b"x" * 1000

        response = await small.post(f"/v1/sessions/{sid}/questions", content=chunks(),
                                    headers={"content-type": "application/json"})
        assert response.status_code == 413
        assert (await small.get(f"/v1/sessions/{sid}")).json()["turns"] == []


async def test_past_max_active_a_question_is_announced_at_once_and_waits_its_turn(service):
    from kgteam.serve import ServeSettings, TeamService

    one_at_a_time = TeamService(service.team, settings=ServeSettings(max_active=1, rate_per_minute=0),
                                home=service.home)
    async with app_client(one_at_a_time, rate_per_minute=0) as client:
        first, second = await new_session(client), await new_session(client)
        sleeping = asyncio.create_task(client.post(f"/v1/sessions/{first}/questions", json={"question": "sleep"}))
        await wait_running(client, first)
        waiting = asyncio.create_task(client.post(f"/v1/sessions/{second}/questions", json=QUESTION))
        await wait_running(client, second)  # begun (and announced) though not yet answered
        await asyncio.sleep(0.3)
        assert not waiting.done() and service.store.messages(second) == []
        assert (await client.post(f"/v1/sessions/{first}/cancel")).json() == {"cancelled": True}
        events = parse_sse((await asyncio.wait_for(waiting, 10)).text)
        assert events[0]["event"] == "turn" and events[-2]["data"]["text"] == "William Dieterle"
        assert parse_sse((await sleeping).text)[-1]["data"]["status"] == "cancelled"


async def test_a_quiet_run_yields_keepalive_gaps(service):
    from kgteam.serve.events import RunEvents
    from kgteam.serve.runs import QuestionRun

    run = QuestionRun("s", "q", RunEvents("s", "q", service.team.runner.budgets, []))
    run._put(run.translate.begin(0))
    stream = run.events(idle_s=0.05)
    assert (await anext(stream))[0] == "turn"
    assert await anext(stream) is None  # nothing for 50 ms: time for a keep-alive comment
    run.finish("cancelled")
    assert [e[0] for e in [e async for e in stream]] == ["done"]
