"""Session persistence: every message as it happens; a killed run leaves its messages; resume works."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from agents_playbook import Sleeper, any_reply_model, sleeper_routes

from kgteam.agents.sessions import SqliteSessionStore
from kgteam.agents.team import TeamRunner
from kgteam.agents.trace import export_jsonl, render_text

HERE = Path(__file__).parent


def team_with(store):
    return TeamRunner(roles={"sleeper": Sleeper(steps=3)}, routes=sleeper_routes(), model=any_reply_model(),
                      tools=None, session_store=store)


async def test_messages_and_turns_are_persisted(tmp_path):
    store = SqliteSessionStore(tmp_path / "s.db")
    team = team_with(store)
    seen = []
    a1 = await team.ask("first", session_id="abc", on_event=seen.append)
    await team.ask("second", session_id="abc")
    msgs = store.messages("abc")
    assert [m.id for m in msgs[: len(seen)]] == [e.id for e in seen]
    assert [m.kind for m in store.messages("abc", turn=1)] == ["question", "missing_info", "missing_info", "answer"]
    assert store.messages("abc", turn=0)[-1].payload == a1
    assert [(q, a.text) for q, a in store.history("abc")] == [("first", "done after 3 steps"),
                                                               ("second", "done after 3 steps")]
    (info,) = store.list_sessions()
    assert info.session_id == "abc" and info.turns == 2 and info.incomplete_turns == 0
    store.close()
    reopened = SqliteSessionStore(tmp_path / "s.db")
    assert len(reopened.messages("abc")) == len(msgs)
    assert reopened.journal_mode() == "wal"


def test_killed_run_keeps_its_messages_and_the_session_resumes(tmp_path):
    db = tmp_path / "sessions.db"
    proc = subprocess.Popen([sys.executable, str(HERE / "killable_session.py"), str(db), "sess1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines = []
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.strip())
            if line.strip() == "EVENT 1 missing_info":  # turn 1 is now asleep inside its second step
                break
        assert lines and lines[-1] == "EVENT 1 missing_info", (lines, proc.stderr.read() if proc.poll() else "")
        time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL

    store = SqliteSessionStore(db)
    turns = store.turns("sess1")
    assert [(t.turn, t.question, t.complete) for t in turns] == [(0, "fast question", True),
                                                                 (1, "slow question", False)]
    assert [m.kind for m in store.messages("sess1", turn=1)] == ["question", "missing_info"]
    assert [q for q, _ in store.history("sess1")] == ["fast question"]
    assert store.list_sessions()[0].incomplete_turns == 1
    assert "INCOMPLETE" in render_text(store, "sess1")

    # resume: a new ask in the same session works, history is intact, the cut-off turn stays visible
    import asyncio

    answer = asyncio.run(team_with(store).ask("quick question", session_id="sess1"))
    assert answer.status == "answered"
    assert [q for q, _ in store.history("sess1")] == ["fast question", "quick question"]
    assert [t.complete for t in store.turns("sess1")] == [True, False, True]
    assert store.messages("sess1", turn=2)[0].payload.text == "quick question"


async def test_trace_export_and_text(tmp_path):
    store = SqliteSessionStore(tmp_path / "t.db")
    team = team_with(store)
    await team.ask("first", session_id="t1")
    store.append_event("t1", 0, "fallback", {"role": "sleeper", "decision": "entity", "why": "invalid json"})
    n = export_jsonl(store, "t1", tmp_path / "out" / "t1.jsonl")
    import json

    rows = [json.loads(line) for line in (tmp_path / "out" / "t1.jsonl").read_text().splitlines()]
    assert n == len(rows) and rows[0]["type"] == "turn"
    assert [r["kind"] for r in rows if r["type"] == "message"] == ["question", "missing_info", "missing_info",
                                                                   "answer"]
    assert any(r["type"] == "event" and r["event"] == "fallback" for r in rows)
    text = render_text(store, "t1")
    assert "turn 0: first" in text and "fallback" in text and "done after 3 steps" in text


def test_a_session_keeps_the_settings_it_started_with(tmp_path):
    path = tmp_path / "s.sqlite"
    with SqliteSessionStore(path) as store:
        assert store.settings("a") is None
        first = {"kg": "books", "kg_id": "books", "team": None, "model": None}
        assert store.save_settings("a", first) == first
        assert store.save_settings("a", {**first, "kg": "movies", "kg_id": "movies"}) == first  # first one stays
    with SqliteSessionStore(path) as store:  # survives a reopen
        assert store.settings("a")["kg_id"] == "books" and store.settings("b") is None
