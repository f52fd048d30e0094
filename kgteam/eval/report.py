"""Summaries, Markdown reports and plots for one or several run files (side by side)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgteam.eval.metrics import CONFIDENT, brier_score, expected_calibration_error, reliability_bins
from kgteam.eval.runner import RunRecord, read_meta, read_run
from kgteam.eval.verifiability import is_ungrounded_verdict

GRADES = ("accurate", "hallucinated", "missing")


def latest_records(records: Sequence[RunRecord]) -> list[RunRecord]:
    """One record per id, the last written (a resumed run with ``--retry-errors`` appends)."""
    by_id: dict[str, RunRecord] = {}
    for r in records:
        by_id[r.id] = r
    return list(by_id.values())


def _pct(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(q * (len(s) - 1))))
    return s[k]


def summarize(records: Sequence[RunRecord]) -> dict[str, Any]:
    """Accuracy / hallucination / missing / truthfulness, set metrics, groundedness and cost."""
    records = list(records)
    n = len(records)
    graded = [r for r in records if r.grading is not None and r.grading.grade != "ungraded"]
    g = len(graded)
    grades = Counter(r.grading.grade for r in graded if r.grading)
    acc = grades["accurate"] / g if g else 0.0
    hal = grades["hallucinated"] / g if g else 0.0
    answered = [r for r in records if r.grading is not None and r.grading.grade not in {"missing"}
                and r.status == "ok"]
    checked = [r for r in answered if r.groundedness is not None]
    scored = [r.verifiability.score for r in records
              if r.status == "ok" and r.verifiability is not None and r.verifiability.score is not None]
    pairs = [p for r in records if (p := r.calibration_pair()) is not None]
    stated = [r for r in records if r.stated() and r.grading is not None and r.grading.grade != "ungraded"]
    confident_wrong = sum(r.grading is not None and r.grading.grade == "hallucinated" and r.confidence is not None
                          and r.confidence >= CONFIDENT for r in stated)
    secs = [r.seconds for r in records]
    opened = [r.open_ended for r in records if r.status == "ok" and r.open_ended is not None]
    calls = [float(r.llm_calls) for r in records]
    toks = [float(r.tokens) for r in records]
    return {
        "n": n,
        "graded": g,
        "errors": sum(r.status == "error" for r in records),
        "accuracy": acc,
        "hallucination": hal,
        "missing": grades["missing"] / g if g else 0.0,
        "truthfulness": acc - hal,
        "exact_match": statistics.fmean(float(r.grading.exact_match) for r in graded if r.grading) if g else 0.0,
        "precision": statistics.fmean(r.grading.precision for r in graded if r.grading) if g else 0.0,
        "recall": statistics.fmean(r.grading.recall for r in graded if r.grading) if g else 0.0,
        "f1": statistics.fmean(r.grading.f1 for r in graded if r.grading) if g else 0.0,
        "hits1": statistics.fmean(float(r.grading.hits1) for r in graded if r.grading) if g else 0.0,
        "groundedness": (sum(bool(r.groundedness and r.groundedness.grounded) for r in checked) / len(checked))
        if checked else None,
        "grounded_checked": len(checked),
        # hallucinated answers that still passed the groundedness check: "grounded" is not "right"
        "wrong_grounded": sum(bool(r.groundedness and r.groundedness.grounded) for r in checked
                              if r.grading and r.grading.grade == "hallucinated"),
        # calibration over (confidence, correct) pairs: stated answers and abstentions' graded best guesses
        "calibrated_n": len(pairs),
        "ece": expected_calibration_error(pairs),
        "brier": brier_score(pairs),
        "wrong_at_90": confident_wrong / g if g else None,  # over all graded questions
        "wrong_at_90_stated": confident_wrong / len(stated) if stated else None,  # over stated answers
        "wrong_at_90_n": confident_wrong,
        "stated": len(stated),
        # FActScore-like: mean share of an answer's reasoning statements the KG bears out (docs/eval.md)
        "verifiability": statistics.fmean(scored) if scored else None,
        "verifiability_checked": len(scored),
        "verifiability_na": sum(r.status == "ok" for r in records) - len(scored),
        "ungrounded_verdicts": sum(r.status == "ok" and is_ungrounded_verdict(
            r.answer_text, r.answer_values, r.evidence, r.answer_status) for r in records),
        # open-ended items (a reference text): ROUGE-L and the share of sentences their cited triples support
        "rouge_l": statistics.fmean(o.rouge_l for o in opened) if opened else None,
        "factual_precision": statistics.fmean(fp) if (fp := [o.factual_precision for o in opened
                                                           if o.factual_precision is not None]) else None,
        "open_ended_n": len(opened),
        "llm_calls_mean": statistics.fmean(calls) if calls else 0.0,
        "tokens_mean": statistics.fmean(toks) if toks else 0.0,
        "tokens_total": int(sum(toks)),
        "seconds_mean": statistics.fmean(secs) if secs else 0.0,
        "seconds_p50": _pct(secs, 0.5),
        "seconds_p90": _pct(secs, 0.9),
        "decided_by": dict(Counter(r.grading.decided_by for r in records if r.grading).most_common()),
        "stopped_by": dict(Counter(r.stopped_by for r in records).most_common()),
    }


def by_tag(records: Sequence[RunRecord], tag: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[RunRecord]] = {}
    for r in records:
        if tag in r.tags:
            groups.setdefault(str(r.tags[tag]), []).append(r)
    return {k: summarize(v) for k, v in sorted(groups.items(), key=lambda kv: _sort_key(kv[0]))}


def _sort_key(value: str) -> tuple[int, Any]:
    return (0, int(value)) if value.isdigit() else (1, value)


@dataclass
class LoadedRun:
    name: str
    path: Path
    records: list[RunRecord]
    meta: dict[str, Any]


def load_runs(paths: Sequence[str | Path]) -> list[LoadedRun]:
    runs = []
    names: Counter[str] = Counter()
    for p in paths:
        p = Path(p)
        name = p.stem
        names[name] += 1
        if names[name] > 1:
            name = f"{name}#{names[name]}"
        runs.append(LoadedRun(name, p, latest_records(read_run(p)), read_meta(p)))
    return runs


def calibration_pairs(records: Sequence[RunRecord]) -> list[tuple[float, bool]]:
    """Every question's (confidence, correct) pair: see :meth:`RunRecord.calibration_pair`."""
    return [p for r in records if (p := r.calibration_pair()) is not None]


RELIABILITY_BINS = 10


def calibration_section(runs: Sequence[LoadedRun], n_bins: int = RELIABILITY_BINS) -> list[str]:
    """``## Calibration``: per run, the reliability bins as a table (the data of ``reliability.png``)."""
    out = ["## Calibration", "",
           "Each question whose answer, or whose abstention's best guess, has a confidence is one (confidence, "
           "correct) pair: a stated answer is correct when graded accurate, a best guess when the rules grade it "
           "accurate (on a question with no answer in the KG every guess is wrong). Pairs fall in "
           f"{n_bins} equal-width confidence bins; ECE = Σ (bin pairs / all pairs) × |accuracy − mean confidence|. "
           "wrong@≥0.9 = stated answers graded hallucinated at confidence ≥ 0.9, over all graded questions "
           "(and over stated answers); wrong & grounded = hallucinated answers that passed the groundedness check.", ""]
    for run in runs:
        pairs = calibration_pairs(run.records)
        if not pairs:
            out += [f"- **{run.name}**: no answer carries a confidence", ""]
            continue
        ece = expected_calibration_error(pairs, n_bins)
        out += [f"**{run.name}**: {len(pairs)} pairs, ECE {ece:.3f}", "",
                "| bin | n | mean confidence | accuracy | gap |", "|---|---|---|---|---|"]
        for b in reliability_bins(pairs, n_bins):
            out.append(f"| {b.low:.1f}–{b.high:.1f} | {b.n} | {_fmt(b.mean_confidence, 'f3')} | "
                       f"{_fmt(b.accuracy, 'f3')} | {_fmt(b.gap, 'f3')} |")
        out.append("")
    return out


# ------------------------------------------------------------------------------------ markdown

_MAIN_COLS = [("n", "n", "d"), ("accuracy", "acc", "%"), ("hallucination", "halluc", "%"), ("missing", "missing", "%"),
              ("truthfulness", "truthful", "%"), ("exact_match", "EM", "%"), ("f1", "F1", "%"), ("hits1", "Hits@1", "%"),
              ("groundedness", "grounded", "%"), ("wrong_grounded", "wrong & grounded", "d"),
              ("ece", "ECE", "f3"), ("wrong_at_90", "wrong@≥0.9", "%"), ("wrong_at_90_stated", "wrong@≥0.9 of stated", "%"),
              ("brier", "Brier", "f3"), ("verifiability", "verifiable", "%"),
              ("ungrounded_verdicts", "ungrounded verdicts", "d"), ("llm_calls_mean", "LLM calls/q", "f"),
              ("tokens_mean", "tokens/q", "f0"), ("seconds_mean", "s/q", "f"), ("seconds_p90", "p90 s", "f"),
              ("errors", "errors", "d")]


def _fmt(value: Any, kind: str) -> str:
    if value is None:
        return "–"
    if kind == "%":
        return f"{100 * value:.1f}"
    if kind == "f":
        return f"{value:.2f}"
    if kind == "f0":
        return f"{value:.0f}"
    if kind == "f3":
        return f"{value:.3f}"
    return str(value)


def _table(rows: list[tuple[str, dict[str, Any]]], first: str) -> str:
    head = "| " + " | ".join([first] + [c[1] for c in _MAIN_COLS]) + " |"
    sep = "|" + "---|" * (len(_MAIN_COLS) + 1)
    body = ["| " + " | ".join([name] + [_fmt(s.get(k), kind) for k, _, kind in _MAIN_COLS]) + " |" for name, s in rows]
    return "\n".join([head, sep, *body])


def _slice_table(runs: list[LoadedRun], tag: str) -> str | None:
    rows = []
    for run in runs:
        for value, s in by_tag(run.records, tag).items():
            rows.append((f"{value}" if len(runs) == 1 else f"{value} · {run.name}", s))
    if not rows:
        return None
    rows.sort(key=lambda r: _sort_key(r[0].split(" · ")[0]))
    return _table(rows, tag)


def write_report(run_paths: Sequence[str | Path], out_dir: str | Path, *, title: str = "kgteam evaluation") -> Path:
    """``report.md`` plus PNG plots in ``out_dir``; several runs are compared side by side."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = load_runs(run_paths)
    lines = [f"# {title}", ""]
    lines.append("Grades: accurate / hallucinated / missing (\"I don't know\" and errors are missing); "
                 "truthfulness = accuracy − hallucination. Percentages are over graded questions. "
                 "EM/F1/Hits@1 are macro averages over questions. Grounded = share of answered questions whose "
                 "cited triples all exist in the KG and name the answer (– when not checked). Verifiable = mean share of an "
                 "answer's reasoning statements whose cited triples exist in the KG and are named by the statement, over "
                 "answers with reasoning (– when none had any); wrong & grounded = hallucinated answers counted as "
                 "grounded, so a grounded share is never read as a share of right answers; ECE, wrong@≥0.9 and Brier: "
                 "see Calibration; ungrounded verdicts = answers saying True/False/"
                 "supported/refuted with no evidence triple. s/q and the latency "
                 "plot are each question's own run time: time spent waiting for a model slot (other questions' "
                 "calls to a one-request-at-a-time server) is not counted.")
    lines += ["", "## Runs", ""]
    for run in runs:
        meta = ", ".join(f"{k}={v}" for k, v in run.meta.items() if k in {"dataset", "team", "model", "limit", "seed",
                                                                           "concurrency", "kg"})
        lines.append(f"- **{run.name}**: `{run.path}` ({len(run.records)} questions){': ' + meta if meta else ''}")
    lines += ["", "## Overall", "", _table([(r.name, summarize(r.records)) for r in runs], "run"), ""]
    lines += ["## Cost per question", "", "| run | LLM calls mean | LLM calls max | tokens mean | tokens total | "
              "seconds mean | seconds p50 | seconds p90 |", "|---|---|---|---|---|---|---|---|"]
    for run in runs:
        s = summarize(run.records)
        max_calls = max((r.llm_calls for r in run.records), default=0)
        lines.append(f"| {run.name} | {s['llm_calls_mean']:.2f} | {max_calls} | {s['tokens_mean']:.0f} | "
                     f"{s['tokens_total']} | {s['seconds_mean']:.2f} | {s['seconds_p50']:.2f} | {s['seconds_p90']:.2f} |")
    lines.append("")
    for tag, heading in (("hops", "By hop count"), ("qtype", "By question type"), ("dataset", "By dataset")):
        table = _slice_table(runs, tag)
        if table and (tag != "dataset" or len({v for r in runs for v in by_tag(r.records, tag)}) > 1):
            lines += [f"## {heading}", "", table, ""]
    lines += ["## How grades were decided", ""]
    for run in runs:
        s = summarize(run.records)
        decided = ", ".join(f"{k}: {v}" for k, v in s["decided_by"].items())
        stopped = ", ".join(f"{k}: {v}" for k, v in s["stopped_by"].items())
        lines.append(f"- **{run.name}**: {decided or '–'}; stopped by: {stopped or '–'}")
    lines.append("")
    lines += calibration_section(runs)
    plots = make_plots(runs, out_dir)
    if plots:
        lines += ["## Plots", ""]
        lines += [f"![{p.stem}]({p.name})" for p in plots]
        lines.append("")
    lines += failures_table(runs)
    errors = [(run.name, r) for run in runs for r in run.records if r.status == "error"]
    if errors:
        lines += ["## Errors (first 20)", ""]
        lines += [f"- {name} `{r.id}`: {(r.error or '').splitlines()[0][:200]}" for name, r in errors[:20]]
        lines.append("")
    path = out_dir / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


MAX_FAILURES = 50  # rows of the failures table; the run file has them all
_CELL_CHARS = 120


def _md_cell(text: str) -> str:
    """Text safe in a Markdown table cell: one line, pipes escaped, bounded length."""
    one_line = " ".join(text.split())
    if len(one_line) > _CELL_CHARS:
        one_line = one_line[:_CELL_CHARS - 1] + "…"
    return one_line.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("<", "&lt;") or "–"


def failures(records: Sequence[RunRecord]) -> list[RunRecord]:
    """Questions not answered accurately (hallucinated, missing, errors), in run order."""
    return [r for r in records if r.grading is not None and r.grading.grade in ("hallucinated", "missing")]


def failures_table(runs: Sequence[LoadedRun], limit: int = MAX_FAILURES) -> list[str]:
    """``## Failures``: question, gold, answer, grade and stop reason of each failed question."""
    rows = [(run.name, r) for run in runs for r in failures(run.records)]
    if not rows:
        return []
    several = len(runs) > 1
    head = (["run"] if several else []) + ["id", "question", "gold", "answer", "grade", "stopped by"]
    out = ["## Failures", "", f"{len(rows)} question(s) not answered accurately"
           + (f"; the first {limit} are listed, the run file has all of them." if len(rows) > limit else "."), "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, r in rows[:limit]:
        gold = "; ".join(g.display() for g in r.gold) or "(none)"
        answer = r.answer_text if r.status == "ok" else f"error: {(r.error or '').splitlines()[0] if r.error else ''}"
        grade = r.grading.grade if r.grading else "–"
        cells = ([name] if several else []) + [r.id, r.question, gold, answer, grade, r.stopped_by]
        out.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
    out.append("")
    return out


# --------------------------------------------------------------------------------------- plots

def make_plots(runs: list[LoadedRun], out_dir: Path) -> list[Path]:
    """Draws every plot and saves it as PNG in ``out_dir``; returns the paths."""
    import matplotlib.pyplot as plt

    paths = []
    for name, fig in build_figures(runs).items():
        path = out_dir / name
        fig.savefig(path, dpi=110, bbox_inches="tight")  # "tight": legends outside the axes are kept
        plt.close(fig)
        paths.append(path)
    return paths


def _legend_outside(ax: Any) -> None:
    """Legend to the right of the axes, never over the bars."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0.0)


def _label_bars(ax: Any, bars: Any, values: Sequence[float | None]) -> None:
    """Each bar's value at its end; a zero bar gets "0" so it does not read as "no data", and a
    group the run has no question in gets "n/a"."""
    labels = ["n/a" if v is None else ("0" if v == 0 else f"{v:.2f}") for v in values]
    ax.bar_label(bars, labels=labels, fontsize=6, padding=2)


def _group_label(key: str, counts: Sequence[int], tag: str) -> str:
    name = f"{key}-hop" if tag == "hops" and key.isdigit() else key
    shown = sorted(set(counts))
    return f"{name} (n={'/'.join(str(c) for c in counts) if len(shown) > 1 else shown[0]})"


def build_figures(runs: list[LoadedRun]) -> dict[str, Any]:
    """The report's figures by file name: grades, accuracy/truthfulness by slice, cost, latency."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figures: dict[str, Any] = {}
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]

    def done(fig: Any, name: str) -> None:
        fig.tight_layout()
        figures[name] = fig

    # 1. Grades per run (stacked) and truthfulness.
    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(runs) + 3), 4))
    names = [f"{r.name}\n(n={len(r.records)})" for r in runs]
    sums = [summarize(r.records) for r in runs]
    bottom = [0.0] * len(runs)
    for grade, color in zip(GRADES, ("#2e7d32", "#c62828", "#9e9e9e"), strict=True):
        key = {"accurate": "accuracy", "hallucinated": "hallucination", "missing": "missing"}[grade]
        vals = [s[key] for s in sums]
        bars = ax.bar(names, vals, bottom=bottom, label=grade, color=color)
        ax.bar_label(bars, labels=[f"{v:.0%}" if v >= 0.06 else "" for v in vals], label_type="center", fontsize=7)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.plot(names, [s["truthfulness"] for s in sums], "kD", label="truthfulness")
    ax.axhline(0, color="black", lw=0.5)
    ax.set_ylim(min(-0.05, min(s["truthfulness"] for s in sums) - 0.05), 1.05)
    ax.set_ylabel("share of questions")
    ax.set_title("Grades per run")
    _legend_outside(ax)
    done(fig, "grades.png")

    # 2./3. Accuracy and truthfulness by slice (hops, question type).
    for tag, fname in (("hops", "by_hops.png"), ("qtype", "by_qtype.png")):
        per_run = [by_tag(r.records, tag) for r in runs]
        keys = sorted({k for d in per_run for k in d}, key=_sort_key)
        if not keys:
            continue
        if tag == "qtype" and len(keys) > 25:
            counts = Counter(str(rec.tags.get(tag)) for r in runs for rec in r.records)
            keys = sorted([k for k, _ in counts.most_common(25)], key=_sort_key)
        labels = [_group_label(k, [d[k]["n"] if k in d else 0 for d in per_run], tag) for k in keys]
        horizontal = tag == "qtype"
        fig, axes = plt.subplots(1, 2, figsize=(12, min(30.0, max(3.5, 0.22 * len(keys) * len(runs) + 1.5))) if horizontal
                                 else (11, 4), sharey=horizontal)
        width = 0.8 / len(runs)
        for ax, metric in zip(axes, ("accuracy", "truthfulness"), strict=True):
            for i, (run, d) in enumerate(zip(runs, per_run, strict=True)):
                pos = [j + (i - (len(runs) - 1) / 2) * width for j in range(len(keys))]
                vals = [d[k][metric] if k in d else None for k in keys]
                heights = [v or 0.0 for v in vals]
                if horizontal:
                    bars = ax.barh(pos, heights, height=width, label=run.name, color=colors[i % len(colors)])
                else:
                    bars = ax.bar(pos, heights, width=width, label=run.name, color=colors[i % len(colors)])
                _label_bars(ax, bars, vals)
                # a zero-height bar has no area: a marker on the axis shows it is there
                zeros = [p for p, v in zip(pos, vals, strict=True) if v == 0]
                if zeros:
                    at_zero = [0.0] * len(zeros)
                    ax.plot(*((at_zero, zeros) if horizontal else (zeros, at_zero)), ls="none", ms=12, mew=2,
                            marker="|" if horizontal else "_", color=colors[i % len(colors)])
            if horizontal:
                ax.set_yticks(range(len(keys)), labels, fontsize=7)
                ax.set_xlabel(metric)
                ax.axvline(0, color="black", lw=0.5)
                ax.margins(x=0.12)
            else:
                ax.set_xticks(range(len(keys)), labels)
                ax.set_ylabel(metric)
                ax.axhline(0, color="black", lw=0.5)
                ax.margins(y=0.12)
            ax.set_title(f"{metric} by {tag}")
        _legend_outside(axes[-1])
        done(fig, fname)

    # 4. Cost: LLM calls (grouped bars per count) and tokens (shared bins) per question.
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    all_calls = [r.llm_calls for run in runs for r in run.records] or [0]
    xs = list(range(min(all_calls), max(all_calls) + 1))
    width = 0.8 / len(runs)
    all_toks = [r.tokens for run in runs for r in run.records] or [0]
    lo, hi = min(all_toks), max(all_toks)
    bins = [lo + (hi - lo + 1) * i / 20 for i in range(21)]
    for i, run in enumerate(runs):
        c = colors[i % len(colors)]
        counts = Counter(r.llm_calls for r in run.records)
        bars = axes[0].bar([x + (i - (len(runs) - 1) / 2) * width for x in xs], [counts.get(x, 0) for x in xs],
                           width=width, label=run.name, color=c, edgecolor="black", linewidth=0.4)
        axes[0].bar_label(bars, fontsize=6, padding=2)  # counts, so a 0 is written, not left blank
        axes[1].hist([r.tokens for r in run.records], bins=bins, alpha=0.55, label=run.name, color=c,
                     edgecolor="black", linewidth=0.4)
    axes[0].set_xticks(xs)
    axes[0].set_xlabel("LLM calls per question")
    axes[1].set_xlabel("tokens per question")
    for ax in axes:
        ax.set_ylabel("questions")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of questions: no 2.5 questions
    axes[1].xaxis.set_major_locator(MaxNLocator(integer=True))
    _legend_outside(axes[1])
    axes[0].set_title("LLM calls")
    axes[1].set_title("Tokens")
    done(fig, "cost.png")

    # 5. Verifiability (only when some run's reasoning was checked against the KG).
    if any(s["verifiability_checked"] for s in sums):
        fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(runs) + 3), 4))
        labels = [f"{r.name}\n(checked {s['verifiability_checked']}, n/a {s['verifiability_na']})"
                  for r, s in zip(runs, sums, strict=True)]
        values = [s["verifiability"] for s in sums]
        bars = ax.bar(labels, [v or 0.0 for v in values], color=colors[0])
        _label_bars(ax, bars, values)
        ax.plot(labels, [s["ungrounded_verdicts"] / max(1, s["n"]) for s in sums], "rx", ms=9,
                label="ungrounded verdicts (share of questions)")
        ax.set_ylim(0, 1.1)
        ax.set_ylabel("share of reasoning statements verified")
        ax.set_title("Verifiability (answers with reasoning)")
        _legend_outside(ax)
        done(fig, "verifiability.png")

    # 6. Reliability: accuracy per confidence bin against the diagonal (only when confidences were recorded).
    run_pairs = [calibration_pairs(r.records) for r in runs]
    if any(run_pairs):
        fig, ax = plt.subplots(figsize=(6.5, 5))
        edges = [i / RELIABILITY_BINS for i in range(RELIABILITY_BINS + 1)]
        ax.plot([0, 1], [0, 1], ls="--", color="gray", lw=1, label="perfect calibration")
        with_pairs = [(run, pairs) for run, pairs in zip(runs, run_pairs, strict=True) if pairs]
        width = 0.9 / RELIABILITY_BINS / len(with_pairs)
        titles = []
        for i, (run, pairs) in enumerate(with_pairs):
            bins = reliability_bins(pairs, RELIABILITY_BINS)
            pos = [(b.low + b.high) / 2 + (i - (len(with_pairs) - 1) / 2) * width for b in bins]
            ece = expected_calibration_error(pairs, RELIABILITY_BINS) or 0.0
            bars = ax.bar(pos, [b.accuracy or 0.0 for b in bins], width=width, color=colors[i % len(colors)],
                          alpha=0.8, edgecolor="black", linewidth=0.4, label=f"{run.name} (ECE {ece:.3f})")
            ax.bar_label(bars, labels=[f"n={b.n}" if b.n else "" for b in bins], fontsize=6, padding=2,
                         rotation=90 if len(with_pairs) > 1 else 0)  # side by side, level labels would overlap
            ax.plot([b.mean_confidence for b in bins if b.n], [b.accuracy for b in bins if b.n], "o",
                    color=colors[i % len(colors)], mec="black", ms=4)
            titles.append(f"{run.name} {ece:.3f}" if len(with_pairs) > 1 else f"{ece:.3f}")
        ax.set_xticks(edges)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.15)
        ax.set_xlabel("confidence (bin; dots at the bin's mean confidence)")
        ax.set_ylabel("accuracy in the bin")
        ax.set_title("Reliability — ECE " + ", ".join(titles))
        _legend_outside(ax)
        done(fig, "reliability.png")

    # 7. Latency distribution (the questions' own run time, see RunRecord.seconds).
    fig, ax = plt.subplots(figsize=(max(5, 1.5 * len(runs) + 3), 4))
    data = [[r.seconds for r in run.records] or [0.0] for run in runs]
    ax.boxplot(data, showmeans=True)
    ax.set_xticks(range(1, len(runs) + 1), names)
    ax.set_ylabel("seconds per question (own run time)")
    ax.set_title("Latency")
    done(fig, "latency.png")
    return figures
