"""LLM calls and tokens per question for the Triad or KERAG team, with a scripted model whose
every output is valid (so repairs do not inflate the count): Triad's design implies about 7
calls; KERAG's about D + 2 for D planned hops (topics, one filter vote per hop, the summary).

The scripted replies are built from the dataset row (topic entity and question type) for the
generalist, pick the first offered option for every selection, and phrase the answer from the
results. Usage is the scripted model's estimate (characters / 4).

    .venv/bin/python benchmarks/llm_calls.py --n 50
    .venv/bin/python benchmarks/llm_calls.py --n 50 --playbook kerag
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _triad_common import hit_at_1, sample_questions  # noqa: E402

from kgteam.llm.base import ChatMessage  # noqa: E402
from kgteam.llm.scripted import ScriptedModel  # noqa: E402


def _user(messages: list[ChatMessage]) -> str:
    return next(m["content"] for m in messages if m["role"] == "user")


def generalist_reply(rows_by_question: dict[str, dict]):  # noqa: ANN201
    def reply(messages: list[ChatMessage]) -> str:
        text = _user(messages)
        row = next((r for q, r in rows_by_question.items() if q in text), None)
        if row is None:
            return "{}"
        hops = row["qtype"].count("_to_")
        mention = row["topic_entity"]
        triples = " ".join(f"{'<E0>' if i == 0 else f'?x{i}'} <R{i}> ?x{i + 1} ." for i in range(hops))
        patterns = [{"subject": mention if i == 0 else f"?x{i}", "predicate": part, "object": f"?x{i + 1}"}
                    for i, part in enumerate(row["qtype"].split("_to_")[1:])]
        return json.dumps({"mention": mention, "patterns": patterns,
                           "template": f"SELECT DISTINCT ?x{hops} WHERE {{ {triples} FILTER(?x{hops} != <E0>) }}",
                           "answer_type": "date" if row["qtype"].endswith("year") else "resource"})
    return reply


def first_options(messages: list[ChatMessage]) -> str:
    text = _user(messages)
    k = int(m.group(1)) if (m := re.search(r"(?:Keep|Pick) the (\d+)", text)) else 1
    ids = re.findall(r"^(o\d+):", text, re.MULTILINE)
    return json.dumps({"chosen": ids[:k] or ["o1"]})


def topics_reply(rows_by_question: dict[str, dict]):  # noqa: ANN201
    def reply(messages: list[ChatMessage]) -> str:
        text = _user(messages)
        row = next((r for q, r in rows_by_question.items() if q in text), None)
        return json.dumps({"mentions": [row["topic_entity"]] if row else []})
    return reply


def filter_vote(messages: list[ChatMessage]) -> str:
    text = _user(messages)
    k = int(m.group(1)) if (m := re.search(r"at most (\d+) options", text)) else 1
    ids = re.findall(r"^(o\d+):", text, re.MULTILINE)
    return json.dumps({"keep": ids[:k], "sufficient": False})


def phrase(messages: list[ChatMessage]) -> str:
    block = re.search(r"<<<results\n(.*?)\nresults>>>", _user(messages), re.DOTALL)
    return json.dumps({"answer": "Answer: " + ", ".join(block.group(1).splitlines() if block else [])})


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50, help="questions per hop count")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kg-home", default=None)
    ap.add_argument("--playbook", choices=["triad", "kerag"], default="triad")
    args = ap.parse_args()

    from e2e_embedded import make_runner

    from kgteam.tools.kg import ensure_demo_kg
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(ensure_demo_kg(Path(args.kg_home) if args.kg_home else None))
    from kgteam.team_builder import playbook_runner

    out: dict = {"benchmark": "llm_calls", "playbook": args.playbook, "model": "scripted (valid outputs)",
                 "seed": args.seed, "results": {}}
    try:
        for hop in ("1-hop", "2-hop", "3-hop"):
            rows = sample_questions(hop, args.n, args.seed)
            by_q = {r["question"]: r for r in rows}
            if args.playbook == "kerag":
                model = (ScriptedModel()
                         .add("planner", None, topics_reply(by_q))
                         .add("schema_filter", None, filter_vote)
                         .add("summarizer", None, first_options))

                def make(model: ScriptedModel, tools: KGTools):  # noqa: ANN202
                    return playbook_runner("kerag", model, tools)
            else:
                model = (ScriptedModel()
                         .add("generalist", None, generalist_reply(by_q))
                         .add("decision_maker", None, first_options)
                         .add("advisor", None, phrase))
                make = make_runner
            over_d2 = with_fallbacks = 0
            calls, prompt_t, comp_t, hits = [], [], [], 0
            per_role: Counter[str] = Counter()
            for row in rows:
                before = len(model.calls)
                answer = await make(model, tools).ask(row["question"])
                hops_planned = sum(1 for c in model.calls[before:] if c.role == "schema_filter")
                with_fallbacks += bool(answer.fallbacks)
                over_d2 += args.playbook == "kerag" and answer.cost.llm_calls > hops_planned + 2
                calls.append(answer.cost.llm_calls)
                prompt_t.append(answer.cost.prompt_tokens)
                comp_t.append(answer.cost.completion_tokens)
                hits += hit_at_1(answer, row["answers"])
                for c in model.calls[before:]:
                    per_role[c.role] += 1
            out["results"][hop] = {
                "questions": len(rows),
                "llm_calls_mean": round(statistics.mean(calls), 2),
                "llm_calls_max": max(calls),
                "prompt_tokens_mean": round(statistics.mean(prompt_t), 1),
                "completion_tokens_mean": round(statistics.mean(comp_t), 1),
                "calls_per_role_mean": {r: round(v / len(rows), 2) for r, v in sorted(per_role.items())},
                "hits_at_1": round(hits / len(rows), 4),
                "within_7_calls": all(c <= 7 for c in calls),
                "questions_with_fallbacks": with_fallbacks,
            }
            if args.playbook == "kerag":
                out["results"][hop]["over_d_plus_2"] = over_d2
    finally:
        tools.close()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
