"""`kgteam eval/report/diagnose` edge cases: retry-errors summary, clear errors instead of tracebacks,
and refusing to resume a run file made with another setup."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.eval.datasets import write_jsonl
from kgteam.eval.runner import read_meta, read_run


@pytest.fixture
def three_items(metaqa_sample, tmp_path):
    """The first three sample questions (all scripted right by ``eval_team_file``) as a dataset file."""
    path = tmp_path / "three.jsonl"
    write_jsonl(metaqa_sample[0][:3], path)
    return path


def _no_traceback(result) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "error:" in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_retry_errors_summary_counts_the_latest_record_per_id(eval_team_file, three_items, tmp_path):
    out = tmp_path / "run.jsonl"
    args = ["eval", str(three_items), "--team", str(eval_team_file), "--out", str(out), "--concurrency", "1"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    records = read_run(out)
    assert len(records) == 3 and all(r.grading.grade == "accurate" for r in records)
    # make the middle question an error record, as if it had failed
    lines = out.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[1])
    broken.update(status="error", error="RuntimeError: boom", grading={"grade": "missing", "decided_by": "rule:error"})
    lines[1] = json.dumps(broken)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")

    again = CliRunner().invoke(app, [*args, "--retry-errors"])
    assert again.exit_code == 0, again.output
    assert "done 1, skipped (resumed) 2, errors 0" in again.output
    assert [r.status for r in read_run(out)] == ["ok", "error", "ok", "ok"]  # the old error stays in the file
    assert "n=3 " in again.output and "errors=0" in again.output and "accuracy=1.000" in again.output
    # calibration and wrong-and-grounded are part of every summary
    for key in ("ece=", "wrong_at_90=", "wrong_at_90_stated=", "brier=", "wrong_grounded=", "calibrated_n="):
        assert key in again.output, key


def test_unknown_kg_is_a_clear_error(eval_kg_home, three_items):
    for cmd in (["eval", str(three_items), "--kg", "nope"], ["diagnose", str(three_items), "--kg", "nope"]):
        result = CliRunner().invoke(app, cmd)
        _no_traceback(result)
        assert "nope" in result.output


def test_corrupt_run_file_is_a_clear_error(eval_team_file, three_items, tmp_path):
    out = tmp_path / "run.jsonl"
    args = ["eval", str(three_items), "--team", str(eval_team_file), "--out", str(out), "--concurrency", "1"]
    assert CliRunner().invoke(app, args).exit_code == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][:40]  # garbage in the middle: not a torn last line
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = out.read_bytes()
    rep = CliRunner().invoke(app, ["report", str(out), "--out", str(tmp_path / "rep")])
    _no_traceback(rep)
    assert "invalid record" in rep.output
    resumed = CliRunner().invoke(app, args)
    _no_traceback(resumed)
    assert "cannot resume" in resumed.output and out.read_bytes() == before


def test_bad_limit_and_where_are_clear_errors(three_items):
    neg = CliRunner().invoke(app, ["eval", str(three_items), "--limit", "-1"])
    assert neg.exit_code == 2 and "Traceback" not in neg.output and "--limit" in neg.output
    neg = CliRunner().invoke(app, ["diagnose", str(three_items), "--kg", "x", "--limit", "-1"])
    assert neg.exit_code == 2 and "--limit" in neg.output
    bad = CliRunner().invoke(app, ["eval", str(three_items), "--where", "hops"])
    _no_traceback(bad)
    assert "TAG=VALUE" in bad.output
    empty = CliRunner().invoke(app, ["eval", str(three_items), "--where", "hops=7"])
    _no_traceback(empty)
    assert "matches --where hops=7" in empty.output and "hops" in empty.output
    zero = CliRunner().invoke(app, ["eval", str(three_items), "--limit", "0"])
    _no_traceback(zero)
    assert "no questions selected" in zero.output


def test_resume_with_another_setup_is_refused(eval_team_file, three_items, tmp_path):
    out = tmp_path / "run.jsonl"
    args = ["eval", str(three_items), "--team", str(eval_team_file), "--out", str(out), "--concurrency", "1",
            "--limit", "2"]
    assert CliRunner().invoke(app, args).exit_code == 0
    meta_before = read_meta(out)
    for change in (["--seed", "5"], ["--limit", "3"]):
        result = CliRunner().invoke(app, [*args, *change])
        _no_traceback(result)
        assert "another setup" in result.output and "--force-resume" in result.output
    assert len(read_run(out)) == 2 and read_meta(out) == meta_before  # nothing appended, metadata kept
    result = CliRunner().invoke(app, [*args, "--limit", "3", "--force-resume"])
    assert result.exit_code == 0, result.output
    meta = read_meta(out)
    assert meta["limit"] == 2 and meta["resumed"][0]["forced_differences"]  # original setup + what changed
    assert len(read_run(out)) == 3
    same = CliRunner().invoke(app, args)  # the same setup resumes as before
    assert same.exit_code == 0 and "done 0" in same.output


def test_a_missing_output_folder_is_made_and_an_unwritable_one_refused_before_the_team(eval_team_file, three_items,
                                                                                      tmp_path, monkeypatch):
    out = tmp_path / "runs" / "nested" / "local.jsonl"  # the README's line with no runs/ folder yet
    args = ["eval", str(three_items), "--team", str(eval_team_file), "--out", str(out), "--concurrency", "1"]
    made = CliRunner().invoke(app, args)
    assert made.exit_code == 0, made.output
    assert out.exists() and (tmp_path / "runs" / "nested" / "local.meta.json").exists()

    import kgteam.team_builder as builder

    def no_build(*a, **k):
        raise AssertionError("the team must not be built when the run file cannot be written")

    monkeypatch.setattr(builder, "build_team", no_build)
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x", encoding="utf-8")
    refused = CliRunner().invoke(app, [*args[:-4], "--out", str(blocked / "run.jsonl")])
    _no_traceback(refused)
    assert "cannot write" in refused.output


def test_missing_data_names_where_it_comes_from(monkeypatch, tmp_path):
    from kgteam.eval.datasets import DatasetError, default_data_dir, load_dataset

    monkeypatch.setenv("KGTEAM_DATA_DIR", str(tmp_path / "nowhere"))
    assert default_data_dir() == tmp_path / "nowhere"
    with pytest.raises(DatasetError, match="KGTEAM_DATA_DIR"):
        load_dataset("metaqa:1-hop")
    monkeypatch.delenv("KGTEAM_DATA_DIR")
    monkeypatch.chdir(tmp_path)
    import kgteam.eval.datasets as datasets

    monkeypatch.setattr(datasets, "__file__", str(tmp_path / "a" / "b" / "datasets.py"))
    assert default_data_dir() == tmp_path / "shared" / "data"  # no machine path to fall back on


def test_home_works_for_diagnose_as_for_every_command(tmp_path, monkeypatch):
    from pathlib import Path

    from kgteam.tools.loading import build_kg

    monkeypatch.delenv("KGTEAM_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))  # ~/.kgteam holds no KG
    home = tmp_path / "elsewhere"
    build_kg([Path(__file__).resolve().parents[1] / "data" / "orchard.ttl"], "orchard", home=home, progress=False,
             embed=False)
    e = "http://example.org/orchard/"
    items = tmp_path / "q.jsonl"
    items.write_text(json.dumps({"id": "1", "question": "who is the gardener of Old Elm",
                                 "answers": [{"label": "Ada Quill", "iri": e + "Ada"}],
                                 "topic_entities": [{"label": "Old Elm", "iri": e + "Elm"}]}) + "\n")
    found = CliRunner().invoke(app, ["diagnose", str(items), "--kg", "orchard", "--home", str(home)])
    assert found.exit_code == 0, found.output
    lost = CliRunner().invoke(app, ["diagnose", str(items), "--kg", "orchard"])
    _no_traceback(lost)
    assert "cannot open KG 'orchard'" in lost.output
