"""How long the read-only guard's check takes (``analyse_query``, parsed every time: no verdict kept
per shape) on the hostile corpus's benign queries, for this checkout or another one, so two
versions of the guard can be timed on the same machine in the same minutes.

    python benchmarks/guard_latency.py [--root DIR] [--first 84] [--passes 3]

``--root`` is a folder holding the ``kgteam`` package to time (e.g. ``git archive <commit> kgteam |
tar -x -C DIR``); the corpus is always this checkout's. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "hostile_sparql" / "corpus.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="folder with the kgteam package to time")
    ap.add_argument("--first", type=int, default=None, help="only the first N benign queries")
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    from kgteam.tools import sparql_guard
    from kgteam.tools.types import ToolError

    with CORPUS.open(encoding="utf-8") as f:
        entries = [json.loads(line) for line in f if line.strip()]
    queries = [e["query"].replace("{URL}", "http://127.0.0.1:9/sparql") for e in entries if e["kind"] == "benign"]
    queries = queries[: args.first]
    times = []
    for _ in range(args.passes):
        for query in queries:
            sparql_guard._shapes.clear()
            t0 = time.perf_counter()
            with contextlib.suppress(ToolError):
                sparql_guard.analyse_query(query, 1001)
            times.append(time.perf_counter() - t0)
    times.sort()
    print(json.dumps({"kgteam": str(Path(sparql_guard.__file__).parents[2]), "queries": len(queries),
                      "passes": args.passes, "median_ms": round(statistics.median(times) * 1000, 2),
                      "p95_ms": round(times[int(0.95 * (len(times) - 1))] * 1000, 2),
                      "max_ms": round(times[-1] * 1000, 2)}))


if __name__ == "__main__":
    main()
