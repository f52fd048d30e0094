"""Hits@1 of the Triad team with the embedded SmolLM2-135M on MetaQA 1-hop and 2-hop dev.

A seeded sample of ``dev_consistent.jsonl`` per hop count runs through ``TeamRunner`` over the
demo KG. Reports Hits@1, answer status, LLM calls/tokens and how often each decision was taken
by the deterministic fallback versus the model. ``--model scripted-null`` makes every model
output invalid to measure the deterministic floor.

    .venv/bin/python benchmarks/e2e_embedded.py --n 100            # the full run (slow on 2 cores)
    .venv/bin/python benchmarks/e2e_embedded.py --n 20 --model scripted-null
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _triad_common import NullModel, hit_at_1, sample_questions  # noqa: E402

from kgteam.roles.base import ListTrace  # noqa: E402


def make_runner(model, tools):  # noqa: ANN001, ANN201
    from kgteam.team_builder import playbook_runner

    return playbook_runner("triad", model, tools)


class HopStats:
    def __init__(self) -> None:
        self.hits = 0
        self.done = 0
        self.calls: list[int] = []
        self.tokens: list[int] = []
        self.secs: list[float] = []
        self.status: Counter[str] = Counter()
        self.decided: Counter[str] = Counter()

    def summary(self) -> dict:
        return {
            "questions": self.done,
            "hits_at_1": round(self.hits / self.done, 4) if self.done else None,
            "status": dict(self.status),
            "llm_calls_mean": round(statistics.mean(self.calls), 2) if self.calls else None,
            "tokens_mean": round(statistics.mean(self.tokens), 1) if self.tokens else None,
            "seconds_mean": round(statistics.mean(self.secs), 2) if self.secs else None,
            "decisions": dict(sorted(self.decided.items())),
        }


async def run_sample(hops: list[str], n: int, seed: int, model, tools, strip: bool,  # noqa: ANN001
                     deadline: float) -> dict[str, HopStats]:
    """Questions of the hop counts interleaved, so a deadline cuts every hop count evenly."""
    samples = {hop: sample_questions(hop, n, seed) for hop in hops}
    stats = {hop: HopStats() for hop in hops}
    order = [(hop, row) for i in range(n) for hop in hops if i < len(samples[hop]) for row in [samples[hop][i]]]
    for hop, row in order:
        if time.monotonic() > deadline:
            break
        st = stats[hop]
        q = row["question"].replace("[", "").replace("]", "") if strip else row["question"]
        trace = ListTrace()
        runner = make_runner(model, tools)
        runner.trace = trace
        t0 = time.perf_counter()
        answer = await runner.ask(q)
        st.secs.append(time.perf_counter() - t0)
        st.done += 1
        hit = hit_at_1(answer, row["answers"])
        st.hits += hit
        st.status[f"{answer.status}/{'grounded' if answer.grounded else 'ungrounded'}"] += 1
        st.calls.append(answer.cost.llm_calls)
        st.tokens.append(answer.cost.prompt_tokens + answer.cost.completion_tokens)
        print(f"[{hop} {st.done}] {st.secs[-1]:.1f}s calls={answer.cost.llm_calls} hit={hit} q={q!r}",
              file=sys.stderr, flush=True)
        for ev in trace.events:
            if ev.get("event") == "decision":
                st.decided[f"{ev['role']}.{ev['decision'].split('.')[0]}:{ev['source']}"] += 1
    return stats


def fallback_share(decisions: dict[str, int]) -> float | None:
    asked = {k: v for k, v in decisions.items() if k.endswith((":llm", ":fallback"))}
    total = sum(asked.values())
    return round(sum(v for k, v in asked.items() if k.endswith(":fallback")) / total, 4) if total else None


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100, help="questions per hop count")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hops", default="1-hop,2-hop")
    ap.add_argument("--model", choices=["local", "scripted-null"], default="local")
    ap.add_argument("--strip-brackets", action="store_true", help="remove MetaQA's [topic] markers")
    ap.add_argument("--max-minutes", type=float, default=60.0, help="stop sampling after this long")
    ap.add_argument("--kg-home", default=None, help="KGTEAM_HOME holding the demo KG (built if missing)")
    args = ap.parse_args()

    from kgteam.tools.kg import ensure_demo_kg
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(ensure_demo_kg(Path(args.kg_home) if args.kg_home else None))
    deadline = time.monotonic() + args.max_minutes * 60
    report: dict = {"benchmark": "e2e_embedded", "model": args.model, "seed": args.seed, "n": args.n,
                    "strip_brackets": args.strip_brackets, "max_minutes": args.max_minutes, "results": {}}
    server = None
    try:
        if args.model == "local":
            from kgteam.llm.local_server import LocalModelServer
            from kgteam.llm.openai_model import OpenAIChatModel

            server = LocalModelServer()
            server.start()
            model = OpenAIChatModel.for_local_server(server)
            report["model_name"] = server.model_name
        else:
            model = NullModel()
        stats = await run_sample(args.hops.split(","), args.n, args.seed, model, tools, args.strip_brackets,
                                 deadline)
        for hop, st in stats.items():
            res = st.summary()
            res["fallback_share"] = fallback_share(res["decisions"])
            report["results"][hop] = res
    finally:
        if server is not None:
            server.stop()
        tools.close()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
