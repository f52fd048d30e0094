"""The semantic layer alone (no team, no model) on every KG we have: Hits@1 of its best path.

Faster than ``floor.py`` (no roles, no bus), so it is what the scorer's weights are tuned with;
``floor.py`` measures the team that uses it. Prints JSON; ``--threshold`` reports what
abstaining below that confidence does (answered accuracy, hallucinated, missing).

    .venv/bin/python benchmarks/floor_scorer.py --n 100 --home /tmp/kgh
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor import DEFAULT_SETS, load_set, prepare_lexicons  # noqa: E402

from kgteam.eval.datasets import default_data_dir  # noqa: E402
from kgteam.eval.metrics import Predicted, match_item  # noqa: E402


def misspell(item: Any, rng: random.Random) -> str | None:
    """The question with one letter of its topic entity's name replaced (None: no name ≥ 8 letters in it)."""
    for ent in item.topic_entities:
        name = ent.label or ""
        if len(name) >= 8 and name in item.question:
            letters = [i for i, c in enumerate(name) if c.isalpha()]
            i = rng.choice(letters[1:-1] or letters)
            swapped = rng.choice([c for c in "aeiourstln" if c != name[i].lower()])
            return item.question.replace(name, name[:i] + swapped + name[i + 1 :], 1)
    return None


async def run(spec: str, items: list[Any], kg_name: str, home: Path, thresholds: list[float],
              show: int, typos: bool = False) -> dict[str, Any]:
    from kgteam.roles.semantic.layer import SemanticLayer
    from kgteam.roles.semantic.similarity import embedder_similarity
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    kg = open_kg(kg_name, home=home)
    tools = KGTools.from_kg(kg)
    layer = SemanticLayer(tools.toolbox(), embedder_similarity())
    rows = []
    t0 = time.perf_counter()
    rng = random.Random(0)
    if typos:  # only the questions whose topic name can be misspelt, each with one wrong letter
        items = [item.model_copy(update={"question": q}) for item in items if (q := misspell(item, rng))]
    for item in items:
        ranking = await layer.rank(item.question)
        best = ranking.best
        labels: dict[str, str] = {}
        hit = False
        if best and best.answers:
            first = best.answers[0]
            label = first["value"]
            if first.get("type") == "uri":
                labels = await tools.labels_for([first["value"]])
                label = labels.get(first["value"], label)
            pred = Predicted(label=label, iri=first["value"] if first.get("type") == "uri" else None)
            hit = any(match_item(pred, gold) for gold in item.answers)
        rows.append({"q": item.question, "hit": hit, "conf": ranking.confidence, "margin": ranking.margin,
                     "path": best.explain() if best else None, "answered": bool(best),
                     "gold": [g.label for g in item.answers[:2]], "features": _features(ranking)})
    n = len(rows)
    out: dict[str, Any] = {"questions": n, "hits_at_1": round(sum(r["hit"] for r in rows) / n, 4),
                           "seconds_per_question": round((time.perf_counter() - t0) / n, 3)}
    for th in thresholds:
        ans = [r for r in rows if r["answered"] and r["conf"] >= th]
        out[f"at_{th}"] = {"hits": round(sum(r["hit"] for r in ans) / n, 4),
                           "hallucinated": round(sum(not r["hit"] for r in ans) / n, 4),
                           "missing": round((n - len(ans)) / n, 4)}
    out["wrong"] = [r for r in rows if not r["hit"]][:show]
    out["rows"] = rows
    kg.close()
    return out


def _features(ranking: Any) -> dict[str, Any]:
    """What a confidence could be computed from (for calibration studies: ``--dump``)."""
    best = ranking.best
    if best is None:
        return {}
    mine = {a.get("value") for a in best.answers}
    rivals = [p for p in ranking.paths[1:] if p.answers and not ({a.get("value") for a in p.answers} <= mine)]
    return {"score": best.score, "support": best.support, "hops": best.hops, "n_answers": len(best.answers),
            "scores": [p.score for p in ranking.paths[:12]],
            "rival_scores": [p.score for p in rivals[:5]],
            "rival_overlap": [len(mine & {a.get("value") for a in p.answers}) / max(1, len(p.answers))
                              for p in rivals[:5]],
            "strengths": [s.strength for s in best.steps]}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sets", nargs="*", default=DEFAULT_SETS)
    p.add_argument("--home", type=Path, default=None)
    p.add_argument("--thresholds", type=float, nargs="*", default=[0.0, 0.2, 0.4])
    p.add_argument("--show", type=int, default=8)
    p.add_argument("--dump", type=Path, default=None, help="write every question's row (JSONL) here")
    p.add_argument("--tune", type=int, default=0, help="examples per set to learn lexicons from (0: none)")
    p.add_argument("--typos", action="store_true", help="misspell one letter of each question's topic name "
                                                        "(names of 8+ characters; other questions left out)")
    args = p.parse_args()
    data = default_data_dir()
    result: dict[str, Any] = {"benchmark": "floor_scorer", "n": args.n, "seed": args.seed, "typos": args.typos,
                              "results": {}}
    with tempfile.TemporaryDirectory(prefix="kgteam-scorer-") as tmp:
        home = args.home or Path(tmp)
        result["tuned"] = prepare_lexicons(args.sets, data, home, args.n, args.seed, args.tune)
        for spec in args.sets:
            loaded = load_set(spec, data, home, args.n, args.seed)
            if isinstance(loaded, str):
                continue
            kg_name, items = loaded
            res = asyncio.run(run(spec, items, kg_name, home, args.thresholds, args.show, args.typos))
            rows = res.pop("rows")
            if args.dump:
                with args.dump.open("a") as fh:
                    for r in rows:
                        fh.write(json.dumps({"set": spec, **r}) + "\n")
            result["results"][spec] = res
            print(f"{spec}: {res['hits_at_1']} " + " ".join(
                f"[{k}: {v['hits']}/{v['hallucinated']}/{v['missing']}]" for k, v in res.items() if k.startswith("at_")),
                file=sys.stderr, flush=True)
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
