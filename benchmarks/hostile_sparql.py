"""Hostile SPARQL figures: the corpus in ``tests/data/hostile_sparql/corpus.jsonl`` through
``run_sparql`` on a real Oxigraph KG (the test KG), with a loopback listener as the only host.

The query worker is left on the network here (``isolate_network=False``), so the figures measure
the guard alone; its network namespace is a second wall the figures do not lean on. Also times the
guard's check on the benign queries, parsed and with their shape's verdict kept.

    python benchmarks/hostile_sparql.py [--timeout 2] [--out figures.json]

Prints one JSON document: tried, refused, answered, stopped, escaped, crashed, timeouts overrun,
benign false positives, and the guard's latency.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "tools"))  # the corpus runner shared with the test

from hostile_corpus import Listener, build_store, load_corpus, run_corpus  # noqa: E402

from kgteam.tools import sparql_guard  # noqa: E402
from kgteam.tools.backends.oxigraph_store import OxigraphStore  # noqa: E402
from kgteam.tools.sparql_guard import analyse_query  # noqa: E402
from kgteam.tools.types import ToolError  # noqa: E402

SLACK_S = 1.5  # worker restart after a kill + event-loop hand-offs (as in the test)


def guard_latency(entries: list[dict], *, cold: bool) -> dict[str, float]:
    """Milliseconds ``analyse_query`` takes on the benign queries (median, p95, max); ``cold``:
    with no verdict kept for the query's shape (every query parsed), else all shapes seen before."""
    listener = Listener()
    times = []
    try:
        for entry in entries:
            if entry["kind"] != "benign":
                continue
            query = listener.fill(entry["query"])
            if cold:
                sparql_guard._shapes.clear()
            else:
                with contextlib.suppress(ToolError):
                    analyse_query(query, 1001)
            t0 = time.perf_counter()
            with contextlib.suppress(ToolError):
                analyse_query(query, 1001)
            times.append(time.perf_counter() - t0)
    finally:
        listener.close()
    times.sort()
    return {"median_ms": round(statistics.median(times) * 1000, 1),
            "p95_ms": round(times[int(0.95 * (len(times) - 1))] * 1000, 1), "max_ms": round(times[-1] * 1000, 1)}


def isolation_available(store_dir: Path) -> bool | None:
    store = OxigraphStore(store_dir)
    try:
        store.query_untrusted("ASK { }", timeout_s=10, max_rows=1)
        return store.worker_isolated
    finally:
        store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=2.0, help="the KG's per-query timeout (bombs ask for 0.5 s)")
    ap.add_argument("--memory-mb", type=int, default=512, help="the query worker's memory cap")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    entries = load_corpus()
    with tempfile.TemporaryDirectory() as tmp:
        store_dir = build_store(Path(tmp))
        t0 = time.perf_counter()
        run = asyncio.run(run_corpus(store_dir, entries, timeout_s=args.timeout, memory_mb=args.memory_mb))
        wall = time.perf_counter() - t0
        figures = run.figures(SLACK_S)
        figures["worker_network_isolated"] = isolation_available(store_dir)
    by_kind: dict[str, dict[str, int]] = {}
    for o in run.outcomes:
        by_kind.setdefault(o.kind, {}).setdefault(o.result, 0)
        by_kind[o.kind][o.result] += 1
    doc = {"corpus": str(Path("tests/data/hostile_sparql/corpus.jsonl")), **figures, "slack_s": SLACK_S,
           "wall_s": round(wall, 1), "guard_ms_benign_parsed": guard_latency(entries, cold=True),
           "guard_ms_benign_shape_kept": guard_latency(entries, cold=False), "by_kind": by_kind,
           "not_as_expected": [{"id": o.id, "expect": o.expect, "result": o.result, "message": o.message}
                               for o in run.outcomes if o.expect != "bounded" and o.result != o.expect],
           "escapes": [{"id": o.id, "what": o.escaped} for o in run.outcomes if o.escaped]}
    text = json.dumps(doc, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
