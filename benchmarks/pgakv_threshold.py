"""Calibrate PG&AKV's subject-pruning threshold for an embedder: the mean cosine of a subject's
top-10 retrieved triples when the subject is the right one, versus a random other subject.

For N seeded KG triples (s, p, o), the pseudo-triple is "s-label p-label ?" (the object unknown,
as most beliefs checked are); the right subject's neighbourhood and a random entity's are
embedded and ranked against it. The threshold printed lies midway between the 10th percentile
of right subjects and the 90th percentile of random ones. Prints JSON.

    PYTHONPATH=. .venv/bin/python benchmarks/pgakv_threshold.py --home /tmp/kgh --kg metaqa --n 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
from pathlib import Path

from kgteam.roles.pgakv.verification import verbalise
from kgteam.roles.semantic.similarity import embedder_similarity
from kgteam.tools.embedding import default_embedder
from kgteam.tools.kg import open_kg
from kgteam.tools.kg_tools import KGTools


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


async def top_mean(tools: KGTools, similarity, text: str, iri: str, k: int = 10) -> float | None:
    around = await tools.neighbors(iri, direction="both", limit=200)
    if not around:
        return None
    sims = sorted((await similarity([text], [verbalise(t) for t in around]))[0], reverse=True)[:k]
    return statistics.fmean(sims)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--kg", default="metaqa")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    tools = KGTools.from_kg(open_kg(args.kg, home=args.home))
    similarity = embedder_similarity()
    res = await tools.run_sparql("SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(isIRI(?o)) } LIMIT 20000", limit=20000)
    rows = [(r["s"].value, r["p"].value) for r in res.rows]
    rng = random.Random(args.seed)
    picked = rng.sample(rows, args.n)
    others = rng.sample([s for s, _ in rows], args.n)
    labels = await tools.labels_for([x for s, p in picked for x in (s, p)])
    right, wrong = [], []
    for (s, p), other in zip(picked, others, strict=True):
        text = f"{labels[s]} {labels[p]}".replace("_", " ")
        a, b = await top_mean(tools, similarity, text, s), await top_mean(tools, similarity, text, other)
        if a is not None and b is not None and other != s:
            right.append(a)
            wrong.append(b)
    threshold = round((pct(right, 0.10) + pct(wrong, 0.90)) / 2, 2)
    emb = default_embedder()
    print(json.dumps({"kg": args.kg, "embedder": getattr(emb, "name", None), "pairs": len(right),
                      "right_mean": round(statistics.fmean(right), 3), "right_p10": round(pct(right, 0.10), 3),
                      "wrong_mean": round(statistics.fmean(wrong), 3), "wrong_p90": round(pct(wrong, 0.90), 3),
                      "right_kept_at_threshold": round(sum(r >= threshold for r in right) / len(right), 3),
                      "wrong_dropped_at_threshold": round(sum(w < threshold for w in wrong) / len(wrong), 3),
                      "threshold": threshold}, indent=2))
    tools.close()


if __name__ == "__main__":
    asyncio.run(main())
