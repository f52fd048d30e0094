"""Orchestration overhead per question: Triad on MetaQA dev with a zero-latency scripted model.

What is measured (per question, wall clock of ``TeamRunner.ask``):

* ``total_ms``      — the whole ask, including SQLite persistence of every message and trace event;
* ``excl_model_ms`` — total minus model time (the scripted model takes ~0 s, so nearly equal);
* shares of the time: ``runtime`` (AutoGen bus + supervisor + persistence = total - time inside
  ``Role.handle``), ``roles`` (role logic: parsing, scoring, prompt rendering, validation),
  ``tools`` (KG tool calls: label search, traversal, SPARQL on embedded Oxigraph).

The scripted replies are valid structured outputs built from the dataset row (the entity as
written, a chain template of the right length) and "pick the first option" for every choice, so
the run follows the model path, not the repair/fallback path.

    .venv/bin/python benchmarks/overhead.py --n 200            # JSON on stdout
    .venv/bin/python benchmarks/overhead.py --playbook test    # runtime only, no KG
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kgteam.agents.sessions import SqliteSessionStore
from kgteam.agents.team import TeamRunner
from kgteam.llm.base import ChatMessage
from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.budgets import Budgets

DATA = Path(os.environ.get("KGTEAM_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")) / "metaqa"
_FENCED_QUESTION = re.compile(r"<<<question\n(.*?)\nquestion>>>", re.DOTALL)
_FENCED_RESULTS = re.compile(r"<<<results\n(.*?)\nresults>>>", re.DOTALL)
_OPTION = re.compile(r"^o(\d+): ", re.MULTILINE)


def load_questions(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` questions, half 1-hop and half 2-hop, seeded sample of the dev sets."""
    rows: list[dict[str, Any]] = []
    per = {"1-hop": n - n // 2, "2-hop": n // 2}
    rng = random.Random(seed)
    for split, count in per.items():
        path = DATA / split / "dev_consistent.jsonl"
        if not path.exists():
            raise SystemExit(f"missing {path}: the MetaQA dev sets are needed for this benchmark")
        items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for item in rng.sample(items, min(count, len(items))):
            item["hops"] = 1 if split == "1-hop" else 2
            item["question"] = re.sub(r"[\[\]]", "", item["question"]).strip()  # users do not bracket names
            rows.append(item)
    return rows


def triad_script(rows: list[dict[str, Any]]) -> ScriptedModel:
    """Scripted Triad replies for ``rows`` (MetaQA items with ``question``, ``topic_entity``, ``hops``).

    Each reply is a function of the prompt, so one model serves every question and role.
    """
    from kgteam.roles.triad.templates import chain_template

    by_plain = {row["question"]: row for row in rows}

    def question_of(messages: list[ChatMessage]) -> dict[str, Any] | None:
        text = "\n".join(m.get("content") or "" for m in messages)
        found = _FENCED_QUESTION.search(text)
        return by_plain.get(found.group(1).strip()) if found else None

    def generalist(messages: list[ChatMessage]) -> str:
        row = question_of(messages)
        if row is None:
            return "{}"
        hops = int(row["hops"])
        patterns = [{"subject": "?e0" if i == 0 else f"?x{i}", "predicate": f"relation {i + 1}",
                     "object": f"?x{i + 1}"} for i in range(hops)]
        return json.dumps({"mention": row["topic_entity"], "patterns": patterns,
                           "template": chain_template(hops), "answer_type": "resource"})

    def choose_first(messages: list[ChatMessage]) -> str:
        text = "\n".join(m.get("content") or "" for m in messages)
        if _OPTION.search(text):
            return json.dumps({"chosen": ["o1"], "reason": "scripted: first option"})
        return json.dumps({"answer": "scripted answer", "answers": [], "question": "scripted"})

    def advisor(messages: list[ChatMessage]) -> str:  # a valid phrasing names every result, nothing else
        text = "\n".join(m.get("content") or "" for m in messages)
        found = _FENCED_RESULTS.search(text)
        names = found.group(1).splitlines() if found else []
        return json.dumps({"answer": ", ".join(names) or "none", "answers": []})

    return ScriptedModel([
        ("generalist", None, generalist),
        ("advisor", None, advisor),
        ("*", None, choose_first),
    ], name="scripted-triad")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def build_triad(rows: list[dict[str, Any]], home: Path | None, store: SqliteSessionStore | None) -> TeamRunner:
    from kgteam.team_builder import playbook_runner
    from kgteam.tools.kg import ensure_demo_kg
    from kgteam.tools.kg_tools import KGTools

    kg = ensure_demo_kg(home=home)
    return playbook_runner("triad", triad_script(rows), KGTools.from_kg(kg), session_store=store)


def build_test_playbook(store: SqliteSessionStore | None) -> TeamRunner:
    """Runtime-only baseline: a 7-message chain with no KG (roles from tests/agents)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "agents"))
    from agents_playbook import Sleeper, any_reply_model, sleeper_routes

    return TeamRunner(roles={"sleeper": Sleeper(steps=7)}, routes=sleeper_routes(), model=any_reply_model(),
                      tools=None, budgets=Budgets(), session_store=store)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="kgteam-overhead-"))
    store = None if args.no_store else SqliteSessionStore(workdir / "sessions.db")
    rows = load_questions(args.n, args.seed) if args.playbook == "triad" else [
        {"question": f"question {i}", "answers": []} for i in range(args.n)]
    team = build_triad(rows, Path(args.home) if args.home else None, store) if args.playbook == "triad" \
        else build_test_playbook(store)

    for row in rows[: args.warmup]:  # imports, caches, first Oxigraph/tantivy queries
        await team.ask(row["question"])

    per_q: list[dict[str, Any]] = []
    for row in rows:
        count = 0

        def on_event(_: Any) -> None:
            nonlocal count
            count += 1

        c0, t0 = time.process_time(), time.perf_counter()
        answer = await team.ask(row["question"], on_event=on_event)
        total = time.perf_counter() - t0
        cpu = time.process_time() - c0
        state = team.last_run
        assert state is not None
        metrics = state.metrics
        role_s = metrics.role_s
        hit = bool(row["answers"]) and any(v.label in row["answers"] for v in answer.values[:1])
        per_q.append({
            "total_s": total, "cpu_s": cpu, "model_s": metrics.model_s, "tool_s": metrics.tool_s,
            "roles_s": max(role_s - metrics.tool_s - metrics.model_s, 0.0), "runtime_s": max(total - role_s, 0.0),
            "messages": count, "llm_calls": answer.cost.llm_calls, "status": answer.status,
            "stopped_by": answer.stopped_by, "hit": hit,
        })

    totals = [q["total_s"] * 1000 for q in per_q]
    excl = [(q["total_s"] - q["model_s"]) * 1000 for q in per_q]
    sums = {k: sum(q[k] for q in per_q) for k in ("runtime_s", "roles_s", "tool_s", "model_s", "total_s")}
    import autogen_agentchat

    def counts(key: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for q in per_q:
            out[q[key]] = out.get(q[key], 0) + 1
        return out

    result = {
        "benchmark": "overhead",
        "playbook": args.playbook,
        "questions": len(per_q),
        "persistence": "sqlite" if store is not None else "none",
        "ms_per_question_excl_model": {"p50": round(_pct(excl, 0.5), 2), "p95": round(_pct(excl, 0.95), 2),
                                       "mean": round(statistics.fmean(excl), 2), "max": round(max(excl), 2)},
        # CPU time of this process per question: robust to other load on a shared machine
        "cpu_ms_per_question": {"p50": round(_pct([q["cpu_s"] * 1000 for q in per_q], 0.5), 2),
                                "p95": round(_pct([q["cpu_s"] * 1000 for q in per_q], 0.95), 2)},
        "ms_per_question_total": {"p50": round(_pct(totals, 0.5), 2), "p95": round(_pct(totals, 0.95), 2)},
        "messages_per_question": {"mean": round(statistics.fmean(q["messages"] for q in per_q), 2),
                                  "p50": _pct([q["messages"] for q in per_q], 0.5),
                                  "max": max(q["messages"] for q in per_q)},
        "llm_calls_per_question": round(statistics.fmean(q["llm_calls"] for q in per_q), 2),
        "time_share": {k.removesuffix("_s"): round(sums[k] / sums["total_s"], 3)
                       for k in ("runtime_s", "roles_s", "tool_s", "model_s")},
        "runtime_ms_per_question_p50": round(_pct([q["runtime_s"] * 1000 for q in per_q], 0.5), 2),
        "status": counts("status"),
        "stopped_by": counts("stopped_by"),
        "hits_at_1_scripted": round(sum(q["hit"] for q in per_q) / len(per_q), 3),
        "target_p50_ms": 50,
        "meets_target": _pct(excl, 0.5) <= 50,
        "env": {"python": platform.python_version(), "autogen_agentchat": autogen_agentchat.__version__,
                "cpus": os.cpu_count(), "seed": args.seed, "warmup": args.warmup},
    }
    if store is not None:
        store.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--playbook", choices=["triad", "test"], default="triad")
    parser.add_argument("--home", help="KGTEAM_HOME holding the demo KG (default: the usual home)")
    parser.add_argument("--no-store", action="store_true", help="do not persist messages (SQLite off)")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
