"""Load and triple-index build at scale (issue 27): time per step, peak RSS, disk; index candidates.

KGs are synthetic copies of MetaQA: copy 0 is MetaQA's kb.txt itself, copy k (1..K-1) renames
every entity "Name [ck]" and every relation "rel_ck". Each measured phase runs in its own
process, so its peak RSS (getrusage: RocksDB, tantivy and faiss memory included) is its own.

    python benchmarks/vector_build.py --copies 1 8 --vectors none auto   # kgteam load
    python benchmarks/vector_build.py --copies 8 --index                   # then kgteam index
    python benchmarks/vector_build.py --copies 1 --compare                 # index libraries, recall@10

Scratch files go under --work (default /tmp/vec-bench; the KG homes there are removed after
each measurement unless --keep). Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
METAQA_KB = ROOT.parent / "shared" / "data" / "metaqa" / "kb.txt"


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _dir_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6, 1)


def make_copies(kb: Path, copies: int, out: Path) -> Path:
    """``copies`` renamed copies of a MetaQA kb.txt (``s|r|o`` lines) in one file."""
    target = out / f"kb_x{copies}.txt"
    if target.is_file():
        return target
    lines = [line.rstrip("\n").split("|") for line in kb.open(encoding="utf-8") if line.count("|") == 2]
    tmp = target.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for k in range(copies):
            ent = f" [c{k}]" if k else ""
            rel = f"_c{k}" if k else ""
            fh.writelines(f"{s}{ent}|{r}{rel}|{o}{ent}\n" for s, r, o in lines)
    tmp.rename(target)
    return target


class _Steps:
    """Progress events -> seconds from the first to the last event of each step."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.first: dict[str, float] = {}
        self.last: dict[str, float] = {}
        self.events: dict[str, int] = {}

    def __call__(self, event: object) -> None:
        phase, source = getattr(event, "phase", "embed"), getattr(event, "source", None)
        key = f"{phase}:{source}" if phase == "embed" else phase
        now = time.perf_counter() - self.start
        self.first.setdefault(key, now)
        self.last[key] = now
        self.events[key] = self.events.get(key, 0) + 1

    def report(self) -> dict:
        return {k: {"from_s": round(self.first[k], 1), "to_s": round(self.last[k], 1), "events": self.events[k]}
                for k in self.first}


def phase_load(args: argparse.Namespace) -> dict:
    from kgteam.tools.loading import build_kg

    steps = _Steps()
    t0 = time.perf_counter()
    m = build_kg([args.kb], args.name, home=Path(args.home), format="metaqa", progress=steps,
                 embed=args.vectors[0] != "none", vectors=args.vectors[0], memory_mb=args.memory_mb)
    dt = time.perf_counter() - t0
    folder = Path(args.home) / "kgs" / args.name
    return {"load_s": round(dt, 1), "facts": m.counts.facts, "facts_per_s": round(m.counts.facts / dt),
            "peak_rss_mb": _rss_mb(), "disk_mb": _dir_mb(folder),
            "vectors": m.vectors.model_dump() if m.vectors else None, "steps": steps.report()}


def phase_index(args: argparse.Namespace) -> dict:
    from kgteam.tools.vectors.attach import add_vectors

    steps = _Steps()
    t0 = time.perf_counter()
    m = add_vectors(args.name, home=Path(args.home), progress=steps, memory_mb=args.memory_mb)
    dt = time.perf_counter() - t0
    folder = Path(args.home) / "kgs" / args.name
    assert m.vectors is not None
    return {"index_s": round(dt, 1), "triples": m.vectors.triples, "kind": m.vectors.triples_kind,
            "peak_rss_mb": _rss_mb(), "vectors_disk_mb": _dir_mb(folder / "vectors"), "steps": steps.report()}


def _sentences(kb: Path) -> list[str]:
    return [" ".join((s, r.replace("_", " "), o)) for s, r, o in
            (line.rstrip("\n").split("|") for line in kb.open(encoding="utf-8"))]


def phase_compare(args: argparse.Namespace) -> dict:
    """Candidate ANN indexes on the same embedded facts: build s, disk, recall@10 vs exact, query ms."""
    import numpy as np

    from kgteam.tools.embedding.wordllama import WordLlamaEmbedder

    texts = _sentences(Path(args.kb))
    emb = WordLlamaEmbedder()
    x = np.empty((len(texts), emb.dim), np.float32)
    t0 = time.perf_counter()
    for i in range(0, len(texts), 16384):
        x[i : i + 16384] = emb.embed(texts[i : i + 16384])
    embed_s = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    picks = rng.choice(len(texts), args.queries, replace=False)
    q = emb.embed([texts[i].rsplit(" ", 1)[0] for i in picks])  # a fact without its object: a question's shape
    scores = q @ x.T
    kth = -np.partition(-scores, 9, axis=1)[:, 9]

    def recall(ids: np.ndarray) -> float:  # ties count: any row scoring at least the 10th exact score
        return round(float(np.mean([np.mean(scores[j, ids[j][ids[j] >= 0]] >= kth[j] - 1e-4) if (ids[j] >= 0).any()
                                    else 0.0 for j in range(len(ids))])), 3)

    out = {"rows": len(texts), "embed_s": round(embed_s, 1), "candidates": {}}
    scratch = Path(args.home) / "cand"
    scratch.mkdir(parents=True, exist_ok=True)
    for spec in args.candidates:
        lib, *params = spec.split(":")
        t0 = time.perf_counter()
        if lib == "faiss":
            import faiss

            nlist, code, nprobe = int(params[0]), params[1], int(params[2])
            index = faiss.index_factory(emb.dim, f"IVF{nlist},{code}", faiss.METRIC_INNER_PRODUCT)
            index.train(x[:: max(1, len(x) // 65536)][:65536])
            for i in range(0, len(x), 65536):
                index.add(x[i : i + 65536])
            build = time.perf_counter() - t0
            faiss.write_index(index, str(scratch / "i"))
            index.nprobe = nprobe

            def search(v: np.ndarray, index: object = index) -> np.ndarray:
                return index.search(v[None], 10)[1][0]  # type: ignore[attr-defined]
        elif lib == "hnswlib":
            import hnswlib

            m, efc = int(params[0]), int(params[1])
            index = hnswlib.Index(space="ip", dim=emb.dim)
            index.init_index(max_elements=len(x), M=m, ef_construction=efc)
            for i in range(0, len(x), 65536):
                index.add_items(x[i : i + 65536], np.arange(i, min(len(x), i + 65536)), num_threads=2)
            build = time.perf_counter() - t0
            index.save_index(str(scratch / "i"))
            index.set_ef(256)

            def search(v: np.ndarray, index: object = index) -> np.ndarray:
                return index.knn_query(v[None], 10)[0][0]  # type: ignore[attr-defined]
        elif lib == "usearch":
            from usearch.index import Index

            dtype, conn, efc = params[0], int(params[1]), int(params[2])
            index = Index(ndim=emb.dim, metric="ip", dtype=dtype, connectivity=conn, expansion_add=efc,
                          expansion_search=64)
            for i in range(0, len(x), 65536):
                index.add(np.arange(i, min(len(x), i + 65536)), x[i : i + 65536], threads=2)
            build = time.perf_counter() - t0
            index.save(str(scratch / "i"))

            def search(v: np.ndarray, index: object = index) -> np.ndarray:
                return index.search(v, 10).keys  # type: ignore[attr-defined]
        else:
            raise SystemExit(f"unknown candidate {spec!r}")
        t1 = time.perf_counter()
        found = np.stack([np.asarray(search(v), dtype=np.int64) for v in q])
        query_ms = (time.perf_counter() - t1) / len(q) * 1e3
        out["candidates"][spec] = {"build_s": round(build, 1), "disk_mb": round((scratch / "i").stat().st_size / 1e6, 1),
                                   "recall_at_10": recall(found), "query_ms": round(query_ms, 2)}
        del index
    shutil.rmtree(scratch, ignore_errors=True)
    return out


PHASES = {"load": phase_load, "index": phase_index, "compare": phase_compare}


def _child(phase: str, args: argparse.Namespace, kb: Path, name: str, **extra: str) -> dict:
    cmd = [sys.executable, __file__, "--phase", phase, "--kb", str(kb), "--name", name, "--home", args.home,
           "--memory-mb", str(args.memory_mb), "--queries", str(args.queries)]
    for key, value in extra.items():
        cmd += [f"--{key}", value]
    if phase == "compare":
        cmd += ["--candidates", *args.candidates]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"phase {phase} failed:\n{r.stderr[-4000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, nargs="+", default=[1])
    ap.add_argument("--vectors", nargs="+", default=["none", "auto"], help="load modes to measure")
    ap.add_argument("--index", action="store_true", help="after a --vectors none load, time `kgteam index`")
    ap.add_argument("--compare", action="store_true", help="compare ANN candidates instead of loading")
    ap.add_argument("--candidates", nargs="+", default=["faiss:512:SQ8:32", "faiss:1024:SQ8:32", "hnswlib:16:100",
                                                        "usearch:i8:16:64"])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--memory-mb", type=int, default=1024)
    ap.add_argument("--work", default="/tmp/vec-bench")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    ap.add_argument("--kb", help=argparse.SUPPRESS)
    ap.add_argument("--name", help=argparse.SUPPRESS)
    ap.add_argument("--home", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:
        print(json.dumps(PHASES[args.phase](args)))
        return
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    report: dict = {"command": " ".join(sys.argv), "cores": os.cpu_count(), "runs": []}
    for copies in args.copies:
        kb = make_copies(METAQA_KB, copies, work)
        args.home = str(work / f"home_x{copies}")
        if args.compare:
            report["runs"].append({"copies": copies, "compare": _child("compare", args, kb, "cmp")})
            continue
        for mode in args.vectors:
            run = {"copies": copies, "vectors": mode, "load": _child("load", args, kb, f"x{copies}", vectors=mode)}
            if args.index and mode == "none":
                run["index"] = _child("index", args, kb, f"x{copies}")
            report["runs"].append(run)
            print(json.dumps(run), file=sys.stderr, flush=True)
            if not args.keep:
                shutil.rmtree(args.home, ignore_errors=True)
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
