"""``labels_for`` latency on the MetaQA demo KG: the naming query (every naming predicate in one
``VALUES ?p``, kgteam.tools.naming) against the ``rdfs:label``-only query it replaced. Prints JSON.

Batches of ``--batch`` random entity IRIs (seeded), each looked up ``--rounds`` times; wall-clock
p50 / p95 per call, on the embedded Oxigraph store.

    .venv/bin/python benchmarks/labels_for.py --batch 50 --rounds 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from kgteam.tools.iri import RDFS_LABEL
from kgteam.tools.kg import install_demo_kg, open_kg
from kgteam.tools.kg_tools import KGTools, _values_chunks


def _pct(xs: list[float], q: float) -> float:
    return round(statistics.quantiles(xs, n=100)[int(q) - 1] * 1000, 3) if len(xs) > 1 else round(xs[0] * 1000, 3)


async def _run(tools: KGTools, batches: list[list[str]]) -> dict[str, dict[str, float]]:
    async def rdfs_only(iris: list[str]) -> None:  # the query labels_for ran before issue 28
        for chunk in _values_chunks(sorted(iris)):
            await tools._select(f"SELECT ?s ?l WHERE {{ VALUES ?s {{ {chunk} }} ?s <{RDFS_LABEL}> ?l }}")

    out = {}
    for name, call in (("rdfs_label_only", rdfs_only), ("naming", tools.labels_for)):
        await call(batches[0])  # warm
        times = []
        for batch in batches:
            t = time.perf_counter()
            await call(batch)
            times.append(time.perf_counter() - t)
        out[name] = {"p50_ms": _pct(times, 50), "p95_ms": _pct(times, 95), "calls": len(times)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="kgteam-labels-for-"))
    install_demo_kg(home, embed=False)
    with open_kg("metaqa", home) as kg:
        tools = KGTools.from_kg(kg, embedder=None)
        res = kg.store.query(f"SELECT ?s WHERE {{ ?s <{RDFS_LABEL}> ?l }} LIMIT 50000", timeout_s=60, max_rows=50000)
        iris = [r["s"].value for r in res.rows]
        rng = random.Random(args.seed)
        batches = [rng.sample(iris, args.batch) for _ in range(args.rounds)]
        timings = asyncio.run(_run(tools, batches))
    print(json.dumps({"kg": "metaqa (demo)", "iris": len(iris), "batch": args.batch, "rounds": args.rounds,
                      **timings}, indent=1))


if __name__ == "__main__":
    main()
