"""kill -9 a real ``kgteam chat`` in the middle of an answer, again and again, and count the damage.

Each round starts ``kgteam chat --session S`` (the first ``--new-session S``) (through ``chat_sigint_support.py``, which adds the
``t_stepper`` role), asks a quick question (answered: the session works), then a slow one whose
steps are streamed as they are persisted, and sends SIGKILL after a seeded random number of them.
After every kill the SQLite store is checked: ``PRAGMA integrity_check``, every step the chat had
shown is stored (in order), and no earlier turn changed. The next round is the resume: the new
process must list the earlier questions and answer. Used by ``test_chat_kill.py`` (a few kills)
and ``benchmarks/kill_sessions.py`` (30+).
"""

from __future__ import annotations

import os
import queue
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

SUPPORT = Path(__file__).with_name("chat_sigint_support.py")
SESSION = "killme"
EVENT = re.compile(r"^\s*(\S+) → (\S+): (.*)$")  # chat's streamed line: sender → kind: summary

STEPPER_TEAM = """\
name: stepper
model: {provider: scripted, script: script.json}
kg: {backend: oxigraph, name: mini}
roles: [t_stepper]
routes:
  - {kind: question, sender: user, to: t_stepper}
  - {kind: missing_info, to: t_stepper}
budgets: {max_turns: 1000, timeout_s: 600}
"""


@dataclass
class KillReport:
    kills: int = 0
    messages_lost: int = 0  # streamed (so persisted) before the kill, missing after it
    corruptions: int = 0  # integrity_check not "ok", or an earlier turn changed
    resumed: int = 0  # new processes that listed the earlier questions and answered
    steps_at_kill: list[int] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


class _Chat:
    """One ``kgteam chat`` process, its output read line by line on a thread."""

    def __init__(self, team: Path, db: Path, env: dict[str, str], first: bool = False):
        self.proc = subprocess.Popen(
            [sys.executable, str(SUPPORT), "chat", "--team", str(team), "--db", str(db),
             "--new-session" if first else "--session", SESSION],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**env, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"})
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def say(self, text: str, timeout: float) -> list[str]:
        """Type a line; returns the output up to the chat's echo of it (after any resumed history)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        return self.read_until(lambda line: line.rstrip().endswith(f"you> {text}"), timeout)

    def read_until(self, done, timeout: float) -> list[str]:
        """Lines up to and including the first for which ``done(line)`` holds."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.proc.poll() is not None and self.lines.empty():
                    break
                continue
            seen.append(line)
            if done(line):
                return seen
        raise TimeoutError("".join(seen[-20:]) or "(no output)")

    def read_steps(self, count: int, timeout: float) -> list[tuple[str, ...]]:
        """The first ``count`` streamed messages, as (sender, kind, summary)."""
        steps: list[tuple[str, ...]] = []

        def collect(line: str) -> bool:
            if match := EVENT.match(line):
                steps.append(match.groups())
            return len(steps) >= count

        self.read_until(collect, timeout)
        return steps

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


def _stored_turns(db: Path) -> dict[int, tuple[bool, list[tuple[str, ...]]]]:
    """turn -> (complete, [(sender, kind, summary)]) as a resuming process reads them."""
    from kgteam.agents.sessions import SqliteSessionStore

    with SqliteSessionStore(db) as store:
        return {t.turn: (t.complete, [(m.sender, m.kind, m.payload.summary()) for m in store.messages(SESSION, t.turn)])
                for t in store.turns(SESSION)}


def _integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def kill_rounds(workdir: Path, kills: int, seed: int, env: dict[str, str] | None = None,
                timeout: float = 60.0) -> KillReport:
    """``kills`` kill -9 rounds, then one last resume. ``env`` names a ``KGTEAM_HOME`` holding a KG
    "mini" (any content: the stepper never queries it); ``workdir`` receives the team and the store."""
    rng = random.Random(seed)
    team, db = workdir / "stepper.yaml", workdir / "sessions.sqlite"
    team.write_text(STEPPER_TEAM, encoding="utf-8")
    (workdir / "script.json").write_text('{"rules": []}', encoding="utf-8")  # t_stepper calls no model
    env = dict(os.environ if env is None else env)
    report = KillReport()
    before: dict[int, tuple[bool, list[tuple[str, ...]]]] = {}
    for round_no in range(kills + 1):
        chat = _Chat(team, db, env, first=round_no == 0)
        try:
            earlier = len(before)
            opening = chat.say("a quick question", timeout)
            chat.read_until(lambda line: "done after 2 steps" in line, timeout)  # the session answers
            if round_no > 0:
                if any(f"resuming session {SESSION} ({earlier} earlier question(s))" in line for line in opening):
                    report.resumed += 1
                else:
                    report.failures.append(f"round {round_no}: did not resume with {earlier} questions: {opening}")
            if round_no == kills:
                chat.say("/quit", timeout)
                chat.read_until(lambda line: "resume with" in line, timeout)
                break
            chat.say("a slow question", timeout)
            shown = chat.read_steps(rng.randint(1, 150), timeout)  # a seeded point in the stream
            time.sleep(rng.random() * 0.02)  # land anywhere in the next write
            chat.kill()
        finally:
            chat.stop()
        report.kills += 1
        report.steps_at_kill.append(len(shown))
        if (check := _integrity(db)) != "ok":
            report.corruptions += 1
            report.failures.append(f"kill {report.kills}: integrity_check: {check}")
        after = _stored_turns(db)
        for turn, (complete, messages) in before.items():
            if after.get(turn) != (complete, messages):
                report.corruptions += 1
                report.failures.append(f"kill {report.kills}: turn {turn} changed")
        killed_turn = max(after)
        stored = [m for m in after[killed_turn][1] if m[0] != "user" and m[1] != "answer"]
        lost = sum((Counter(shown) - Counter(stored)).values())
        if lost or stored[:len(shown)] != shown or after[killed_turn][0]:
            report.messages_lost += lost
            report.failures.append(f"kill {report.kills}: {lost} of {len(shown)} shown steps missing"
                                   + (", stored out of order" if not lost and stored[:len(shown)] != shown else "")
                                   + (", the turn is marked complete" if after[killed_turn][0] else ""))
        before = after
    return report
