from __future__ import annotations

import asyncio

import matplotlib.image as mpimg
import numpy as np

from kgteam.eval.datasets import DatasetItem, GoldAnswer
from kgteam.eval.report import summarize, write_report
from kgteam.eval.runner import read_run, run_eval
from kgteam.protocols.evidence import Usage
from kgteam.protocols.payloads import Answer, AnswerValue

ITEMS = [DatasetItem(id=f"q{i:02d}", question=f"what is {i} squared", answers=[GoldAnswer(label=str(i * i))],
                     tags={"hops": 1 + i % 3, "qtype": ["square", "power", "area"][i % 3]}) for i in range(30)]


class Team:
    """Right on some hops, wrong or abstaining on others, with varying cost."""

    def __init__(self, skill: int):
        self.skill = skill

    async def ask(self, question: str, *, session_id: str | None = None) -> Answer:
        n = int(question.split()[2])
        await asyncio.sleep(0.001 * (n % 5))
        cost = Usage(llm_calls=1 + n % (3 + self.skill), prompt_tokens=100 * (1 + n % 4), completion_tokens=20)
        if n % (2 + self.skill) == 0:
            return Answer(text="I don't know", status="unknown", cost=cost)
        value = n * n if n % 3 != 2 or self.skill else n * n + 1
        return Answer(text=str(value), values=[AnswerValue(label=str(value))], cost=cost)


def test_report_tables_and_plots(tmp_path):
    runs = []
    for skill in (0, 2):
        out = tmp_path / f"team{skill}.jsonl"
        asyncio.run(run_eval(ITEMS, Team(skill), out, progress=False))
        runs.append(out)
    s0 = summarize(read_run(runs[0]))
    # hand count for skill 0: n % 2 == 0 abstain (15); of the 15 odd n, n % 3 == 2 are wrong (5, 11, 17, 23, 29)
    assert (s0["missing"], round(s0["hallucination"], 4), round(s0["accuracy"], 4)) == (0.5, round(5 / 30, 4),
                                                                                          round(10 / 30, 4))
    assert round(s0["truthfulness"], 4) == round(5 / 30, 4)
    path = write_report(runs, tmp_path / "report", title="two teams")
    md = path.read_text(encoding="utf-8")
    for heading in ("## Overall", "## Cost per question", "## By hop count", "## By question type"):
        assert heading in md
    assert "| team0 |" in md and "| team2 |" in md and "1 · team0" in md  # side by side, by hop
    for name in ("grades.png", "by_hops.png", "by_qtype.png", "cost.png", "latency.png"):
        png = tmp_path / "report" / name
        assert png.stat().st_size > 8_000, name
        pixels = mpimg.imread(png)
        assert float(np.std(pixels)) > 0.05, name  # not a blank canvas
        assert f"]({name})" in md
