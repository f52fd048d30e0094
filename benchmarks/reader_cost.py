"""What the trained reader adds to reading one question (issue 23: at most +5 ms). Prints JSON.

The semantic layer ranks each question twice, with and without the KG's reader, alternating so
a busy machine slows both alike; the KG's own ``reader.json`` is used (train one with ``kgteam
tune``). Reported: median and mean seconds per question each way, their difference (noisy on a
shared machine), and the time spent inside the reader itself (its features, weights and vouching,
summed per question: what it adds, without the noise of the store's queries).

    KGTEAM_DATA_DIR=/work/shared/data python benchmarks/reader_cost.py metaqa-consistent:1-hop \\
        --kg metaqa --home /tmp/kgh-taught --limit 50
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

from kgteam.eval.datasets import load_dataset, sample
from kgteam.roles.semantic.layer import SemanticLayer
from kgteam.roles.semantic.reader import ReaderScorer, reader_of
from kgteam.roles.semantic.scoring import QuestionScorer
from kgteam.roles.semantic.similarity import embedder_similarity
from kgteam.tools.kg import open_kg
from kgteam.tools.kg_tools import KGTools


async def timed(layer: SemanticLayer, question: str) -> float:
    started = time.perf_counter()
    await layer.rank(question)
    return time.perf_counter() - started


CLOCKS = {"reader": 0.0, "hand": 0.0}  # seconds inside ReaderScorer.score, and inside the hand score


def _clocked(method, clock: str):
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            CLOCKS[clock] += time.perf_counter() - started
    return wrapper


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--kg", required=True)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    tools = KGTools.from_kg(open_kg(args.kg, home=args.home))
    reader = reader_of(getattr(tools, "reader", None))
    if reader is None:
        raise SystemExit(f"{args.kg} has no trained reader (kgteam tune {args.kg} --examples FILE)")
    similarity = embedder_similarity(tools.embedder)
    hand = SemanticLayer(tools.toolbox(), similarity, reader=None)
    taught = SemanticLayer(tools.toolbox(), similarity, reader=reader)
    items = sample(load_dataset(args.dataset), args.limit, args.seed)
    without: list[float] = []
    with_reader: list[float] = []
    inside: list[float] = []
    ReaderScorer.score = _clocked(ReaderScorer.score, "reader")
    QuestionScorer.score = _clocked(QuestionScorer.score, "hand")
    try:
        for item in items[:3]:  # warm caches (labels, embeddings) for both
            asyncio.run(timed(hand, item.question))
            asyncio.run(timed(taught, item.question))
        for n, item in enumerate(items):
            for layer in ((hand, taught) if n % 2 else (taught, hand)):
                CLOCKS.update(reader=0.0, hand=0.0)
                took = asyncio.run(timed(layer, item.question))
                if layer is taught:  # the reader's own work: its scorer's time less the hand score inside it
                    with_reader.append(took)
                    inside.append(CLOCKS["reader"] - CLOCKS["hand"])
                else:
                    without.append(took)
    finally:
        tools.close()
    diffs = [w - h for w, h in zip(with_reader, without, strict=True)]
    print(json.dumps({"dataset": args.dataset, "kg": args.kg, "questions": len(items),
                      "reader_features": len(reader.weights),
                      "seconds_without": {"median": round(statistics.median(without), 4),
                                          "mean": round(statistics.fmean(without), 4)},
                      "seconds_with": {"median": round(statistics.median(with_reader), 4),
                                       "mean": round(statistics.fmean(with_reader), 4)},
                      "added_ms": {"median": round(1000 * statistics.median(diffs), 2),
                                   "mean": round(1000 * statistics.fmean(diffs), 2)},
                      "inside_reader_ms": {"median": round(1000 * statistics.median(inside), 2),
                                           "mean": round(1000 * statistics.fmean(inside), 2),
                                           "max": round(1000 * max(inside), 2)}}, indent=1))


if __name__ == "__main__":
    main()
