"""Embedded SmolLM2 server: start time and per-call latency for a ~300-token prompt (JSON output).

.venv/bin/python benchmarks/local_model.py [--calls 5] [--max-tokens 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time

from pydantic import BaseModel

from kgteam.llm.local_server import LocalModelServer
from kgteam.llm.openai_model import OpenAIChatModel
from kgteam.llm.structured import structured_call

FACTS = (
    "Heat is a 1995 crime film directed by Michael Mann. It stars Al Pacino and Robert De Niro. "
    "Collateral is a 2004 thriller directed by Michael Mann and starring Tom Cruise. "
    "The Insider is a 1999 drama directed by Michael Mann, starring Russell Crowe. "
    "Ali is a 2001 biographical film directed by Michael Mann, starring Will Smith. "
)


class Pick(BaseModel):
    movie: str
    director: str


def prompt(i: int, *, fresh: bool) -> list[dict[str, str]]:
    """~300 prompt tokens with the chat template. ``fresh`` puts the index first so llama.cpp cannot
    reuse the previous call's KV cache for the facts; otherwise only the question differs (the
    common case for roles whose prompts share a long prefix)."""
    question = f"Question {i}: which film released in 1995 is described above, and who directed it?"
    body = f"Case {i}. " + (FACTS * 3) + question if fresh else (FACTS * 3) + question
    return [
        {"role": "system", "content": "You answer questions about films using only the given facts."},
        {"role": "user", "content": body},
    ]


async def main(calls: int, max_tokens: int) -> dict[str, object]:
    load_start = os.getloadavg()[0]
    started = time.perf_counter()
    async with LocalModelServer() as server:
        start_s = time.perf_counter() - started
        model = OpenAIChatModel.for_local_server(server)
        t0 = time.perf_counter()
        await model.chat([{"role": "user", "content": "Hi"}], role="bench", max_tokens=1)
        first_call_s = time.perf_counter() - t0
        results: dict[str, dict[str, object]] = {}
        for fresh in (True, False):
            lat, ptoks, ctoks = [], [], []
            for i in range(calls):
                reply = await model.chat(prompt(i, fresh=fresh), role="bench", max_tokens=max_tokens)
                lat.append(reply.latency_s)
                ptoks.append(reply.prompt_tokens)
                ctoks.append(reply.completion_tokens)
            results["chat_fresh_prompt" if fresh else "chat_shared_prefix"] = {
                "prompt_tokens_mean": statistics.mean(ptoks),
                "completion_tokens_mean": statistics.mean(ctoks),
                "latency_s_p50": round(statistics.median(lat), 3),
                "latency_s_min": round(min(lat), 3),
                "latency_s_max": round(max(lat), 3),
            }
        structured_lat, structured_ok, structured_attempts = [], 0, []
        for i in range(calls):
            outcome = await structured_call(
                model, prompt(100 + i, fresh=True), Pick, role="bench", max_tokens=48, max_repairs=1
            )
            structured_lat.append(outcome.latency_s)
            structured_ok += outcome.ok
            structured_attempts.append(outcome.attempts)
        await model.aclose()
    return {
        "benchmark": "local_model",
        "model": "SmolLM2-135M-Instruct Q4_1 (llama-cpp-python server, n_threads=1, n_threads_batch=2)",
        "cpu_count": os.cpu_count(),
        "loadavg_1m_at_start": load_start,
        "loadavg_1m_at_end": os.getloadavg()[0],
        "server_start_s": round(start_s, 3),
        "first_tiny_call_s": round(first_call_s, 3),
        "calls": calls,
        "chat_max_tokens": max_tokens,
        **results,
        "structured_latency_s_p50": round(statistics.median(structured_lat), 3),
        "structured_valid": f"{structured_ok}/{calls}",
        "structured_attempts": structured_attempts,
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=32)
    args = ap.parse_args()
    print(json.dumps(asyncio.run(main(args.calls, args.max_tokens)), indent=2))
