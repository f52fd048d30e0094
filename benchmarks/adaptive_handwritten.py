"""Adaptive RAG on hand-written questions: the isles KG plus short documents written about it
(tests/data/adaptive/isles), JSON out.

Per question the adaptive team's first route (the router's decision) and its answer. Reported:
right (a gold answer first, or "I don't know" where nobody knows), stated wrong (an answer that
is not a gold one), router agreement with the needed route, and the same per ``need`` (kg, docs,
kg_docs, docs_kg, none). Builds the KG and the corpus into ``--home`` on first use:

    .venv/bin/python benchmarks/adaptive_handwritten.py --model none > adaptive_handwritten.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from kgteam.api import Team
from kgteam.config import load_team
from kgteam.config.defaults import with_overrides
from kgteam.eval.metrics import GoldAnswer, Predicted, match_item

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "adaptive" / "isles"
KG_TTL = ROOT / "tests" / "data" / "kgs" / "isles" / "isles.ttl"
NEEDS = ("kg", "docs", "kg_docs", "docs_kg", "none")


def build(home: Path, rebuild: bool) -> None:
    from kgteam.tools.loading.builder import build_kg
    from kgteam.tools.web.corpus_build import build_corpus

    marker = home / ".adaptive-handwritten-built"
    if marker.exists() and not rebuild:
        return
    home.mkdir(parents=True, exist_ok=True)
    build_kg([KG_TTL], "isles", home=home, progress=False)
    build_corpus("isles-notes", sorted((DATA / "docs").glob("*.md")), home=home, progress=None)
    marker.write_text("built\n", encoding="utf-8")


def right(answer: Any, gold: list[str]) -> bool:
    answered = answer is not None and answer.status == "answered" and bool(answer.values)
    if not gold:
        return not answered
    if not answered:
        return False
    first = Predicted(label=answer.values[0].label, iri=answer.values[0].iri)
    return any(match_item(first, GoldAnswer(label=g)) for g in gold)


async def run(items: list[dict[str, Any]], model: str, home: Path) -> list[dict[str, Any]]:
    spec = with_overrides(load_team(ROOT / "examples" / "teams" / "adaptive.yaml"), kg="isles", model=model,
                          corpus="isles-notes")
    rows = []
    with Team(spec, home=home) as team:
        for item in items:
            routed, answer = None, None
            async for env in team.stream(item["question"]):
                if env.kind == "route_decision" and env.sender == "router" and routed is None:
                    routed = env.payload.route
                if env.kind == "answer" and env.sender not in ("graph_summarizer", "graph_advisor"):
                    answer = env.payload
            ok = right(answer, item["answers"])
            answered = answer is not None and answer.status == "answered" and bool(answer.values)
            rows.append({"id": item["id"], "need": item["need"], "route": item["route"], "routed": routed,
                         "right": ok, "stated_wrong": answered and not ok, "question": item["question"],
                         "gold": item["answers"], "said": answer.text[:160] if answer is not None else None})
    return rows


def block(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    if not n:
        return {"n": 0}
    return {"n": n, "right": round(sum(r["right"] for r in rows) / n, 3),
            "stated_wrong": round(sum(r["stated_wrong"] for r in rows) / n, 3),
            "router_agreement": round(sum(r["routed"] == r["route"] for r in rows) / n, 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="none")
    ap.add_argument("--home", type=Path, default=Path("/tmp/kgteam-adaptive-handwritten"))
    ap.add_argument("--rebuild", action="store_true", help="build the KG and the corpus again")
    ap.add_argument("--rows", action="store_true", help="print every question's row too")
    args = ap.parse_args()
    build(args.home, args.rebuild)
    items = [json.loads(x) for x in (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = asyncio.run(run(items, args.model, args.home))
    out: dict[str, Any] = {"questions": len(items), "model": args.model, **block(rows),
                           "by_need": {k: block([r for r in rows if r["need"] == k]) for k in NEEDS}}
    if args.rows:
        out["rows"] = rows
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
