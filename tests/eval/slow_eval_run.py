"""Subprocess for the kill/resume test: evaluates 40 synthetic questions slowly into argv[1]."""

from __future__ import annotations

import asyncio
import sys

from kgteam.eval.datasets import DatasetItem, GoldAnswer
from kgteam.eval.runner import run_eval
from kgteam.protocols.evidence import Usage
from kgteam.protocols.payloads import Answer, AnswerValue

ITEMS = [DatasetItem(id=f"q{i:03d}", question=f"what is {i} squared", answers=[GoldAnswer(label=str(i * i))],
                     tags={"hops": 1 + i % 2}) for i in range(40)]


class SlowSquares:
    """Answers correctly, slowly, so the parent can kill the run mid-way."""

    def __init__(self, delay: float):
        self.delay = delay
        self.asked: list[str] = []

    async def ask(self, question: str, *, session_id: str | None = None) -> Answer:
        self.asked.append(question)
        await asyncio.sleep(self.delay)
        n = int(question.split()[2])
        return Answer(confidence=1.0, text=str(n * n), values=[AnswerValue(label=str(n * n))],
                      cost=Usage(llm_calls=2, prompt_tokens=10 * n, completion_tokens=3))


if __name__ == "__main__":
    asyncio.run(run_eval(ITEMS, SlowSquares(float(sys.argv[2])), sys.argv[1], concurrency=3, progress=False))
