"""Answers as CSV or JSON lines: the same rows, CSV escaped and safe to open in a spreadsheet."""

from __future__ import annotations

import asyncio
import csv
import json

import pytest

from kgteam.eval.answers_file import COLUMNS, answers_format, write_answers
from kgteam.eval.datasets import DatasetItem, GoldAnswer
from kgteam.eval.report import load_runs
from kgteam.eval.runner import run_eval
from kgteam.protocols.payloads import Answer, AnswerValue

NASTY = {
    "comma": ("Smith, John", "Paris, Texas"),
    "quote": ('the "Heat"', 'He said "yes", then left'),
    "newline": ("line one\nline two", "first\r\nsecond"),
    "formula": ("=HYPERLINK(\"http://evil\")", "+1 (555) 0100"),
    "minus": ("-5 degrees", "@SUM(A1:A9)"),
}


class Echo:
    """Answers each question with the text stored for it."""

    async def ask(self, question: str, *, session_id: str | None = None) -> Answer:
        answer = dict(NASTY.values())[question]
        return Answer(confidence=1.0, text=answer, values=[AnswerValue(label=answer), AnswerValue(label="second")])


@pytest.fixture
def run_path(tmp_path):
    items = [DatasetItem(id=key, question=q, answers=[GoldAnswer(label=a), GoldAnswer(label="x, y")])
             for key, (q, a) in NASTY.items()]
    path = tmp_path / "run.jsonl"
    asyncio.run(run_eval(items, Echo(), path, progress=False))
    return path


def _unguard(cell: str) -> str:
    return cell[1:] if cell[:2] in {"'=", "'+", "'-", "'@", "'\t", "'\r"} else cell


def test_csv_round_trips_commas_quotes_and_line_breaks(run_path, tmp_path):
    table = tmp_path / "out" / "answers.csv"
    assert write_answers(table, load_runs([run_path])) == len(NASTY)
    with table.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == COLUMNS
    by_id = {row["id"]: row for row in rows}
    for key, (question, answer) in NASTY.items():
        row = by_id[key]
        assert _unguard(row["question"]) == question
        assert _unguard(row["answer"]) == answer
        assert _unguard(row["gold"]) == f"{answer} | x, y"
        assert _unguard(row["answer_values"]) == f"{answer} | second"
        assert row["llm_calls"] == "0" and row["grounded_claimed"] == "false"


def test_csv_cells_that_a_spreadsheet_would_run_start_with_a_quote(run_path, tmp_path):
    table = tmp_path / "answers.csv"
    write_answers(table, load_runs([run_path]))
    with table.open(newline="", encoding="utf-8") as fh:
        cells = [cell for row in csv.reader(fh) for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@")]
    assert "'=HYPERLINK(\"http://evil\")" in cells and "'+1 (555) 0100" in cells and "'-5 degrees" in cells
    assert "Smith, John" in cells  # ordinary text is left alone


def test_jsonl_has_the_same_rows_unescaped(run_path, tmp_path):
    table = tmp_path / "answers.jsonl"
    write_answers(table, load_runs([run_path]))
    rows = [json.loads(line) for line in table.read_text(encoding="utf-8").splitlines()]
    assert [tuple(r) for r in rows] == [COLUMNS] * len(NASTY)
    by_id = {r["id"]: r for r in rows}
    assert by_id["formula"]["question"] == NASTY["formula"][0]  # no guard: JSON is not run
    assert by_id["comma"]["gold"] == ["Paris, Texas", "x, y"]


def test_the_suffix_picks_the_format_and_others_are_refused(tmp_path):
    assert answers_format(tmp_path / "a.CSV") == "csv" and answers_format(tmp_path / "a.jsonl") == "jsonl"
    with pytest.raises(ValueError, match=r"\.csv or \.jsonl"):
        answers_format(tmp_path / "a.json")
