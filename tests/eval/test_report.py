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
        return Answer(confidence=1.0, text=str(value), values=[AnswerValue(label=str(value))], cost=cost)


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


class HopBlind:
    """Right on 1- and 2-hop questions, wrong on every 3-hop one (accuracy exactly 0 there)."""

    async def ask(self, question: str, *, session_id: str | None = None) -> Answer:
        n = int(question.split()[2])
        value = n * n + (1 if 1 + n % 3 == 3 else 0)
        return Answer(confidence=1.0, text=str(value), values=[AnswerValue(label=str(value))], stopped_by="done",
                      cost=Usage(llm_calls=1 + n % 2, prompt_tokens=10 + n, completion_tokens=3))


def _run(tmp_path, team, items, name):
    out = tmp_path / f"{name}.jsonl"
    asyncio.run(run_eval(items, team, out, progress=False))
    return out


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_plots_show_zero_bars_counts_outside_legends_and_whole_question_counts(tmp_path):
    import matplotlib.patches as mpatches

    from kgteam.eval.report import build_figures, load_runs

    items = ITEMS[:12]  # 4 questions per hop count
    figures = build_figures(load_runs([_run(tmp_path, HopBlind(), items, "blind")]))
    by_hops = figures["by_hops.png"]
    accuracy = by_hops.axes[0]
    assert [t.get_text() for t in accuracy.get_xticklabels()] == ["1-hop (n=4)", "2-hop (n=4)", "3-hop (n=4)"]
    labels = [t.get_text() for t in accuracy.texts]
    assert labels == ["1.00", "1.00", "0"]  # the 3-hop bar is a visible zero, not a gap
    for name in ("grades.png", "by_hops.png", "cost.png"):
        fig = figures[name]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is None:
                continue
            box = legend.get_window_extent(renderer)
            bars = [p.get_window_extent(renderer) for a in fig.axes for p in a.patches
                    if isinstance(p, mpatches.Rectangle)]
            assert bars and not any(_overlaps(box, b) for b in bars), name
    cost = figures["cost.png"]
    assert [t.get_text() for t in cost.axes[0].texts] == ["6", "6"]  # questions per LLM-call count
    for ax in cost.axes:
        ticks = ax.get_yticks()
        assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks
    assert all(float(t).is_integer() for t in cost.axes[1].get_xticks())


def test_a_group_a_run_never_saw_is_marked_not_shown_as_zero(tmp_path):
    from kgteam.eval.report import build_figures, load_runs

    first = _run(tmp_path, HopBlind(), ITEMS[:6], "all_hops")
    only_1hop = _run(tmp_path, HopBlind(), [it for it in ITEMS[:6] if it.tags["hops"] == 1], "one_hop")
    accuracy = build_figures(load_runs([first, only_1hop]))["by_hops.png"].axes[0]
    assert [t.get_text() for t in accuracy.get_xticklabels()] == ["1-hop (n=2)", "2-hop (n=2/0)",
                                                                  "3-hop (n=2/0)"]
    assert [t.get_text() for t in accuracy.texts] == ["1.00", "1.00", "0", "1.00", "n/a", "n/a"]


def test_report_lists_failed_questions_with_gold_answer_grade_and_stop_reason(tmp_path):
    tricky = DatasetItem(id="t1", question="what is 2 squared | cubed\nreally", answers=[GoldAnswer(label="4")],
                         tags={"hops": 3})
    run = _run(tmp_path, HopBlind(), [*ITEMS[:6], tricky], "blind")
    md = write_report([run], tmp_path / "report").read_text(encoding="utf-8")
    section = md.split("## Failures", 1)[1].split("\n## ", 1)[0]
    assert "| id | question | gold | answer | grade | stopped by |" in section
    assert "| q02 | what is 2 squared | 4 | 5 | hallucinated | done |" in section
    assert "| q05 | what is 5 squared | 25 | 26 | hallucinated | done |" in section
    assert "| t1 | what is 2 squared \\| cubed really | 4 | 5 | hallucinated | done |" in section  # one row: pipe escaped, newline folded
    assert section.count("\n| q") + section.count("\n| t") == 3  # only the failures
    assert "q01" not in section and "the first" not in section


def test_a_long_failures_table_is_cut_with_a_note(tmp_path):
    items = [DatasetItem(id=f"w{i:03d}", question=f"what is {3 * i + 2} squared",
                         answers=[GoldAnswer(label=str((3 * i + 2) ** 2))], tags={"hops": 3}) for i in range(60)]
    run = _run(tmp_path, HopBlind(), items, "wrong")
    md = write_report([run], tmp_path / "report").read_text(encoding="utf-8")
    section = md.split("## Failures", 1)[1].split("\n## ", 1)[0]
    assert "60 question(s) not answered accurately; the first 50 are listed" in section
    assert section.count("\n| w") == 50
