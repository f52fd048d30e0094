"""Entity-linking benchmark of the embedded (tantivy) label search. Prints JSON.

Default mode: recall@1 / recall@10 of ``TantivyLabelIndex.search`` on topic-entity mentions of
MetaQA dev (1/2/3-hop), WC2014 (WC-P1, WC-P2, WC-C) and PathQuestion (PQ-2H, PQ-3H), exact and
with one and two random character edits (seeded).

``--scale``: search latency p50/p95 (plus recall) on an index of >= 1M labels: the real
FB15k-237 and MetaQA names plus synthetic labels recombined from their words (see
``synthetic_labels``).

    .venv/bin/python benchmarks/linking.py --sample 500
    .venv/bin/python benchmarks/linking.py --scale --labels 1000000 --queries 1000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kgteam.tools.backends.base import LabelDoc
from kgteam.tools.backends.tantivy_index import TantivyLabelIndex, TantivyLabelIndexWriter
from kgteam.tools.text_normalize import normalize_label

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

_VALUES = re.compile(r"VALUES\s+\?x0\s*\{\s*<([^>]+)>\s*\}")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def entity_iri(base: str, name: str) -> str:
    return base + "e/" + urllib.parse.quote(name, safe="")


@dataclass
class Mention:
    text: str
    gold: str


@dataclass
class LinkSet:
    name: str
    kb: str  # key of the index the set is linked against
    mentions: list[Mention]


# ---------------------------------------------------------------- KB readers


def metaqa_entities(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("|")
            if len(parts) == 3:
                yield parts[0]
                yield parts[2]


def tsv_entities(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3:
                yield parts[0]
                yield parts[2]


def build_index(path: Path, base: str, names: Iterable[str]) -> int:
    writer = TantivyLabelIndexWriter(path, overwrite=True)
    n = 0
    for name in dict.fromkeys(names):
        if not name.strip():
            continue
        writer.add(LabelDoc(iri=entity_iri(base, name), kind="entity", labels=[name.replace("_", " ")]))
        n += 1
    writer.commit()
    return n


# ---------------------------------------------------------------- question readers


def metaqa_sets() -> list[LinkSet]:
    out = []
    for hop in ("1-hop", "2-hop", "3-hop"):
        path = DATA / "metaqa" / hop / "dev_consistent.jsonl"
        if not path.exists():
            continue
        mentions = []
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                match = _VALUES.search(row["sparql"])
                if match:
                    mentions.append(Mention(row["topic_entity"], match.group(1)))
        out.append(LinkSet(f"metaqa-{hop}", "metaqa", mentions))
    return out


def path_subject_sets(folder: str, files: dict[str, str], base: str) -> list[LinkSet]:
    """WC2014 / PathQuestion: the mention is the subject of the gold path (3rd column)."""
    out = []
    for fname, kb in files.items():
        path = DATA / folder / fname
        if not path.exists():
            continue
        mentions = []
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                cols = line.rstrip("\n").split("\t")
                if len(cols) < 3 or "#" not in cols[2]:
                    continue
                subject = cols[2].split("#", 1)[0]
                mentions.append(Mention(subject.replace("_", " "), entity_iri(base, subject)))
        out.append(LinkSet(fname.removesuffix(".txt"), kb, mentions))
    return out


# ---------------------------------------------------------------- typos


def random_edit(text: str, rng: random.Random) -> str:
    """One random character edit (substitute, insert, delete, transpose) at a letter/digit."""
    positions = [i for i, ch in enumerate(text) if ch.isalnum()]
    if not positions:
        return text
    op = rng.choice(("sub", "ins", "del", "swap"))
    i = rng.choice(positions)
    if op == "sub":
        choices = [c for c in _ALPHABET if c != text[i].lower()]
        return text[:i] + rng.choice(choices) + text[i + 1 :]
    if op == "ins":
        return text[:i] + rng.choice(_ALPHABET) + text[i:]
    if op == "del" and len(positions) > 1:
        return text[:i] + text[i + 1 :]
    if i + 1 < len(text) and text[i + 1].isalnum() and text[i + 1].lower() != text[i].lower():
        return text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    choices = [c for c in _ALPHABET if c != text[i].lower()]
    return text[:i] + rng.choice(choices) + text[i + 1 :]


def with_edits(text: str, n: int, rng: random.Random) -> str:
    out = text
    for _ in range(n):
        out = random_edit(out, rng)
    return out


# ---------------------------------------------------------------- measuring


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[idx]


def evaluate(index: TantivyLabelIndex, mentions: list[Mention], edits: int, seed: int) -> dict:
    rng = random.Random(seed)
    hit1 = hit10 = 0
    latencies = []
    cpu = []  # this thread's CPU time: less inflated than wall time on a shared, busy machine
    for m in mentions:
        query = with_edits(m.text, edits, rng)
        t0, c0 = time.perf_counter(), time.thread_time()
        hits = index.search(query, 10)
        cpu.append((time.thread_time() - c0) * 1000)
        latencies.append((time.perf_counter() - t0) * 1000)
        iris = [h.iri for h in hits]
        hit1 += bool(iris) and iris[0] == m.gold
        hit10 += m.gold in iris
    n = len(mentions)
    return {
        "n": n,
        "recall@1": round(hit1 / n, 4) if n else None,
        "recall@10": round(hit10 / n, 4) if n else None,
        "latency_ms_p50": round(percentile(latencies, 0.5), 3),
        "latency_ms_p95": round(percentile(latencies, 0.95), 3),
        "cpu_ms_p50": round(percentile(cpu, 0.5), 3),
        "cpu_ms_p95": round(percentile(cpu, 0.95), 3),
    }


def run_linking(args: argparse.Namespace) -> dict:
    kbs = {
        "metaqa": ("http://example.org/metaqa/", lambda: metaqa_entities(DATA / "metaqa" / "kb.txt")),
        "wc2014": ("http://example.org/wc2014/", lambda: tsv_entities(DATA / "wc2014" / "WC2014.txt")),
        "pq-2h": (
            "http://example.org/pathquestion/",
            lambda: tsv_entities(DATA / "pathquestion" / "2H-kb.txt"),
        ),
        "pq-3h": (
            "http://example.org/pathquestion/",
            lambda: tsv_entities(DATA / "pathquestion" / "3H-kb.txt"),
        ),
    }
    sets = metaqa_sets()
    sets += path_subject_sets(
        "wc2014", {"WC-P1.txt": "wc2014", "WC-P2.txt": "wc2014", "WC-C.txt": "wc2014"}, kbs["wc2014"][0]
    )
    sets += path_subject_sets("pathquestion", {"PQ-2H.txt": "pq-2h", "PQ-3H.txt": "pq-3h"}, kbs["pq-2h"][0])
    if not sets:
        return {"error": f"no datasets under {DATA}"}
    tmp = Path(tempfile.mkdtemp(prefix="kgteam-linking-"))
    indexes: dict[str, TantivyLabelIndex] = {}
    build: dict[str, dict] = {}
    results: dict[str, dict] = {}
    try:
        for key in sorted({s.kb for s in sets}):
            base, names = kbs[key]
            t0 = time.perf_counter()
            n = build_index(tmp / key, base, names())
            build[key] = {"entities": n, "build_s": round(time.perf_counter() - t0, 2)}
            indexes[key] = TantivyLabelIndex(tmp / key, candidates=args.candidates)
        for s in sets:
            mentions = s.mentions
            if args.sample and len(mentions) > args.sample:
                mentions = random.Random(args.seed).sample(mentions, args.sample)
            results[s.name] = {
                f"edits={e}": evaluate(indexes[s.kb], mentions, e, args.seed + e) for e in (0, 1, 2)
            }
    finally:
        for ix in indexes.values():
            ix.close()
        shutil.rmtree(tmp, ignore_errors=True)
    summary = {}
    for e in (0, 1, 2):
        key = f"edits={e}"
        total = sum(r[key]["n"] for r in results.values())
        summary[key] = {
            metric: round(sum(r[key][metric] * r[key]["n"] for r in results.values()) / total, 4)
            for metric in ("recall@1", "recall@10")
        } | {"n": total}
    return {
        "benchmark": "linking",
        "seed": args.seed,
        "sample": args.sample,
        "candidates": args.candidates,
        "indexes": build,
        "sets": results,
        "micro_average": summary,
        "targets": {"recall@10 exact": 0.99, "recall@10 one edit": 0.95},
    }


# ---------------------------------------------------------------- scale mode


def real_names() -> list[str]:
    """FB15k-237 and MetaQA entity names, one per normalised form (first seen wins)."""
    names: list[str] = []
    fb = DATA / "fb15k237" / "entity2text.txt"
    if fb.exists():
        with fb.open(encoding="utf-8") as fh:
            names.extend(line.rstrip("\n").split("\t", 1)[1] for line in fh if "\t" in line)
    kb = DATA / "metaqa" / "kb.txt"
    if kb.exists():
        names.extend(metaqa_entities(kb))
    seen: set[str] = set()
    out = []
    for name in names:
        norm = normalize_label(name)
        if norm and norm not in seen:
            seen.add(norm)
            out.append(name)
    return out


_QUALIFIERS = (
    "film", "album", "song", "band", "novel", "TV series", "river", "county", "footballer",
    "politician", "actor", "actress", "musician", "company", "village", "district", "painter",
    "video game", "ship", "magazine", "school", "university", "play", "opera", "EP",
)  # fmt: skip


def synthetic_labels(real: list[str], total: int, seed: int) -> Iterator[str]:
    """Real names, then synthetic ones until ``total`` distinct labels.

    Synthetic labels recombine the words of real names the way KB labels vary: person-like
    "first last" pairs (first words x last words of multi-word names), titles of 2-4 words drawn
    from the real word distribution, and real names with Wikipedia-style qualifiers
    ("X (1998 film)", "X (river)").
    """
    rng = random.Random(seed)
    seen: set[str] = set()  # normalised: two labels equal after normalisation would be a coin toss
    for name in real:
        norm = normalize_label(name)
        if norm and norm not in seen:
            seen.add(norm)
            yield name
    multi = [n.split() for n in real if len(n.split()) >= 2]
    firsts = [w[0] for w in multi]
    lasts = [w[-1] for w in multi]
    vocab = [w for n in real for w in n.split()]
    while len(seen) < total:
        r = rng.random()
        if r < 0.45:
            label = f"{rng.choice(firsts)} {rng.choice(lasts)}"
            if rng.random() < 0.15:
                label = f"{rng.choice(firsts)} {label}"
        elif r < 0.8:
            label = " ".join(rng.choice(vocab) for _ in range(rng.randint(2, 4)))
        else:
            qualifier = rng.choice(_QUALIFIERS)
            if rng.random() < 0.5:
                qualifier = f"{rng.randint(1900, 2024)} {qualifier}"
            label = f"{rng.choice(real)} ({qualifier})"
        norm = normalize_label(label)
        if norm and norm not in seen:
            seen.add(norm)
            yield label


def run_scale(args: argparse.Namespace) -> dict:
    real = real_names()
    if not real:
        return {"error": f"no FB15k-237/MetaQA names under {DATA}"}
    index_dir = Path(args.index_dir) if args.index_dir else Path(tempfile.mkdtemp(prefix="kgteam-scale-"))
    base = "http://example.org/scale/"
    build = {}
    reuse = args.index_dir and (index_dir / "labels.json").exists() and args.reuse
    if not reuse:
        t0 = time.perf_counter()
        n = build_index(index_dir, base, synthetic_labels(real, args.labels, args.seed))
        elapsed = time.perf_counter() - t0
        build = {"labels": n, "build_s": round(elapsed, 1), "labels_per_s": round(n / elapsed)}
    size = sum(p.stat().st_size for p in index_dir.rglob("*") if p.is_file())
    index = TantivyLabelIndex(index_dir, candidates=args.candidates)
    rng = random.Random(args.seed)
    queries = rng.sample(real, min(args.queries, len(real)))
    out: dict = {
        "benchmark": "linking-scale",
        "labels_in_index": len(index),
        "real_names": len(real),
        "index_bytes": size,
        "candidates": args.candidates,
        "build": build or "reused",
        "queries_per_condition": len(queries),
    }
    try:
        for name in queries[:20]:  # warm the OS page cache and tantivy's caches
            index.search(name, 10)
        all_lat: list[float] = []
        all_cpu: list[float] = []
        for e in (0, 1, 2):
            res = evaluate(index, [Mention(q, entity_iri(base, q)) for q in queries], e, args.seed + e)
            out[f"edits={e}"] = res
        erng = random.Random(args.seed + 99)
        for q in queries:
            text = with_edits(q, erng.choice((0, 1, 2)), erng)
            t0, c0 = time.perf_counter(), time.thread_time()
            index.search(text, 10)
            all_cpu.append((time.thread_time() - c0) * 1000)
            all_lat.append((time.perf_counter() - t0) * 1000)
        out["mixed_latency_ms"] = {
            "p50": round(percentile(all_lat, 0.5), 3),
            "p95": round(percentile(all_lat, 0.95), 3),
            "mean": round(statistics.fmean(all_lat), 3),
            "cpu_p50": round(percentile(all_cpu, 0.5), 3),
            "cpu_p95": round(percentile(all_cpu, 0.95), 3),
        }
        out["load_average_1m_at_end"] = round(os.getloadavg()[0], 2)
        out["cpu_count"] = os.cpu_count()
        out["target"] = {"search p95 ms": 30}
    finally:
        index.close()
        if not args.index_dir:
            shutil.rmtree(index_dir, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=0, help="cap questions per set (seeded sample); 0 = all")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--candidates", type=int, default=100, help="BM25 candidates handed to the reranker")
    ap.add_argument("--scale", action="store_true", help="latency on a >=1M-label index instead")
    ap.add_argument("--labels", type=int, default=1_000_000, help="scale mode: labels in the index")
    ap.add_argument("--queries", type=int, default=1000, help="scale mode: queries per condition")
    ap.add_argument("--index-dir", default="", help="scale mode: where to build (kept); default a temp dir")
    ap.add_argument("--reuse", action="store_true", help="scale mode: reuse an index already in --index-dir")
    args = ap.parse_args(argv)
    result = run_scale(args) if args.scale else run_linking(args)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
