from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from slow_eval_run import ITEMS, SlowSquares

from kgteam.eval.datasets import DatasetItem, GoldAnswer
from kgteam.eval.runner import read_run, run_eval
from kgteam.protocols.payloads import Answer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


class Crashy:
    async def ask(self, question: str, *, session_id: str | None = None) -> Answer:
        if "crash" in question:
            raise RuntimeError("role exploded")
        return Answer(text="I don't know", status="unknown")


async def test_crashing_question_is_recorded_and_run_continues(tmp_path):
    items = [DatasetItem(id=f"x{i}", question="please crash" if i == 1 else "fine", answers=[GoldAnswer(label="a")])
             for i in range(4)]
    out = tmp_path / "run.jsonl"
    summary = await run_eval(items, Crashy(), out, concurrency=2, progress=False)
    assert summary.done == 4 and summary.errors == 1
    records = {r.id: r for r in read_run(out)}
    assert records["x1"].status == "error" and "RuntimeError: role exploded" in records["x1"].error
    assert records["x1"].grading.decided_by == "rule:error"
    assert all(records[i].status == "ok" and records[i].grading.grade == "missing" for i in ("x0", "x2", "x3"))


async def test_records_carry_answer_cost_and_grades(tmp_path):
    out = tmp_path / "run.jsonl"
    await run_eval(ITEMS[:3], SlowSquares(0.0), out, progress=False)
    r = {rec.id: rec for rec in read_run(out)}["q002"]
    assert (r.answer_text, r.llm_calls, r.prompt_tokens, r.completion_tokens) == ("4", 2, 20, 3)
    assert r.grading.grade == "accurate" and r.grading.decided_by == "rule:number" and r.seconds >= 0


async def test_torn_last_line_is_cut_and_redone(tmp_path):
    out = tmp_path / "run.jsonl"
    await run_eval(ITEMS[:3], SlowSquares(0.0), out, progress=False)
    with open(out, "a", encoding="utf-8") as fh:
        fh.write('{"id": "q003", "question": "what is 3 sq')  # killed mid-write
    team = SlowSquares(0.0)
    summary = await run_eval(ITEMS[:5], team, out, progress=False)
    assert summary.skipped == 3 and sorted(team.asked) == ["what is 3 squared", "what is 4 squared"]
    ids = [r.id for r in read_run(out)]
    assert sorted(ids) == [f"q{i:03d}" for i in range(5)]
    assert out.read_text(encoding="utf-8").endswith("\n")


def test_resume_after_killed_subprocess(tmp_path):
    out = tmp_path / "run.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(HERE / "slow_eval_run.py"), str(out), "0.15"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            if out.exists() and out.read_text(encoding="utf-8").count("\n") >= 6:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
    first = {r.id: r for r in read_run(out)}
    assert 6 <= len(first) < 40
    team = SlowSquares(0.0)
    summary = asyncio.run(run_eval(ITEMS, team, out, concurrency=4, progress=False))
    assert summary.skipped == len(first)
    assert not {f"what is {int(i[1:])} squared" for i in first} & set(team.asked)  # nothing redone
    records = read_run(out)
    ids = [r.id for r in records]
    assert len(ids) == len(set(ids)) == 40  # nothing lost, nothing duplicated
    assert all(r.grading.grade == "accurate" for r in records)
    for r in records:  # records written before the kill are untouched
        if r.id in first:
            assert r == first[r.id]


class OneSlotTeam:
    """Every question makes one 0.2 s call to a model that serves one request at a time."""

    def __init__(self) -> None:
        from kgteam.llm.slots import ModelSlots

        self.slots = ModelSlots(1)

    async def ask(self, question: str, *, session_id: str | None = None) -> Answer:
        async with self.slots.hold():
            await asyncio.sleep(0.2)
        return Answer(text="I don't know", status="unknown")


async def test_seconds_per_question_exclude_waiting_for_the_models_slot(tmp_path):
    items = [DatasetItem(id=f"s{i}", question="q", answers=[GoldAnswer(label="a")]) for i in range(4)]
    out = tmp_path / "run.jsonl"
    started = time.perf_counter()
    await run_eval(items, OneSlotTeam(), out, concurrency=4, progress=False)
    wall = time.perf_counter() - started
    records = read_run(out)
    assert all(0.15 <= r.seconds < 0.45 for r in records), [r.seconds for r in records]
    assert sum(r.seconds for r in records) <= wall + 0.2  # not 4 questions x the whole wall time
    assert sorted(round(r.queued_seconds, 1) for r in records) == [0.0, 0.2, 0.4, 0.6]


def test_a_local_servers_clients_share_its_one_slot():
    from kgteam.llm.local_server import LocalModelServer
    from kgteam.llm.openai_model import OpenAIChatModel

    server = LocalModelServer(port=8199)  # not started: a client needs only its URL
    first, second = (OpenAIChatModel.for_local_server(server) for _ in range(2))
    assert first.slots is server.slots is second.slots and server.slots.limit == 1
