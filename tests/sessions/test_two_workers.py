"""Two worker processes on one PostgreSQL database: a session started on one goes on on the other,
while both run; and after the first is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.integration


class Worker:
    def __init__(self, home: Path, url: str) -> None:
        self.proc = subprocess.Popen([sys.executable, str(HERE / "worker_process.py"), str(home), url],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})

    def ready(self) -> Worker:
        assert self._line() == "READY"
        return self

    def _line(self) -> str:
        line = self.proc.stdout.readline().strip()
        if not line:
            self.proc.kill()
            raise AssertionError(f"worker ended: {self.proc.stderr.read()[-3000:]}")
        return line

    def ask(self, session_id: str, question: str) -> tuple[list[str], dict]:
        self.proc.stdin.write(f"ASK {session_id} {question}\n")
        self.proc.stdin.flush()
        seen = json.loads(self._line().removeprefix("HISTORY "))
        return seen, json.loads(self._line().removeprefix("ANSWER "))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("QUIT\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def test_a_session_started_in_one_process_continues_in_another(postgres_server, orchard_home):
    from kgteam.sessions import open_session_store

    url = postgres_server.create_database()
    first, second = Worker(orchard_home, url), Worker(orchard_home, url)  # they start side by side
    first.ready(), second.ready()
    try:
        seen, answer = first.ask("shared", "who is the gardener of Old Elm")
        assert seen == [] and answer == {"text": "Ada Quill", "history": 1}
        seen, answer = second.ask("shared", "who is the gardener of Young Oak")  # the other worker, both alive
        assert seen == ["who is the gardener of Old Elm"]
        assert answer == {"text": "Bo Lark", "history": 2}
        first.proc.send_signal(signal.SIGKILL)  # a worker lost: its sessions live on elsewhere
        first.proc.wait(timeout=10)
        seen, _ = second.ask("shared", "who is the gardener of Old Elm")
        assert len(seen) == 2
    finally:
        for worker in (first, second):
            if worker.proc.poll() is None:
                worker.stop()
    with open_session_store(url) as store:
        turns = store.turns("shared")
        assert [(t.turn, t.status) for t in turns] == [(0, "done"), (1, "done"), (2, "done")]
        assert [m.kind for m in store.messages("shared", turn=1)][0] == "question"
        assert {m.turn for m in store.messages("shared")} == {0, 1, 2}
