"""The session-store contract, run on SQLite and on PostgreSQL alike: what the runtime, the CLI,
the trace exporter and ``kgteam serve`` rely on."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from agents_playbook import Sleeper, any_reply_model, sleeper_routes

from kgteam.agents.team import TeamRunner, cancelled_answer
from kgteam.agents.trace import export_jsonl, render_text
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer, Question
from kgteam.sessions import SessionStoreError

AGENTS = Path(__file__).resolve().parents[1] / "agents"


def team_with(store, sleep_at: int = 2, sleep_s: float = 3600.0) -> TeamRunner:
    return TeamRunner(roles={"sleeper": Sleeper(steps=3, sleep_at=sleep_at, sleep_s=sleep_s)},
                      routes=sleeper_routes(), model=any_reply_model(), tools=None, session_store=store)


async def test_messages_and_turns_are_persisted_and_seen_by_another_store(open_store):
    store = open_store()
    team = team_with(store)
    seen = []
    a1 = await team.ask("first", session_id="abc", on_event=seen.append)
    await team.ask("second", session_id="abc")
    other = open_store()  # another connection / another worker on the same database
    msgs = other.messages("abc")
    assert [m.id for m in msgs[: len(seen)]] == [e.id for e in seen]
    assert [m.kind for m in other.messages("abc", turn=1)] == ["question", "missing_info", "missing_info", "answer"]
    assert other.messages("abc", turn=0)[-1].payload == a1
    assert [(q, a.text) for q, a in other.history("abc")] == [("first", "done after 3 steps"),
                                                               ("second", "done after 3 steps")]
    assert [(t.turn, t.status, t.complete) for t in other.turns("abc")] == [(0, "done", True), (1, "done", True)]
    (info,) = other.list_sessions()
    assert (info.session_id, info.turns, info.incomplete_turns, info.title) == ("abc", 2, 0, "first")
    assert info.created_at <= info.updated_at


async def test_a_streamed_envelope_is_already_committed(open_store):
    store, reader = open_store(), open_store()
    team = team_with(store)
    async for env in team.stream("first", session_id="s"):
        assert env.id in {m.id for m in reader.messages("s")}, f"{env.kind} streamed before it was stored"


async def test_cancelled_run_ends_its_turn_cancelled_with_the_partial_answer(store):
    team = team_with(store)
    cancel = asyncio.Event()
    task = asyncio.create_task(team.ask("slow one", session_id="c", cancel=cancel))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if len(store.messages("c")) >= 2:
            break
    cancel.set()
    answer = await task
    assert answer.stopped_by == "cancelled"
    (turn,) = store.turns("c")
    assert turn.status == "cancelled" and turn.complete and turn.answer.stopped_by == "cancelled"


def test_end_turn_marks_only_running_turns(store):
    t0 = store.begin_turn("s", "q0")
    store.finish_turn("s", t0, Answer(confidence=1.0, text="a0"))
    t1 = store.begin_turn("s", "q1")
    t2 = store.begin_turn("s", "q2")
    assert store.end_turn("s", t1, "interrupted") is True
    assert store.end_turn("s", t2, "cancelled") is True
    assert store.end_turn("s", t0, "cancelled") is False  # it had ended with an answer
    assert store.end_turn("s", t1, "cancelled") is False
    with pytest.raises(ValueError, match="interrupted' or 'cancelled"):
        store.end_turn("s", t2, "done")
    turns = store.turns("s")
    assert [(t.status, t.complete, t.finished_at is not None) for t in turns] == [
        ("done", True, True), ("interrupted", False, True), ("cancelled", False, True)]
    assert [q for q, _ in store.history("s")] == ["q0"]
    assert [t.turn for t in store.incomplete_turns("s")] == [1, 2]
    assert store.session("s").incomplete_turns == 2
    t3 = store.begin_turn("s", "q3")  # the session goes on after them
    assert t3 == 3


def test_a_turn_running_in_a_live_store_stays_running_and_a_closed_store_interrupts_its_own(open_store):
    first, second = open_store(), open_store()
    turn = first.begin_turn("s", "still going")
    assert [t.status for t in second.turns("s")] == ["running"]
    assert second.list_sessions()[0].incomplete_turns == 1
    first.close()  # shut down with the turn unanswered (a worker stopping)
    assert [t.status for t in second.turns("s")] == ["interrupted"]
    assert turn == 0


def test_killed_worker_keeps_its_messages_and_the_session_goes_on(store_url, open_store):
    proc = subprocess.Popen([sys.executable, str(AGENTS / "killable_session.py"), store_url, "sess1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.strip())
            if line.strip() == "EVENT 1 missing_info":  # turn 1 is now asleep inside its second step
                break
        assert lines and lines[-1] == "EVENT 1 missing_info", (lines, proc.stderr.read() if proc.poll() else "")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL

    store = open_store()
    turns = store.turns("sess1")
    assert [(t.turn, t.question, t.status) for t in turns] == [(0, "fast question", "done"),
                                                               (1, "slow question", "interrupted")]
    assert [m.kind for m in store.messages("sess1", turn=1)] == ["question", "missing_info"]
    assert [q for q, _ in store.history("sess1")] == ["fast question"]
    assert store.list_sessions()[0].incomplete_turns == 1
    assert "INCOMPLETE" in render_text(store, "sess1")

    answer = asyncio.run(team_with(store).ask("quick question", session_id="sess1"))
    assert answer.status == "answered"
    assert [q for q, _ in store.history("sess1")] == ["fast question", "quick question"]
    assert [t.status for t in store.turns("sess1")] == ["done", "interrupted", "done"]
    assert store.messages("sess1", turn=2)[0].payload.text == "quick question"


async def test_trace_export_and_text(store, tmp_path):
    team = team_with(store)
    await team.ask("first", session_id="t1")
    store.append_event("t1", 0, "fallback", {"role": "sleeper", "decision": "entity", "why": "invalid json"})
    n = export_jsonl(store, "t1", tmp_path / "out" / "t1.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "out" / "t1.jsonl").read_text().splitlines()]
    assert n == len(rows) and rows[0]["type"] == "turn" and rows[0]["status"] == "done"
    assert [r["kind"] for r in rows if r["type"] == "message"] == ["question", "missing_info", "missing_info",
                                                                   "answer"]
    fallback = [r for r in rows if r["type"] == "event" and r["event"] == "fallback"]
    assert fallback and fallback[0]["why"] == "invalid json" and fallback[0]["role"] == "sleeper"
    text = render_text(store, "t1")
    assert "turn 0: first" in text and "fallback" in text and "done after 3 steps" in text


def test_events_keep_their_order_and_fields(store):
    turn = store.begin_turn("e", "q")
    for i in range(5):
        store.append_event("e", turn, "tool_call", {"role": "r", "tool": "t", "i": i, "nested": {"k": [i]}})
    env = Envelope(session_id="e", turn=turn, sender="user", payload=Question(text="q"))
    store.append_envelope(env)
    store.append_event("e", turn, "late", {"role": None})
    events = store.events("e")
    assert [(e["seq"], e["event"]) for e in events] == [(i, "tool_call") for i in range(5)] + [(5, "late")]
    assert events[2]["nested"] == {"k": [2]} and events[2]["turn"] == turn and events[0]["created_at"]
    assert store.events("e", turn=turn + 1) == []


def test_a_session_keeps_the_settings_it_started_with(open_store):
    store = open_store()
    assert store.settings("a") is None
    first = {"kg": "books", "kg_id": "books", "team": None, "model": None}
    assert store.save_settings("a", first) == first
    assert store.save_settings("a", {**first, "kg": "movies", "kg_id": "movies"}) == first  # first one stays
    store.close()
    reopened = open_store()
    assert reopened.settings("a")["kg_id"] == "books" and reopened.settings("b") is None


def test_sessions_have_owners_titles_and_can_be_deleted(store):
    info = store.create_session("k1", title="about trees", owner="hash-a")
    assert (info.session_id, info.title, info.owner, info.turns) == ("k1", "about trees", "hash-a", 0)
    store.create_session("k2", owner="hash-b")
    store.create_session("k3")
    with pytest.raises(SessionStoreError, match="exists already"):
        store.create_session("k1", owner="hash-b")
    assert store.session("k1").owner == "hash-a"  # not taken over
    turn = store.begin_turn("k2", "who tends Old Elm")
    store.append_envelope(Envelope(session_id="k2", turn=turn, sender="user", payload=Question(text="x")))
    store.append_event("k2", turn, "e", {"role": "r"})
    store.save_settings("k2", {"kg": "orchard"})
    store.finish_turn("k2", turn, Answer(confidence=1.0, text="Ada"))
    store.begin_turn("k1", "a later question")
    assert store.session("k2").title == "who tends Old Elm"  # a session made without a title takes the first question
    assert store.session("k1").title == "about trees"
    assert [s.session_id for s in store.list_sessions(owner="hash-a")] == ["k1"]
    assert [s.session_id for s in store.list_sessions(owner="hash-b")] == ["k2"]
    assert store.list_sessions(owner="nobody") == []
    assert {s.session_id for s in store.list_sessions()} == {"k1", "k2", "k3"}
    assert store.session("nope") is None

    assert store.delete_session("k2") is True
    assert store.delete_session("k2") is False
    assert store.session("k2") is None and store.turns("k2") == [] and store.messages("k2") == []
    assert store.events("k2") == [] and store.settings("k2") is None
    assert {s.session_id for s in store.list_sessions()} == {"k1", "k3"}
    assert store.begin_turn("k2", "again") == 0  # the id can be used afresh


def test_question_text_round_trips_and_nul_is_kept_out_of_plain_columns(store):
    question = "naïve 東京 🌳 'quoted' \"double\" \\ back\x00slash"
    turn = store.begin_turn("u", question)
    store.append_envelope(Envelope(session_id="u", turn=turn, sender="user", payload=Question(text=question)))
    store.finish_turn("u", turn, Answer(confidence=1.0, text="answer with \x00 inside"))
    (record,) = store.turns("u")
    assert record.question == question.replace("\x00", "\ufffd")
    assert store.messages("u")[0].payload.text == question  # the envelope keeps the exact text
    assert store.history("u")[0][1].text == "answer with \x00 inside"


def test_concurrent_begin_turn_in_one_session_gives_distinct_turns(open_store):
    stores = [open_store() for _ in range(3)]
    got: list[int] = []
    barrier = threading.Barrier(6)

    def ask(i: int) -> None:
        barrier.wait()
        got.append(stores[i % 3].begin_turn("busy", f"q{i}"))

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(6))
    assert len(stores[0].turns("busy")) == 6


def test_message_numbering_continues_in_a_reopened_store(open_store):
    first = open_store()
    turn = first.begin_turn("n", "q")
    for i in range(3):
        first.append_envelope(Envelope(session_id="n", turn=turn, sender="r", payload=Question(text=f"a{i}")))
    first.close()
    second = open_store()  # a worker that did not begin the turn appends to it
    second.append_envelope(Envelope(session_id="n", turn=turn, sender="r", payload=Question(text="a3")))
    assert [m.payload.text for m in second.messages("n")] == ["a0", "a1", "a2", "a3"]


def test_a_cancelled_answer_counts_as_an_answer_for_history(store):
    turn = store.begin_turn("h", "q")
    store.finish_turn("h", turn, cancelled_answer())
    ((question, answer),) = store.history("h")
    assert question == "q" and answer.stopped_by == "cancelled"
    assert store.turns("h")[0].status == "cancelled"


def test_the_store_says_where_it_is_and_its_schema(store, store_url):
    from kgteam.sessions.migrations import LATEST

    assert store.schema_version() == LATEST
    assert store.network is store_url.startswith("postgresql")
    assert store.url.split("://")[0] == store_url.split("://")[0]
