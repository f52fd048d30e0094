"""The W3C SPARQL 1.1 test suite (``tests/data/w3c_sparql11``) through ``run_sparql`` on a real
Oxigraph KG (the test KG, ``tests/data/tools/kg.ttl``): per test type, as the suite's manifests
classify it, how many ran, stopped at the time limit, were refused by the guard, were refused by
Oxigraph's parser after the guard, or failed otherwise.

    python benchmarks/w3c_sparql.py [--timeout 1] [--out figures.json]

Prints one JSON document: the table, the approved tests whose outcome is not what read-only
SPARQL 1.1 asks (with the reason), every refusal of an approved query test, and the tests only
Oxigraph refused.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "tools"))  # the suite runner shared with the test

from hostile_corpus import build_store  # noqa: E402
from w3c_suite import MUST_RUN, load_suite, run_suite, table, unexpected  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=1.0, help="each query's time limit (seconds)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    tests = load_suite()
    with tempfile.TemporaryDirectory() as tmp:
        store_dir = build_store(Path(tmp))
        t0 = time.perf_counter()
        results = asyncio.run(run_suite(store_dir, tests, timeout_s=args.timeout))
        wall = time.perf_counter() - t0

    def listed(rs: list) -> list[dict[str, str]]:
        return [{"test": r.test.id, "file": r.test.path.name, "outcome": r.outcome, "message": r.message[:240]}
                for r in rs]

    doc = {
        "suite": "tests/data/w3c_sparql11 (W3C SPARQL 1.1, via rdflib's copy)",
        "kg": "tests/data/tools/kg.ttl",
        "timeout_s": args.timeout,
        "tests": len(results),
        "wall_s": round(wall, 1),
        "table": table(results),
        "approved_not_as_expected": listed(unexpected(results)),
        "approved_query_tests_refused": listed([r for r in results if r.test.approved and r.test.kind in MUST_RUN
                                                and r.outcome != "run"]),
        "refused_by_oxigraph_only": listed([r for r in results if r.outcome == "store_refused"]),
        "failed": listed([r for r in results if r.outcome == "failed"]),
    }
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
