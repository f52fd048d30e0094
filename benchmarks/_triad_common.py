"""Shared helpers for the Triad benchmarks: sampling MetaQA, a null model, Hits@1."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

from kgteam.llm.base import ChatReply
from kgteam.protocols.payloads import Answer

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "metaqa"


def sample_questions(hop: str, n: int, seed: int = 0) -> list[dict[str, Any]]:
    path = DATA / hop / "dev_consistent.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(seed)
    return rng.sample(rows, min(n, len(rows)))


class NullModel:
    """Every reply is unusable: measures the deterministic floor of the pipeline."""

    name = "scripted-null"

    async def chat(self, messages, *, role, json_schema=None, temperature=0.0, max_tokens=None) -> ChatReply:  # noqa: ANN001
        prompt = sum(len(m.get("content") or "") for m in messages) // 4
        return ChatReply(text="I am not sure.", prompt_tokens=prompt, completion_tokens=4, model=self.name)


class CountingModel:
    """Wraps a model to count calls and tokens (when no runtime accounting is in the loop)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.name = getattr(inner, "name", "model")
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.seconds = 0.0

    async def chat(self, messages, **kw) -> ChatReply:  # noqa: ANN001, ANN003
        t = time.perf_counter()
        reply = await self.inner.chat(messages, **kw)
        self.seconds += time.perf_counter() - t
        self.calls += 1
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        return reply


def hit_at_1(answer: Answer | None, gold: list[str]) -> bool:
    if answer is None or not answer.values:
        return False
    return answer.values[0].label in set(gold)
