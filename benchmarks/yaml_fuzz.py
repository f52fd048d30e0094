"""Team-file loader under fuzzing: seeded mutations of the example team files and hostile snippets.

Every case is written to a file and loaded as ``kgteam validate`` loads it. A case is *accepted*
(a valid team), *refused* (``TeamConfigError``, each issue with file:line) or a failure: *crash*
(any other exception escaped), *internal* (the loader's fail-closed "internal error"), *no_line*
(an issue without a line that is not about the whole file). Times are per load.

    .venv/bin/python benchmarks/yaml_fuzz.py --cases 5000 --seed 13    # JSON on stdout
"""

from __future__ import annotations

import argparse
import collections
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "config"))

from yaml_mutations import cases, judge  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--show", type=int, default=5, help="failures to list")
    args = parser.parse_args()
    counts: collections.Counter[str] = collections.Counter()
    walls, cpus, failures = [], [], []
    slowest = (0.0, "")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, data) in enumerate(cases(args.seed, args.cases)):
            path = Path(tmp) / f"case{i}.yaml"
            path.write_bytes(data)
            outcome = judge(path)
            path.unlink()
            counts[outcome.status] += 1
            walls.append(outcome.wall_s)
            cpus.append(outcome.cpu_s)
            slowest = max(slowest, (outcome.wall_s, f"case {i}: {name} ({len(data):,} bytes)"))
            if outcome.status not in ("accepted", "refused") and len(failures) < args.show:
                failures.append({"case": i, "mutation": name, "status": outcome.status, "detail": outcome.detail})
    walls.sort()
    print(json.dumps({
        "cases": args.cases, "seed": args.seed,
        "accepted": counts["accepted"], "refused": counts["refused"],
        "crashes": counts["crash"], "internal_errors": counts["internal"], "issues_without_line": counts["no_line"],
        "max_s": round(walls[-1], 3), "p99_s": round(walls[int(0.99 * (len(walls) - 1))], 4),
        "max_cpu_s": round(max(cpus), 3), "slowest": slowest[1], "over_5s": sum(w > 5 for w in walls),
        "total_s": round(time.perf_counter() - started, 1), "python": platform.python_version(),
        "failures": failures,
    }, indent=2))


if __name__ == "__main__":
    main()
