"""kill -9 of ``kgteam chat`` mid-answer, many times: are messages lost, is the store corrupted,
does the session resume?

Each round is a real ``kgteam chat --session S`` process (``tests/cli/chat_kill.py``): a quick
question is answered, a slow one streams steps (each persisted before it is shown) and the process
gets SIGKILL after a seeded random number of them. Then ``PRAGMA integrity_check``, every shown
step must be stored in order, earlier turns unchanged, and the next process must resume the session.

    .venv/bin/python benchmarks/kill_sessions.py --kills 30 --seed 13    # JSON on stdout
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "cli"))

from chat_kill import kill_rounds  # noqa: E402

from kgteam.tools.loading import build_kg  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        (home / "kb.txt").write_text("a|linked_to|b\n", encoding="utf-8")
        build_kg([home / "kb.txt"], "mini", home=home, format="metaqa", progress=False)
        started = time.perf_counter()
        report = kill_rounds(work, kills=args.kills, seed=args.seed, env={**os.environ, "KGTEAM_HOME": str(home)})
        seconds = time.perf_counter() - started
    print(json.dumps({
        "kills": report.kills, "messages_lost": report.messages_lost, "corruptions": report.corruptions,
        "resumed": report.resumed, "seed": args.seed,
        "steps_shown_before_kill": {"min": min(report.steps_at_kill), "median": statistics.median(report.steps_at_kill),
                                    "max": max(report.steps_at_kill)},
        "total_s": round(seconds, 1), "failures": report.failures,
    }, indent=2))


if __name__ == "__main__":
    main()
