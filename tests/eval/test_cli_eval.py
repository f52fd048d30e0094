"""`kgteam eval` end to end on a 20-question MetaQA sample: real TeamRunner, real KG, scripted model."""

from __future__ import annotations

import csv
import json

from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.eval.runner import read_run


def test_eval_end_to_end_then_report(eval_team_file, metaqa_sample, data_dir, tmp_path):
    out = tmp_path / "run.jsonl"
    args = ["eval", "metaqa-consistent:1-hop", "--team", str(eval_team_file), "--limit", "20", "--seed", "3",
            "--concurrency", "3", "--out", str(out), "--data-dir", str(data_dir)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    records = read_run(out)
    assert sorted(r.id for r in records) == sorted(it.id for it in metaqa_sample[0])
    grades = [r.grading.grade for r in records]
    assert grades.count("accurate") == 14  # scripted with the gold relation
    # 3 scripted abstentions are missing; 3 wrong relations give a wrong answer or nothing at all
    assert grades.count("missing") >= 3 and grades.count("hallucinated") >= 1
    assert grades.count("missing") + grades.count("hallucinated") == 6
    accurate = [r for r in records if r.grading.grade == "accurate"]
    assert all(r.llm_calls == 2 and r.tokens > 0 for r in records if r.status == "ok")
    assert all(r.groundedness and r.groundedness.grounded for r in accurate)  # evidence checked against the KG
    assert json.loads(out.with_suffix(".meta.json").read_text())["dataset"] == "metaqa-consistent:1-hop"

    # resuming a finished run redoes nothing
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "done 0, skipped (resumed) 20" in again.output
    assert len(read_run(out)) == 20

    report_dir = tmp_path / "report"
    rep = CliRunner().invoke(app, ["report", str(out), "--out", str(report_dir)])
    assert rep.exit_code == 0, rep.output
    md = (report_dir / "report.md").read_text(encoding="utf-8")
    assert "## Cost per question" in md and "| run | 2.00 | 2 |" in md  # LLM calls per question: mean, max
    assert "LLM calls/q" in md and "## By question type" in md

    # the answers as CSV, one row per question, equal to the run file
    table = tmp_path / "answers.csv"
    rep = CliRunner().invoke(app, ["report", str(out), "--out", str(report_dir), "--answers", str(table)])
    assert rep.exit_code == 0, rep.output
    with table.open(newline="", encoding="utf-8") as fh:
        rows = {row["id"]: row for row in csv.DictReader(fh)}
    assert rows.keys() == {r.id for r in records}
    for r in records:
        assert (rows[r.id]["question"], rows[r.id]["grade"]) == (r.question, r.grading.grade)
        assert rows[r.id]["gold"] == " | ".join(g.display() for g in r.gold)


def test_eval_triad_team_end_to_end(triad_team_file, metaqa_sample, data_dir, tmp_path):
    """The built-in Triad playbook through `kgteam eval`: scripted model whose replies never validate,
    so every decision is a recorded deterministic fallback; the KG still answers 1-hop questions."""
    out = tmp_path / "triad.jsonl"
    result = CliRunner().invoke(app, ["eval", "metaqa-consistent:1-hop", "--team", str(triad_team_file), "--limit",
                                      "20", "--seed", "3", "--out", str(out), "--data-dir", str(data_dir),
                                      "--report", str(tmp_path / "report"), "--answers",
                                      str(tmp_path / "answers.jsonl")])
    assert result.exit_code == 0, result.output
    records = read_run(out)
    assert len(records) == 20 and all(r.status == "ok" for r in records)
    rows = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(row["id"], row["answer"], row["stopped_by"]) for row in rows] == [
        (r.id, r.answer_text, r.stopped_by) for r in records]
    assert all(r.llm_calls >= 2 and r.fallbacks for r in records)  # the model was asked, the fallbacks decided
    accurate = [r for r in records if r.grading.grade == "accurate"]
    assert len(accurate) >= 12, [(r.question, r.answer_text) for r in records if r.grading.grade != "accurate"]
    assert all(r.groundedness.grounded for r in accurate)
    md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "## Cost per question" in md and (tmp_path / "report" / "cost.png").stat().st_size > 8_000


def test_eval_rejects_bad_team_and_model_override_clearly(triad_team_file, data_dir, tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text(triad_team_file.read_text(encoding="utf-8") + "\nbudgets:\n  max_retries: lots\n",
                      encoding="utf-8")
    args = ["eval", "metaqa-consistent:1-hop", "--limit", "2", "--data-dir", str(data_dir),
            "--out", str(tmp_path / "r.jsonl")]
    result = CliRunner().invoke(app, [*args, "--team", str(broken)])
    assert result.exit_code == 2
    assert f"{broken}:" in result.output and "budgets" in result.output
    missing = tmp_path / "no-such-script.yaml"
    result = CliRunner().invoke(app, [*args, "--team", str(triad_team_file), "--model", f"scripted:{missing}"])
    assert result.exit_code == 2 and "does not exist" in result.output
    assert not (tmp_path / "r.jsonl").exists()  # nothing half-written when the team cannot run
    result = CliRunner().invoke(app, [*args, "--team", str(triad_team_file), "--answers", str(tmp_path / "a.xlsx")])
    assert result.exit_code == 2 and "ends in .csv or .jsonl" in result.output
    assert not (tmp_path / "r.jsonl").exists()  # refused before anything ran


def test_eval_kerag_team_model_free(metaqa_sample, eval_kg_home, data_dir, tmp_path):
    """The shipped KERAG team file through `kgteam eval` with `--model none` (no model, no server)."""
    from pathlib import Path

    team = Path(__file__).resolve().parents[2] / "examples" / "teams" / "kerag.yaml"
    out = tmp_path / "kerag.jsonl"
    result = CliRunner().invoke(app, ["eval", "metaqa-consistent:1-hop", "--team", str(team), "--kg", "evalmeta",
                                      "--model", "none", "--limit", "10", "--seed", "3", "--out", str(out),
                                      "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    records = read_run(out)
    assert len(records) == 10 and all(r.status == "ok" and r.llm_calls == 0 for r in records)
    accurate = [r for r in records if r.grading.grade == "accurate"]
    assert len(accurate) >= 6, [(r.question, r.answer_text) for r in records]
    assert all(r.groundedness.grounded for r in accurate)
