"""kill -9 of a real ``kgteam chat`` mid-answer loses nothing it showed and the session resumes
(issue 13; ``benchmarks/kill_sessions.py`` runs 30+ kills and reports the figures)."""

from __future__ import annotations

import os
import time

from chat_kill import kill_rounds

KILLS = 5


def test_kill_9_mid_answer_loses_no_message_and_the_session_resumes(kg_home, tmp_path):
    started = time.monotonic()
    report = kill_rounds(tmp_path, kills=KILLS, seed=13, env={**os.environ, "KGTEAM_HOME": str(kg_home)})
    assert report.failures == []
    assert (report.kills, report.messages_lost, report.corruptions, report.resumed) == (KILLS, 0, 0, KILLS)
    assert all(steps >= 1 for steps in report.steps_at_kill)  # each kill came mid-answer
    assert time.monotonic() - started < 120
