"""Answers of one or several runs as one flat table, written as CSV or JSON lines.

The run file keeps everything (evidence, grading details) for kgteam; this is the file for a
spreadsheet or another tool: one row per question (the latest record per id), the same columns in
both formats. ``confidence``, ``guess`` (an abstention's best candidate), ``guess_correct`` and the
answer's ``reading`` (in words) and ``sparql`` (the queries it ran) are there so calibration can be
measured from the file. The file's suffix picks the format (``.csv`` or ``.jsonl``), one rule for every
command that writes answers.

CSV cells that a spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return) get a leading ``'``, so a question or answer from a dataset or a
model cannot become a formula on the reader's machine.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgteam.eval.report import LoadedRun

FORMATS = {".csv": "csv", ".jsonl": "jsonl"}
COLUMNS = ("run", "id", "question", "gold", "answer", "answer_values", "answer_status", "confidence", "raw_confidence", "guess",
           "guess_correct", "reading", "sparql", "grade", "decided_by", "stopped_by", "route", "grounded_claimed",
           "grounded_checked", "llm_calls", "tokens", "seconds", "queued_seconds", "error")
LIST_SEPARATOR = " | "  # several gold answers or answer values in one CSV cell
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def answers_format(path: Path) -> str:
    """``csv`` or ``jsonl`` from the file's suffix; ValueError for any other."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"{path}: an answers file ends in .csv or .jsonl (the suffix picks the format)")
    return fmt


def answer_rows(runs: Sequence[LoadedRun]) -> list[dict[str, Any]]:
    """One row per question and run, in run-file order."""
    rows = []
    for run in runs:
        for r in run.records:
            rows.append({
                "run": run.name, "id": r.id, "question": r.question, "gold": [g.display() for g in r.gold],
                "answer": r.answer_text, "answer_values": [v.label for v in r.answer_values],
                "answer_status": r.answer_status if r.status == "ok" else "error",
                "confidence": r.confidence, "raw_confidence": r.raw_confidence, "guess": [v.label for v in r.guess], "guess_correct": r.guess_correct,
                "reading": r.reading, "sparql": r.sparql,
                "grade": r.grading.grade if r.grading else None,
                "decided_by": r.grading.decided_by if r.grading else None,
                "stopped_by": r.stopped_by, "route": r.route, "grounded_claimed": r.answer_grounded,
                "grounded_checked": r.groundedness.grounded if r.groundedness else None,
                "llm_calls": r.llm_calls, "tokens": r.tokens, "seconds": r.seconds,
                "queued_seconds": r.queued_seconds, "error": r.error,
            })
    return rows


def csv_cell(value: Any) -> str | int | float:
    """A CSV cell: lists joined, None empty, booleans true/false, formula starts neutralised."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return value
    text = LIST_SEPARATOR.join(str(v) for v in value) if isinstance(value, list) else str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def write_answers(path: Path, runs: Sequence[LoadedRun]) -> int:
    """Writes the answers table to ``path`` (format from its suffix, atomically); returns the rows."""
    fmt = answers_format(path)
    rows = answer_rows(runs)
    folder = path.parent if str(path.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            if fmt == "csv":
                writer = csv.writer(out)  # quotes cells with commas, quotes or line breaks
                writer.writerow(COLUMNS)
                writer.writerows([csv_cell(row[c]) for c in COLUMNS] for row in rows)
            else:
                out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(rows)
