"""Retrieval ceiling without any LLM on MetaQA dev (1/2/3-hop), WC2014 and PathQuestion; prints JSON.

For each dataset: entity-linking rank of the gold topic entity, answer recall of the unfiltered
h-hop neighbourhood and its size, the same after the KERAG-style similarity filter (relation-path
beam, triple budget), and whether the gold SPARQL/path executes to the gold answers.

KGs are built into a temporary KGTEAM home from ``shared/data`` (WC2014 and PathQuestion are
internal-only: never copied into the repository). Example:

    python benchmarks/retrieval_ceiling.py --n 200 --seed 0 > ceiling.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from kgteam.eval.datasets import PATHQUESTION_BASE, WC2014_BASE, default_data_dir, load_dataset, sample
from kgteam.eval.diagnostics import DiagnosticsConfig, diagnose, summarize_diagnostics

# dataset spec -> (KG name, KB file relative to the data folder, base IRI or None for MetaQA's own)
SUITES = {
    "metaqa-consistent:1-hop": ("metaqa", "metaqa/kb.txt", None),
    "metaqa-consistent:2-hop": ("metaqa", "metaqa/kb.txt", None),
    "metaqa-consistent:3-hop": ("metaqa", "metaqa/kb.txt", None),
    "wc2014:P1": ("wc2014", "wc2014/WC2014.txt", WC2014_BASE),
    "wc2014:P2": ("wc2014", "wc2014/WC2014.txt", WC2014_BASE),
    "wc2014:C": ("wc2014", "wc2014/WC2014.txt", WC2014_BASE),
    "pq:2H": ("pq2h", "pathquestion/2H-kb.txt", PATHQUESTION_BASE),
    "pq:3H": ("pq3h", "pathquestion/3H-kb.txt", PATHQUESTION_BASE),
}


def ensure_kg(name: str, kb: Path, base: str | None, home: Path) -> None:
    from kgteam.tools.loading import build_kg

    if (home / "kgs" / name / "manifest.json").exists():
        return
    fmt = "metaqa" if name == "metaqa" else "tsv"
    build_kg([kb], name, home=home, format=fmt, base_iri=base, progress=False)


async def run_suite(spec: str, n: int, seed: int, cfg: DiagnosticsConfig, home: Path, data: Path) -> dict:
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    name, kb, base = SUITES[spec]
    ensure_kg(name, data / kb, base, home)
    kg = open_kg(name, home=home)
    tools = KGTools(kg.store, kg.labels, max_rows=cfg.max_triples + 1, default_timeout_s=cfg.timeout_s)
    try:
        items = sample(load_dataset(spec, data), n, seed)
        start = time.perf_counter()
        results = await diagnose(tools, items, cfg, concurrency=2)
        summary = summarize_diagnostics(results, budget=cfg.triple_budget)
        summary["seconds"] = round(time.perf_counter() - start, 1)
        return summary
    finally:
        tools.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="questions per dataset (seeded sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--datasets", nargs="*", default=list(SUITES), choices=list(SUITES))
    parser.add_argument("--top-n", type=int, default=10, help="relation paths kept per topic and hop")
    parser.add_argument("--budget", type=int, default=300, help="triple budget of the filtered neighbourhood")
    parser.add_argument("--max-hops", type=int, default=3)
    parser.add_argument("--max-triples", type=int, default=5000, help="cap of the unfiltered neighbourhood")
    parser.add_argument("--no-unfiltered", action="store_true", help="skip the (costly) unfiltered neighbourhood")
    parser.add_argument("--home", type=Path, default=None, help="KGTEAM home to build/reuse KGs in (default: temp)")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    data = args.data_dir or default_data_dir()
    cfg = DiagnosticsConfig(max_hops=args.max_hops, top_n=args.top_n, triple_budget=args.budget,
                            max_triples=args.max_triples, unfiltered=not args.no_unfiltered)
    out: dict = {"config": {"n": args.n, "seed": args.seed, "top_n": args.top_n, "budget": args.budget,
                            "max_hops": args.max_hops, "max_triples": args.max_triples,
                            "filter": "the KERAG playbook's planner/schema filter/retriever (semantic layer scorer)"}, "results": {}}
    with tempfile.TemporaryDirectory(prefix="kgteam-ceiling-") as tmp:
        home = args.home or Path(tmp)
        for spec in args.datasets:
            name, kb, _ = SUITES[spec]
            if not (data / kb).exists():
                out["results"][spec] = {"skipped": f"{kb} not available"}
                continue
            out["results"][spec] = asyncio.run(run_suite(spec, args.n, args.seed, cfg, home, data))
            print(f"{spec}: done", file=sys.stderr, flush=True)
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
