"""Adaptive RAG on its labelled question set: routing accuracy, and answers of the adaptive team
beside a graph-only and a text-only baseline, JSON out.

* ``adaptive``: examples/teams/adaptive.yaml (router -> KERAG sub-team and/or the corpus search).
* ``graph_only``: examples/teams/kerag.yaml, the same KG team without documents.
* ``text_only``: the adaptive team with its router forced to "web" (documents only).

Per team: Hits@1 (the first value is a gold answer; "I don't know" is a miss), hallucinated
(answered with a wrong first value), "I don't know", LLM calls per question (mean, max), seconds
per question; per route (the question's label) the same. Routing accuracy compares the router's
first decision with the label. Needs the demo KG (``kgteam demo``) and the movie-plot corpus:

    .venv/bin/python benchmarks/movieplots_corpus.py --out /tmp/movieplots.jsonl
    .venv/bin/kgteam corpus add movieplots /tmp/movieplots.jsonl
    .venv/bin/python benchmarks/adaptive.py > adaptive.json
    .venv/bin/python benchmarks/adaptive.py --model local --n 30 --teams adaptive   # the embedded model
    .venv/bin/python benchmarks/adaptive.py --route-only wc2014:P1 pq:2H own:atelier --n 100
        # the router alone on KGs without a corpus: every question there is a KG question, so the
        # share it sends to the web alone is the share it would send away from the facts
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from kgteam.api import Team
from kgteam.config import load_team
from kgteam.config.defaults import with_overrides
from kgteam.config.schema import RoleSpec
from kgteam.eval.metrics import GoldAnswer, Predicted, match_item

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "tests" / "data" / "adaptive" / "questions.jsonl"
ROWS_TO: Path | None = None


def team_spec(name: str, model: str) -> Any:
    if name == "graph_only":
        return with_overrides(load_team(ROOT / "examples" / "teams" / "kerag.yaml"), model=model)
    spec = with_overrides(load_team(ROOT / "examples" / "teams" / "adaptive.yaml"), model=model,
                          corpus="movieplots")  # the team file reads the built-in movie-notes
    if name == "text_only":
        router = spec.roles.get("router") or RoleSpec(role="router")
        roles = {**spec.roles, "router": router.model_copy(update={"settings": {**router.settings, "force": "web"}})}
        spec = spec.model_copy(update={"roles": roles})
    return spec


def hit(values: list[Any], gold: list[str]) -> bool:
    if not values:
        return False
    first = Predicted(label=values[0].label, iri=values[0].iri)
    return any(match_item(first, GoldAnswer(label=g)) for g in gold)


async def run_team(name: str, model: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    with Team(team_spec(name, model)) as team:
        for item in items:
            t0 = time.perf_counter()
            routed = None
            answer = None
            async for env in team.stream(item["question"]):
                if env.kind == "route_decision" and env.sender == "router" and routed is None:
                    routed = env.payload.route
                if env.kind == "answer" and env.sender not in ("graph_summarizer", "graph_advisor"):
                    answer = env.payload
            seconds = time.perf_counter() - t0
            ok = answer is not None and answer.status == "answered" and hit(answer.values, item["answers"])
            rows.append({"id": item["id"], "route": item["route"], "routed": routed, "hit": ok,
                         "answered": answer is not None and answer.status == "answered",
                         "llm_calls": answer.cost.llm_calls if answer is not None else 0, "seconds": seconds,
                         "final_route": answer.route if answer is not None else None,
                         "question": item["question"], "gold": item["answers"],
                         "said": answer.text[:160] if answer is not None else None})
    if ROWS_TO is not None:
        with open(ROWS_TO, "a", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps({"team": name, **r}) + "\n")
    return summarise(rows)


def _block(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    if not n:
        return {"n": 0}
    calls = [r["llm_calls"] for r in rows]
    return {"n": n, "hits_at_1": round(sum(r["hit"] for r in rows) / n, 3),
            "hallucinated": round(sum(r["answered"] and not r["hit"] for r in rows) / n, 3),
            "i_dont_know": round(sum(not r["answered"] for r in rows) / n, 3),
            "llm_calls_mean": round(statistics.mean(calls), 2), "llm_calls_max": max(calls),
            "seconds_per_question": round(statistics.mean(r["seconds"] for r in rows), 3)}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = _block(rows)
    out["by_route"] = {route: _block([r for r in rows if r["route"] == route]) for route in ("kg", "web", "both")}
    routed = [r for r in rows if r["routed"] is not None]
    if routed:
        out["routing_accuracy"] = round(sum(r["routed"] == r["route"] for r in routed) / len(rows), 3)
        out["routing_confusion"] = {f"{r}->{p}": sum(1 for x in rows if x["route"] == r and x["routed"] == p)
                                    for r in ("kg", "web", "both") for p in ("kg", "web", "both", None)
                                    if any(x["route"] == r and x["routed"] == p for x in rows)}
    return out


async def route_only(spec: str, n: int, seed: int, home: Path) -> dict[str, Any]:
    """The router's deterministic decision on a KG-only question set (floor.py builds the KG)."""
    import contextlib

    from floor import load_set

    from kgteam.config.schema import KGSpec
    from kgteam.eval.datasets import default_data_dir
    from kgteam.roles.adaptive.route_signals import route_signals
    from kgteam.roles.semantic import SemanticLayer
    from kgteam.roles.semantic.similarity import team_similarity
    from kgteam.team_builder import build_toolbox, open_kg_tools

    loaded = load_set(spec, default_data_dir(), home, n, seed)
    if isinstance(loaded, str):
        return {"skipped": loaded}
    kg_name, items = loaded
    counts = {"kg": 0, "both": 0, "web": 0}
    with contextlib.ExitStack() as stack:
        tools = build_toolbox(open_kg_tools(KGSpec(name=kg_name), stack, home=home))
        layer = SemanticLayer(tools, team_similarity(tools))
        for item in items:
            route, _ = (await route_signals(item.question, tools, layer)).decide()
            counts[route] += 1
    total = len(items)
    return {"n": total, **{f"to_{k}": round(v / total, 3) for k, v in counts.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--model", default="none", help="none (the floor) or local (the embedded model) or a model spec")
    ap.add_argument("--teams", nargs="+", default=["adaptive", "graph_only", "text_only"])
    ap.add_argument("--n", type=int, default=0, help="a seeded sample of this many per route (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rows", type=Path, help="also append every question's row (JSONL) to this file")
    ap.add_argument("--route-only", nargs="+", metavar="SPEC",
                    help="only the router's decisions on KG-only sets (wc2014:P1, pq:2H, own:atelier ...)")
    ap.add_argument("--home", type=Path, default=Path("/tmp/kgteam-routing-bench"), help="where --route-only builds KGs")
    args = ap.parse_args()
    if args.route_only:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        out = {spec: asyncio.run(route_only(spec, args.n or 100, args.seed, args.home)) for spec in args.route_only}
        print(json.dumps({"route_only": out}, indent=2))
        return 0
    global ROWS_TO
    ROWS_TO = args.rows
    items = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.n:
        rng = random.Random(args.seed)
        items = [x for route in ("kg", "web", "both")
                 for x in rng.sample([i for i in items if i["route"] == route],
                                     min(args.n, sum(i["route"] == route for i in items)))]
    result: dict[str, Any] = {"questions": len(items), "model": args.model, "teams": {}}
    for name in args.teams:
        print(f"running {name} on {len(items)} questions", file=sys.stderr)
        result["teams"][name] = asyncio.run(run_team(name, args.model, items))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
