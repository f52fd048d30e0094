"""``web_search`` on a local corpus of the shared movie plots: build time, latency, recall@10.

    .venv/bin/python benchmarks/web_search.py                        # 100k chunks, the default question file
    .venv/bin/python benchmarks/web_search.py --questions my.jsonl --chunks 20000 --modes hybrid

Two corpora are built in a temporary kgteam home (nothing is written to the repository; the plots
are internal-use data read from ../shared/data):

- ``movieplots``: the 1,999 plots as ``benchmarks/movieplots_corpus.py`` writes them (header line +
  plot), chunked at 1,000 characters with 150 of overlap: about 4,400 chunks;
- ``movieplots100k``: the same plots plus *distractor* documents up to ``--chunks`` chunks. A
  distractor is about 900 characters of sentences drawn at random (seeded) from all the plots,
  titled "distractor N", so the term statistics and the vocabulary are the real corpus's, and a
  distractor may even hold a sentence of the gold plot (a hard case for recall). One chunk each.

For each corpus: build seconds (read + chunk + BM25 + embed + vector index), then every question
is searched through the ``web_search`` tool (argument validation, the ``WebSearch`` resource,
``asyncio.to_thread``) once per mode, timing each call. recall@10 is the share of questions whose
top 10 holds a chunk of the gold document (``gold_doc``, a title) that contains the answer string
(``answer`` or ``answer_text``; case and spacing ignored; without one, any chunk of the gold
document counts). Questions with a ``route`` field are reported per route (text-only questions are
route ``web``). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import runpy
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CSV = ROOT.parent / "shared" / "data" / "movieplots" / "wiki_movie_plots_1901_1935.csv"
LEAD_QUESTIONS = ROOT / "tests" / "data" / "adaptive" / "questions.jsonl"
DEV_QUESTIONS = ROOT / "tests" / "data" / "web" / "dev_questions.jsonl"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def load_questions(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        gold = q.get("gold_doc")
        if not gold:
            continue  # a graph-only question has no document to find
        answer = q.get("answer") or q.get("answer_text")
        out.append({"question": q["question"], "gold_doc": gold, "answer": answer, "route": q.get("route")})
    return out


def distractors(records: list[dict], n: int, seed: int) -> list[dict]:
    """``n`` one-chunk documents of sentences drawn from all plots."""
    pool = [s for r in records for s in _SENTENCE.split(r["text"].split("\n\n", 1)[-1]) if 20 <= len(s) <= 400]
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        parts: list[str] = []
        size = 0
        while size < 700:
            s = rng.choice(pool)
            parts.append(s)
            size += len(s) + 1
        docs.append({"id": f"distractor-{i}", "title": f"distractor {i}", "text": " ".join(parts)[:990]})
    return docs


def hit(docs, q: dict) -> bool:
    answer = _norm(q["answer"]) if q["answer"] else None
    return any(d.title == q["gold_doc"] and (answer is None or answer in _norm(d.snippet)) for d in docs)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


async def measure(corpus, questions: list[dict], mode: str, k: int, repeat: int) -> dict:
    from kgteam.tools.toolbox import Toolbox
    from kgteam.tools.web import WebSearch
    from kgteam.tools.web.tool import web_search

    corpus.mode = mode
    tool = Toolbox.from_callables({"web_search": web_search}, [WebSearch(corpus)])["web_search"]
    await tool("warm up the caches", k=k)
    seconds: list[float] = []
    found: dict[str, list[bool]] = {}
    for r in range(repeat):
        for q in questions:
            t0 = time.perf_counter()
            docs = await tool(q["question"], k=k)
            seconds.append(time.perf_counter() - t0)
            if r == 0:
                found.setdefault(q["route"] or "all", []).append(hit(docs, q))
    everything = [h for hits in found.values() for h in hits]
    out = {"mode": mode, "queries": len(seconds), "p50_ms": round(statistics.median(seconds) * 1000, 2),
           "p95_ms": round(percentile(seconds, 95) * 1000, 2), "max_ms": round(max(seconds) * 1000, 2),
           f"recall@{k}": round(sum(everything) / len(everything), 4), "questions": len(everything)}
    if len(found) > 1 or "all" not in found:
        out["recall_by_route"] = {route: {"recall": round(sum(h) / len(h), 4), "questions": len(h)}
                                  for route, h in sorted(found.items())}
    return out


def build(name: str, records: list[dict], home: Path) -> tuple[object, dict]:
    from kgteam.tools.web import build_corpus, open_corpus

    path = home / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    t0 = time.perf_counter()
    manifest = build_corpus(name, [path], home=home)
    built = time.perf_counter() - t0
    path.unlink()
    t0 = time.perf_counter()
    corpus = open_corpus(name, home)
    opened = time.perf_counter() - t0
    return corpus, {"documents": manifest.documents, "chunks": manifest.chunks, "build_s": round(built, 2),
                    "open_s": round(opened, 3), "disk_mb": round(manifest.disk_bytes / 1e6, 1),
                    "dense": manifest.vectors.kind if manifest.vectors else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--questions", type=Path, default=None,
                        help=f"JSONL (question, gold_doc, answer|answer_text[, route]); default {LEAD_QUESTIONS} "
                             f"if it exists, else {DEV_QUESTIONS}")
    parser.add_argument("--chunks", type=int, default=100_000, help="size of the large corpus (0: skip it)")
    parser.add_argument("--modes", default="hybrid,bm25,dense")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3, help="passes over the questions for latency")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    if not args.csv.is_file():
        print(f"error: {args.csv} not found (the shared data folder)", file=sys.stderr)
        return 1
    questions_path = args.questions or (LEAD_QUESTIONS if LEAD_QUESTIONS.is_file() else DEV_QUESTIONS)
    questions = load_questions(questions_path)
    if not questions:
        print(f"error: {questions_path} has no question with a gold_doc", file=sys.stderr)
        return 1
    records = list(runpy.run_path(str(ROOT / "benchmarks" / "movieplots_corpus.py"))["documents"](args.csv))
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    result: dict = {"questions_file": str(questions_path.relative_to(ROOT) if questions_path.is_relative_to(ROOT)
                                          else questions_path), "k": args.k, "corpora": {}}
    with tempfile.TemporaryDirectory(prefix="kgteam-websearch-") as tmp:
        home = Path(tmp)
        corpus, info = build("movieplots", records, home)
        info["search"] = [asyncio.run(measure(corpus, questions, m, args.k, args.repeat)) for m in modes]
        corpus.close()
        result["corpora"]["movieplots"] = info
        if args.chunks > info["chunks"]:
            extra = distractors(records, args.chunks - info["chunks"], args.seed)
            big, big_info = build("movieplots100k", records + extra, home)
            big_info["distractor_documents"] = len(extra)
            big_info["search"] = [asyncio.run(measure(big, questions, m, args.k, args.repeat)) for m in modes]
            big.close()
            result["corpora"]["movieplots100k"] = big_info
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
