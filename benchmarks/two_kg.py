"""Two KGs in one team: a household's personal film notes joined with the MetaQA movie KG.

``tests/data/two_kg/questions.jsonl`` (gold answers from both KGs' facts; ``needs`` says which KG
an answer needs). Prints JSON per playbook: Hits@1 (the first value is a gold answer), wrong
stated (an answer given that is not gold), and the share of answers needing both KGs whose
evidence cites both (each evidence triple's ``kg``). The team trusts the household KG
(``trust_other_kgs: true``, docs/teams.md): 4 questions need its ``owl:sameAs`` to a MetaQA film.

    .venv/bin/python benchmarks/two_kg.py --playbooks triad kerag --home /tmp/two-kg
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from kgteam.api import Team
from kgteam.config import load_team
from kgteam.config.defaults import with_overrides
from kgteam.eval.metrics import normalize
from kgteam.tools.kg import ensure_demo_kg, list_kgs
from kgteam.tools.loading import build_kg

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "two_kg"
PERSONAL = "household"


def ensure_kgs(home: Path) -> None:
    """The demo MetaQA KG and the household KG, built into ``home`` once."""
    ensure_demo_kg(home=home).close()
    if not any(m.name == PERSONAL for m in list_kgs(home)):
        build_kg([DATA / "household.ttl"], PERSONAL, home=home, progress=False)


async def run(playbook: str, items: list[dict[str, Any]], home: Path, model: str) -> dict[str, Any]:
    spec = with_overrides(load_team(ROOT / "examples" / "teams" / f"{playbook}.yaml"), kg=[PERSONAL, "metaqa"],
                          model=model)
    # the household KG's owl:sameAs to MetaQA's films (4 of the questions) and its names for them: trusted
    spec = spec.model_copy(update={"trust_other_kgs": True})
    rows = []
    t_build = time.perf_counter()
    with Team(spec, home=home) as team:
        build_s = time.perf_counter() - t_build
        for item in items:
            t0 = time.perf_counter()
            answer = await team.aask(item["question"])
            gold = {normalize(a) for a in item["answers"]}
            said = normalize(answer.values[0].label) if answer.values and answer.status == "answered" else ""
            cited = {name.strip() for t in answer.evidence.triples for name in (t.kg or "").split(",") if name.strip()}
            rows.append({"question": item["question"], "needs": item["needs"], "said": said, "hit": said in gold,
                         "wrong": bool(said) and said not in gold, "cited": sorted(cited),
                         "seconds": time.perf_counter() - t0})
    both = [r for r in rows if r["needs"] == "both" and r["said"]]
    n = len(rows)
    return {"playbook": playbook, "n": n, "hits@1": round(sum(r["hit"] for r in rows) / n, 3),
            "hits@1_two_kg": round(sum(r["hit"] for r in rows if r["needs"] == "both")
                                   / max(1, sum(r["needs"] == "both" for r in rows)), 3),
            "wrong_stated": sum(r["wrong"] for r in rows),
            "i_dont_know": sum(not r["said"] for r in rows),
            "cites_both_kgs": round(sum({PERSONAL, "metaqa"} <= set(r["cited"]) for r in both) / max(1, len(both)), 3),
            "answered_needing_both": len(both),
            "team_build_s": round(build_s, 2),
            "seconds_per_question": round(statistics.mean(r["seconds"] for r in rows), 3),
            "misses": [{k: r[k] for k in ("question", "said", "cited")} for r in rows if not r["hit"]]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--playbooks", nargs="+", default=["triad"])
    ap.add_argument("--model", default="none")
    ap.add_argument("--home", type=Path, default=Path("/tmp/kgteam-two-kg"))
    ap.add_argument("--limit", type=int, default=0, help="the first N questions only")
    args = ap.parse_args()
    items = [json.loads(line) for line in (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line]
    items = items[: args.limit] if args.limit else items
    ensure_kgs(args.home)
    out = {"command": " ".join(sys.argv), "model": args.model,
           "results": [asyncio.run(run(p, items, args.home, args.model)) for p in args.playbooks]}
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
