"""KG scale benchmark: load throughput, size, peak memory and per-tool latency; embedded vs Virtuoso.

Datasets: FB15k-237 with names (``../shared/data/fb15k237``) and a seeded synthetic graph
(power-law degrees, ~1 labelled entity per 5 triples). Each phase runs in its own process so
its peak RSS (``getrusage``: Rust/RocksDB/tantivy memory included, which tracemalloc cannot
see) is measured alone.

    python benchmarks/kg_scale.py --dataset fb15k237
    python benchmarks/kg_scale.py --dataset synthetic --triples 5000000
    python benchmarks/kg_scale.py --dataset both --triples 200000 --skip-virtuoso

Prints one JSON document (also written with ``--out``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "tools"))  # the test server launchers (servers.py)

FB15K = ROOT.parent / "shared" / "data" / "fb15k237"
TOOLS = ("search_entities", "search_relations", "entity_schema", "neighbors", "run_sparql")


# ----------------------------------------------------------------------------- synthetic data

_ONSETS = ["b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "j", "k", "l", "m", "n", "p", "pr", "r", "s",
           "sh", "st", "t", "th", "tr", "v", "w", "z", ""]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "y"]
_CODAS = ["", "n", "r", "s", "l", "m", "nd", "rt", "sk", "x", "th"]


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables)).title()


def generate_synthetic(out: Path, triples: int, seed: int = 13) -> dict:
    """Write train.tsv / entity2text.txt / relation2text.txt like FB15k-237's, with power-law degrees."""
    import numpy as np

    out.mkdir(parents=True, exist_ok=True)
    n_ent = max(1000, int(triples * 0.24))  # ~1.2M ids for 5M triples; ~1M of them end up in triples
    n_rel = 400
    rng = np.random.default_rng(seed)
    prng = random.Random(seed)
    given = sorted({_word(prng, prng.choice((1, 2))) for _ in range(4000)})
    family = sorted({_word(prng, prng.choice((2, 3))) for _ in range(40000)})
    kinds = ["Film", "Person", "City", "Album", "Company", "Team", "Book", "Award"]
    with open(out / "entity2text.txt", "w", encoding="utf-8") as f:
        gi = rng.integers(0, len(given), n_ent)
        fi = rng.integers(0, len(family), n_ent)
        for i in range(n_ent):
            f.write(f"/s/{i:07d}\t{given[gi[i]]} {family[fi[i]]}\n")
    with open(out / "relation2text.txt", "w", encoding="utf-8") as f:
        for r in range(n_rel):
            f.write(f"/rel/{kinds[r % len(kinds)].lower()}/p{r:03d}\t{kinds[r % len(kinds)].lower()} "
                    f"{_word(prng, 2).lower()} {_word(prng, 1).lower()}\n")
    rel_ids = [f"/rel/{kinds[r % len(kinds)].lower()}/p{r:03d}" for r in range(n_rel)]
    # Zipf-like popularity over a random permutation of entity ids (hubs are not id 0).
    perm = rng.permutation(n_ent)
    w = 1.0 / np.arange(1, n_ent + 1) ** 0.85
    w /= w.sum()
    rw = 1.0 / np.arange(1, n_rel + 1) ** 1.1
    rw /= rw.sum()
    chunk = 1_000_000
    written = 0
    with open(out / "train.tsv", "w", encoding="utf-8") as f:
        while written < triples:
            n = min(chunk, triples - written)
            subj = perm[rng.choice(n_ent, n, p=w)]
            uniform = rng.integers(0, n_ent, n)
            popular = perm[rng.choice(n_ent, n, p=w)]
            obj = np.where(rng.random(n) < 0.5, uniform, popular)
            rel = rng.choice(n_rel, n, p=rw)
            f.writelines(f"/s/{s:07d}\t{rel_ids[r]}\t/s/{o:07d}\n" for s, r, o in zip(subj, rel, obj, strict=True))
            written += n
    return {"entities_generated": n_ent, "relations": n_rel, "triples_written": triples, "seed": seed}


# ----------------------------------------------------------------------------- phases


def _rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return round(resource.getrusage(who).ru_maxrss / 1024, 1)


def _dir_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20, 1)


def phase_load(args: argparse.Namespace) -> dict:
    from kgteam.tools.loading import build_kg

    src = Path(args.data)
    t0 = time.perf_counter()
    manifest = build_kg(
        [src / "train.tsv"], args.name, home=Path(args.home), format="tsv", progress=False,
        entity_labels=src / "entity2text.txt", relation_labels=src / "relation2text.txt",
    )
    dt = time.perf_counter() - t0
    m = manifest.model_dump(mode="json")
    home = Path(args.home) / "kgs" / args.name
    counts = m.get("counts", {})
    stored = counts.get("triples") or counts.get("quads") or 0
    with open(src / "train.tsv", encoding="utf-8") as f:
        input_triples = sum(1 for _ in f)
    return {
        "load_s": round(dt, 2),
        "input_triples": input_triples,
        "input_triples_per_s": round(input_triples / dt),
        "stored_triples_incl_labels": stored,
        "stored_triples_per_s": round(stored / dt) if stored else None,
        "counts": counts,
        "disk_mb": {"total": _dir_mb(home), "store": _dir_mb(home / "store"), "labels": _dir_mb(home / "labels")},
        "peak_rss_mb": _rss_mb(),
    }


def _pcts(samples: list[float]) -> dict:
    s = sorted(samples)
    q = statistics.quantiles(s, n=100, method="inclusive") if len(s) > 1 else [s[0]] * 99
    return {"n": len(s), "p50_ms": round(q[49] * 1000, 3), "p95_ms": round(q[94] * 1000, 3),
            "mean_ms": round(statistics.fmean(s) * 1000, 3), "max_ms": round(s[-1] * 1000, 3)}


async def _workload(tools, work: dict, warmup: int) -> dict:
    from kgteam.tools.sparql_guard import sparql_iri

    def sparql_for(iri: str) -> str:
        return (f"SELECT ?p ?o ?l WHERE {{ {sparql_iri(iri)} ?p ?o . "
                f"OPTIONAL {{ ?o <http://www.w3.org/2000/01/rdf-schema#label> ?l }} }} LIMIT 100")

    calls = {
        "search_entities": [lambda t=t: tools.search_entities(t, 10) for t in work["entity_texts"]],
        "search_relations": [lambda t=t: tools.search_relations(t, 10) for t in work["relation_texts"]],
        "entity_schema": [lambda i=i: tools.entity_schema(i) for i in work["entities"]],
        "neighbors": [lambda i=i: tools.neighbors(i, direction="both", hops=1, limit=200) for i in work["entities"]],
        "run_sparql": [lambda i=i: tools.run_sparql(sparql_for(i)) for i in work["entities"]],
        "entity_schema_degree_biased": [lambda i=i: tools.entity_schema(i) for i in work["hub_entities"]],
        "neighbors_degree_biased": [lambda i=i: tools.neighbors(i, direction="both", hops=1, limit=200)
                                    for i in work["hub_entities"]],
    }
    out = {}
    for name, fns in calls.items():
        for fn in fns[:warmup]:
            await fn()
        times = []
        sizes = []
        for fn in fns:
            t0 = time.perf_counter()
            res = await fn()
            times.append(time.perf_counter() - t0)
            sizes.append(len(res.rows) if hasattr(res, "rows") else len(res.outgoing) + len(res.incoming)
                         if hasattr(res, "outgoing") else len(res))
        out[name] = {**_pcts(times), "mean_results": round(statistics.fmean(sizes), 1)}
    hits = 0
    for text, iri in zip(work["entity_texts"], work["entities"], strict=True):
        res = await tools.search_entities(text, 10)
        hits += any(h.iri == iri for h in res)
    out["search_entities"]["recall_at_10_on_exact_names"] = round(hits / len(work["entities"]), 3)
    return out


def phase_query(args: argparse.Namespace) -> dict:
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    work = json.loads(Path(args.work).read_text())
    kg = open_kg(args.name, home=Path(args.home))
    tools = KGTools.from_kg(kg)
    res = asyncio.run(_workload(tools, work, args.warmup))
    res["label_docs"] = getattr(kg.labels, "counts", None)
    res["peak_rss_mb"] = _rss_mb()
    return res


def phase_virtuoso(args: argparse.Namespace) -> dict:
    import pyoxigraph
    from servers import start_virtuoso

    from kgteam.tools.backends.tantivy_index import TantivyLabelIndex
    from kgteam.tools.kg_tools import KGTools

    work = json.loads(Path(args.work).read_text())
    kgdir = Path(args.home) / "kgs" / args.name
    dump_dir = Path(tempfile.mkdtemp(prefix="kgscale-dump-", dir=args.home))
    nt = dump_dir / "kg.nt"
    t0 = time.perf_counter()
    store = pyoxigraph.Store.read_only(str(kgdir / "store"))
    store.dump(str(nt), format=pyoxigraph.RdfFormat.N_TRIPLES, from_graph=pyoxigraph.DefaultGraph())
    del store
    dump_s = time.perf_counter() - t0
    server = start_virtuoso(dump_dir, buffers=args.virtuoso_buffers, timeout_s=120)
    try:
        t0 = time.perf_counter()
        server.bulk_load([nt])
        load_s = time.perf_counter() - t0
        n = int(server.isql(f"SPARQL SELECT COUNT(*) FROM <{server.default_graph}> WHERE {{ ?s ?p ?o }};")
                .split()[-1]) if args.count_virtuoso else None
        tools = KGTools(server.endpoint_store(timeout_s=60), TantivyLabelIndex(kgdir / "labels"))
        lat = asyncio.run(_workload(tools, work, args.warmup))
        db_mb = _dir_mb(server.workdir)
    finally:
        server.stop()
        shutil.rmtree(dump_dir, ignore_errors=True)
    return {"dump_s": round(dump_s, 2), "virtuoso_load_s": round(load_s, 2), "virtuoso_triples": n,
            "virtuoso_disk_mb": db_mb, "latency": lat}


def _child(phase: str, args: argparse.Namespace, extra: list[str]) -> dict:
    cmd = [sys.executable, __file__, "--phase", phase, "--name", args.name, "--home", args.home,
           "--warmup", str(args.warmup), "--virtuoso-buffers", str(args.virtuoso_buffers),
           *(["--count-virtuoso"] if args.count_virtuoso else []), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"phase {phase} failed:\n{r.stderr[-4000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _make_work(data: Path, base: str, n: int, seed: int) -> dict:
    """Seeded workload: uniformly sampled entities (and their exact names), degree-biased ones, relations."""
    from kgteam.tools.iri import mint_entity_iri
    from kgteam.tools.loading import open_source, read_label_map

    rng = random.Random(seed)
    with open_source(data / "entity2text.txt") as src:
        names = read_label_map(src)
    with open_source(data / "relation2text.txt") as src:
        rel_names = read_label_map(src)
    present: set[str] = set()
    hubs: list[str] = []  # reservoir sample of triple subjects: entities weighted by out-degree
    with open(data / "train.tsv", encoding="utf-8") as f:
        for i, line in enumerate(f):
            parts = line.rstrip("\n").split("\t")
            present.add(parts[0])
            present.add(parts[-1])
            if len(hubs) < n:
                hubs.append(parts[0])
            else:
                j = rng.randrange(i + 1)
                if j < n:
                    hubs[j] = parts[0]
    present_named = sorted(present & set(names))
    uniform = rng.sample(present_named, n)
    return {
        "entities": [mint_entity_iri(base, e) for e in uniform],
        "entity_texts": [names[e] for e in uniform],
        "hub_entities": [mint_entity_iri(base, e) for e in hubs],
        "relation_texts": [rng.choice(sorted(rel_names.values())) for _ in range(n)],
        "labelled_entities_in_triples": len(present_named),
    }


def run_dataset(label: str, data: Path, args: argparse.Namespace, info: dict, report: dict) -> dict:
    from kgteam.tools.iri import default_base_iri

    args.name = label
    result: dict = {"dataset": label, **info}
    report["results"].append(result)
    result["load"] = _child("load", args, ["--data", str(data)])
    _save(report, args)
    work = _make_work(data, default_base_iri(label), args.queries, args.seed)
    wfile = Path(args.home) / f"{label}-work.json"
    wfile.write_text(json.dumps(work))
    result["labelled_entities_in_triples"] = work["labelled_entities_in_triples"]
    emb = result["embedded"] = _child("query", args, ["--work", str(wfile)])
    _save(report, args)
    if not args.skip_virtuoso:
        from servers import virtuoso_available

        if virtuoso_available():
            v = _child("virtuoso", args, ["--work", str(wfile)])
            result["virtuoso"] = v
            result["embedded_over_virtuoso_p50"] = {
                k: round(emb[k]["p50_ms"] / v["latency"][k]["p50_ms"], 3) for k in emb if k in v["latency"]
                and isinstance(emb[k], dict) and "p50_ms" in emb[k]
            }
        else:
            result["virtuoso"] = "skipped: virtuoso-t not installed"
    _save(report, args)
    return result


def _save(report: dict, args: argparse.Namespace) -> None:
    """Write what is known so far, so a long run that is stopped still leaves its numbers."""
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=["fb15k237", "synthetic", "both"], default="both")
    ap.add_argument("--triples", type=int, default=5_000_000, help="size of the synthetic graph")
    ap.add_argument("--queries", type=int, default=200, help="timed calls per tool")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--skip-virtuoso", action="store_true")
    ap.add_argument("--virtuoso-buffers", type=int, default=100_000, help="8 KiB pages (NumberOfBuffers)")
    ap.add_argument("--count-virtuoso", action="store_true")
    ap.add_argument("--workdir", help="keep KGs here (default: a temp dir, removed)")
    ap.add_argument("--out", help="also write the JSON here")
    ap.add_argument("--phase", choices=["load", "query", "virtuoso"], help=argparse.SUPPRESS)
    ap.add_argument("--name", help=argparse.SUPPRESS)
    ap.add_argument("--home", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.phase:
        fn = {"load": phase_load, "query": phase_query, "virtuoso": phase_virtuoso}[args.phase]
        print(json.dumps(fn(args)))
        return

    home = Path(args.workdir or tempfile.mkdtemp(prefix="kgscale-"))
    home.mkdir(parents=True, exist_ok=True)
    args.home = str(home)
    report: dict = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                                "loadavg_at_start": os.getloadavg()}, "results": []}
    try:
        if args.dataset in ("fb15k237", "both"):
            if (FB15K / "train.tsv").exists():
                run_dataset("fb15k237", FB15K, args, {}, report)
            else:
                report["results"].append({"dataset": "fb15k237", "skipped": f"not found: {FB15K}"})
        if args.dataset in ("synthetic", "both"):
            data = home / f"synthetic-{args.triples}"
            t0 = time.perf_counter()
            info = generate_synthetic(data, args.triples, args.seed)
            info["generate_s"] = round(time.perf_counter() - t0, 1)
            run_dataset(f"synthetic{args.triples}", data, args, info, report)
    finally:
        if not args.workdir:
            shutil.rmtree(home, ignore_errors=True)
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
