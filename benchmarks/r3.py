"""R3 on generated claims and on the hand-written commonsense set: accuracy, "I don't know",
verifiability and ungrounded verdicts, LLM calls, JSON out.

* claims: ``kgteam claims <kg>`` (seeded; supported / refuted / not enough info, 1-3 hops) over
  MetaQA and WC2014. A verdict is **verifiable** when every triple it cites re-executes on the KG
  (an ASK per triple) and names what its reasoning says; target: every supported/refuted verdict.
* commonsense: ``tests/data/r3/commonsense.jsonl`` (gold True/False with the facts that decide it).
* handwritten: ``tests/data/r3/handwritten_<kg>.jsonl``, claims written as people phrase them
  (negations, numbers and dates, counts, 1-3 hops, relations the KG lacks), each with a gold ASK
  query; the gold verdict is computed on the KG at run time (``known``, when given, is an ASK that
  is false when the KG lacks the relation: then the gold is "not enough info"), and a stored
  answer that disagrees with it stops the run. Reported beside the generated claims.

WC2014 is built from ``../shared/data`` into ``--home`` (never into the repository).

    .venv/bin/python benchmarks/r3.py --claims 300 > r3.json
    .venv/bin/python benchmarks/r3.py --claims 300 --kgs pq2h pq3h atelier   # the other KGs
    .venv/bin/python benchmarks/r3.py --claims 30 --commonsense --model local   # the embedded model
    .venv/bin/python benchmarks/r3.py --claims 0 --handwritten --kgs metaqa isles   # hand-written claims only
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
from kgteam.eval.claims import load_claims
from kgteam.eval.metrics import normalize
from kgteam.tools.kg import open_kg
from kgteam.tools.kg_tools import KGTools

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from floor import SETS, ensure_kg  # noqa: E402  (the floor benchmark's KG builders)

COMMONSENSE = ROOT / "tests" / "data" / "r3" / "commonsense.jsonl"
PREFERENCES = ROOT / "tests" / "data" / "r3" / "preferences.jsonl"
DATA = ROOT.parent / "shared" / "data"
ROWS_TO: Path | None = None
VERDICT_WORDS = {"true", "false", "supported", "refuted"}
OWN = ("atelier", "isles")  # kgteam's own small KGs (tests/data/kgs), other predicate names
# the short prefixes the hand-written sets' gold ASK queries use, per KG
PREFIXES = {"metaqa": {"e": "http://example.org/metaqa/e/", "r": "http://example.org/metaqa/r/"},
            "isles": {"is": "http://example.org/isles/"}, "atelier": {"ex": "http://example.org/atelier/"}}
STD_PREFIXES = {"rdfs": "http://www.w3.org/2000/01/rdf-schema#", "xsd": "http://www.w3.org/2001/XMLSchema#"}


def _kg_home(kg: str, home: Path) -> None:
    """Build ``kg`` into ``home`` once: the shared data's KGs, or kgteam's own test KG (atelier)."""
    if kg in OWN:
        ensure_kg(kg, [sorted((ROOT / "tests" / "data" / "kgs" / kg).glob("*.ttl"))[0]], None, None, home)
        return
    spec = {"metaqa": "metaqa-consistent:1-hop", "wc2014": "wc2014:P1", "pq2h": "pq:2H", "pq3h": "pq:3H"}[kg]
    name, kb, fmt, base = SETS[spec]
    ensure_kg(name, [DATA / kb], fmt, base, home)


async def _verifiable(tools: KGTools, answer: Any) -> bool | None:
    """Every cited triple exists in the KG (None when the answer states no verdict)."""
    label = normalize(answer.values[0].label) if answer.values else ""
    if label not in VERDICT_WORDS:
        return None
    if not answer.evidence.triples:
        return False
    for t in answer.evidence.triples:
        typed = f"^^<{t.object_datatype}>" if t.object_datatype else ""
        obj = f'"{t.object}"{typed}' if t.object_is_literal else f"<{t.object}>"
        res = await tools.run_sparql(f"ASK {{ <{t.subject}> <{t.predicate}> {obj} }}")
        if not res.boolean:
            return False
    return True


def handwritten(kg: str, home: Path) -> list[dict[str, Any]]:
    """The hand-written claims on ``kg``, each with its gold verdict computed on the KG; a stored
    answer the KG disagrees with is an error in the set, never scored."""
    path = ROOT / "tests" / "data" / "r3" / f"handwritten_{kg}.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    head = "".join(f"PREFIX {k}: <{v}>\n" for k, v in {**STD_PREFIXES, **PREFIXES.get(kg, {})}.items())
    tools = KGTools.from_kg(open_kg(kg, home=home))

    async def gold(row: dict[str, Any]) -> str:
        if row.get("known") and not (await tools.run_sparql(head + row["known"])).boolean:
            return "not enough info"
        return "supported" if (await tools.run_sparql(head + row["ask"])).boolean else "refuted"

    try:
        computed = asyncio.run(_all(gold, rows))
    finally:
        tools.close()
    wrong = [(r["question"], r["answers"][0], g) for r, g in zip(rows, computed, strict=True) if r["answers"][0] != g]
    if wrong:
        raise SystemExit(f"hand-written gold disagrees with the KG: {wrong}")
    return rows


async def _all(fn: Any, rows: list[dict[str, Any]]) -> list[str]:
    return [await fn(r) for r in rows]


async def run(items: list[dict[str, Any]], kg: str | list[str], home: Path, model: str) -> dict[str, Any]:
    spec = with_overrides(load_team(ROOT / "examples" / "teams" / "r3.yaml"), kg=kg, model=model)
    rows = []
    own = isinstance(kg, str)  # several KGs: verified on the team's own union of them
    tools = KGTools.from_kg(open_kg(kg, home=home)) if own else None
    try:
        with Team(spec, home=home) as team:
            check = tools if tools is not None else team.runner.kg
            for item in items:
                t0 = time.perf_counter()
                answer = await team.aask(item["question"])
                said = normalize(answer.values[0].label) if answer.values and answer.status == "answered" else ""
                gold = normalize(item["answers"][0])
                rows.append({"question": item["question"], "text": answer.text[:120], "gold": gold, "said": said, "hit": said == gold, "verifiable": await _verifiable(check, answer),
                             "ungrounded": said in VERDICT_WORDS and not answer.evidence.triples,
                             "confidence": answer.confidence if said else None, "negated": bool(item.get("negated")),
                             "calls": answer.cost.llm_calls, "seconds": time.perf_counter() - t0})
    finally:
        if tools is not None:
            tools.close()
    if ROWS_TO is not None:
        with open(ROWS_TO, "a", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"kg": kg, **r}) + "\n" for r in rows)
    n = len(rows)
    verdicts = [r for r in rows if r["verifiable"] is not None]
    by_gold = {g: round(sum(r["hit"] for r in rows if r["gold"] == g) / max(1, sum(r["gold"] == g for r in rows)), 3)
               for g in sorted({r["gold"] for r in rows})}
    return {"n": n, "accuracy": round(sum(r["hit"] for r in rows) / n, 3), "by_gold": by_gold,
            "i_dont_know": round(sum(r["said"] in ("", "i don't know") for r in rows) / n, 3),
            "verdicts": len(verdicts),
            # a verdict stated the other way (supported for refuted, or either for not enough info)
            "wrong_verdicts": sum(r["said"] in VERDICT_WORDS and not r["hit"] for r in rows),
            "wrong_at_0.9": sum(r["said"] in VERDICT_WORDS and not r["hit"] and (r["confidence"] or 0) >= 0.9
                                for r in rows),
            "verifiable": round(sum(bool(r["verifiable"]) for r in verdicts) / max(1, len(verdicts)), 3),
            "ungrounded_verdicts": sum(r["ungrounded"] for r in rows),
            "llm_calls_mean": round(statistics.mean(r["calls"] for r in rows), 2),
            "llm_calls_max": max(r["calls"] for r in rows),
            **({"negated_accuracy": round(sum(r["hit"] for r in negated) / len(negated), 3), "negated": len(negated)}
               if (negated := [r for r in rows if r["negated"]]) else {}),
            "seconds_per_question": round(statistics.mean(r["seconds"] for r in rows), 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claims", type=int, default=300, help="claims per KG (0: none)")
    ap.add_argument("--kgs", nargs="+", default=["metaqa", "wc2014"],
                    help="metaqa, wc2014, pq2h, pq3h, atelier, isles")
    ap.add_argument("--commonsense", action="store_true", help="also the hand-written commonsense and preference sets")
    ap.add_argument("--handwritten", action="store_true", help="also the hand-written claim sets (tests/data/r3)")
    ap.add_argument("--model", default="none")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--home", type=Path, default=Path("/tmp/kgteam-r3-bench"))
    ap.add_argument("--limit", type=int, default=0, help="run only the first N items of each set (claims and commonsense)")
    ap.add_argument("--rows", type=Path, help="also append every question's row (JSONL) to this file")
    ap.add_argument("--preferences", action="store_true", help="the hand-written preference set (without the "
                    "commonsense one)")
    ap.add_argument("--join-profiles", action="store_true", help="preferences: read the personal KG of viewers "
                    "(tests/data/r3/preferences.ttl) together with the movie KG (a two-KG team)")
    args = ap.parse_args()
    global ROWS_TO
    ROWS_TO = args.rows
    out: dict[str, Any] = {"model": args.model, "claims": {}, "handwritten": {}, "commonsense": {}}
    for kg in args.kgs:
        _kg_home(kg, args.home)
        if args.claims:
            claims = load_claims(kg, n=args.claims, seed=args.seed, home=args.home)
            items = [{"question": c.question, "answers": [a.label for a in c.answers]} for c in claims]
            items = items[: args.limit or None]
            print(f"claims on {kg}: {len(items)}", file=sys.stderr)
            out["claims"][kg] = asyncio.run(run(items, kg, args.home, args.model))
        if args.handwritten and (rows := handwritten(kg, args.home)[: args.limit or None]):
            print(f"hand-written claims on {kg}: {len(rows)}", file=sys.stderr)
            out["handwritten"][kg] = asyncio.run(run(rows, kg, args.home, args.model))
        for name, path in (("commonsense", COMMONSENSE), ("preferences", PREFERENCES)):
            if not (args.commonsense or (args.preferences and name == "preferences")) or not path.exists():
                continue
            items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            items = [i for i in items if i.get("kg") == kg][: args.limit or None]
            print(f"{name} on {kg}: {len(items)}", file=sys.stderr)
            if items:
                team_kgs: str | list[str] = kg
                if name == "preferences" and args.join_profiles:
                    ensure_kg("preferences", [PREFERENCES.with_suffix(".ttl")], None, None, args.home)
                    team_kgs = ["preferences", kg]
                out.setdefault(name, {})[kg] = asyncio.run(run(items, team_kgs, args.home, args.model))
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
