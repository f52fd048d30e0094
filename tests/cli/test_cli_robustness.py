"""CLI failure paths and untrusted text: clear errors with the right exit code, never a traceback,
and KG labels / stored questions shown literally (not read as rich markup)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app

runner = CliRunner()

MARKUP_KB = """\
Tron [/]|directed_by|Steven Lisberger
Kismet [film]|directed_by|William Dieterle
"""


@pytest.fixture(scope="module")
def markup_home(tmp_path_factory) -> Path:
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("markuphome")
    kb = home / "kb.txt"
    kb.write_text(MARKUP_KB, encoding="utf-8")
    build_kg([kb], "mini", home=home, format="metaqa", progress=False)
    return home


@pytest.fixture
def markup_team(team_file: Path, markup_home: Path, monkeypatch) -> Path:
    monkeypatch.setenv("KGTEAM_HOME", str(markup_home))
    script = {"rules": [
        {"role": "t_linker", "match": "Tron", "reply": {"mention": "Tron [/]"}},
        {"role": "t_linker", "match": "Kismet", "reply": {"mention": "Kismet [film]"}},
    ]}
    (team_file.parent / "script.json").write_text(json.dumps(script), encoding="utf-8")
    return team_file


def test_ask_shows_kg_labels_with_brackets_literally(markup_team, tmp_path):
    db = ["--db", str(tmp_path / "s.sqlite")]
    tron = runner.invoke(app, ["ask", "who directed Tron", "--team", str(markup_team), *db])
    assert tron.exit_code == 0, tron.output
    assert "Tron [/]" in tron.output and "Steven Lisberger" in tron.output
    kismet = runner.invoke(app, ["ask", "who directed Kismet", "--team", str(markup_team), *db])
    assert kismet.exit_code == 0, kismet.output
    assert "Kismet [film]" in kismet.output  # not swallowed as a style tag


def test_chat_resume_shows_stored_question_with_markup_literally(markup_team, tmp_path):
    args = ["chat", "--team", str(markup_team), "--db", str(tmp_path / "s.sqlite"), "--session", "m1", "-q"]
    first = runner.invoke(app, [*args[:-3], "--new-session", "m1", "-q"], input="who directed Tron [/] [bold]\n/quit\n")
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, args, input="/quit\n")
    assert again.exit_code == 0, again.output
    assert "you who directed Tron [/] [bold]" in again.output
    assert "team Steven Lisberger" in again.output


def test_trace_jsonl_to_a_directory_is_a_clear_error(team_file, tmp_path):
    db = tmp_path / "s.sqlite"
    asked = runner.invoke(app, ["ask", "who directed Kismet", "--team", str(team_file), "--db", str(db),
                                "--new-session", "t1"])
    assert asked.exit_code == 0, asked.output
    result = runner.invoke(app, ["trace", "t1", "--db", str(db), "--jsonl", str(tmp_path)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"cannot write {tmp_path}" in result.output


def test_trace_jsonl_into_a_missing_folder_creates_it_as_documented(team_file, tmp_path):
    db = tmp_path / "s.sqlite"
    asked = runner.invoke(app, ["ask", "who directed Kismet", "--team", str(team_file), "--db", str(db),
                                "--new-session", "t2"])
    assert asked.exit_code == 0, asked.output
    out = tmp_path / "not" / "yet" / "run.jsonl"
    result = runner.invoke(app, ["trace", "t2", "--db", str(db), "--jsonl", str(out)])
    assert result.exit_code == 0, result.output  # docs/cli.md: "A missing parent folder is created."
    lines = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["type"] == "turn" and json.loads(result.output)["records"] == len(lines)


def test_validate_several_files_reports_each_and_fails_if_any_is_bad(team_file, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(team_file.read_text().replace("- t_answerer", "- t_answerr"))
    both = runner.invoke(app, ["validate", str(team_file), str(bad)])
    assert both.exit_code == 1
    assert f"OK {team_file}" in both.output and f"{bad}: 2 error(s)" in both.output
    good = runner.invoke(app, ["validate", str(team_file), str(team_file)])
    assert good.exit_code == 0 and good.output.count("OK ") == 2
    data = json.loads(runner.invoke(app, ["validate", str(team_file), str(bad), "--json"]).stdout)
    assert data["ok"] is False and [f["ok"] for f in data["files"]] == [True, False]


def test_validate_rejects_unknown_backend_options(team_file, tmp_path):
    labels = tmp_path / "labels"
    team_file.write_text(team_file.read_text().replace(
        "  backend: oxigraph\n  name: mini\n",
        f"  backend: sparql\n  endpoint: http://127.0.0.1:9/sparql\n  options: {{bogus: 1}}\n"
        f"  labels: {{backend: tantivy, path: {labels}}}\n"))
    result = runner.invoke(app, ["validate", str(team_file)])
    assert result.exit_code == 1
    assert "kg.options" in result.output and "'bogus'" in result.output


def test_ask_with_a_bad_yaml_script_exits_2(team_file, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules: [ {reply: x\n")
    result = runner.invoke(app, ["ask", "q", "--team", str(team_file), "--model", f"scripted:{bad}",
                                 "--db", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2, result.output
    assert "bad.yaml" in result.output and "invalid YAML" in result.output


SLEEPY_TEAM = """\
name: sleepy
model: {provider: scripted, script: script.json}
kg: {backend: oxigraph, name: mini}
roles: [t_relay, t_sleeper]
routes:
  - {kind: question, sender: user, to: t_relay}
  - {kind: question, sender: t_relay, to: t_sleeper}
"""


def test_ask_cancelled_by_one_ctrl_c_exits_130(team_file, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    team = tmp_path / "sleepy.yaml"
    team.write_text(SLEEPY_TEAM)
    support = Path(__file__).with_name("chat_sigint_support.py")
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "120"}
    proc = subprocess.Popen([sys.executable, str(support), "ask", "a slow question", "--team", str(team),
                             "--db", str(tmp_path / "s.sqlite"), "-v"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:  # wait until the run has started
            seen.append(line)
            if "t_relay → question" in line:
                break
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        out = "".join(seen) + proc.stdout.read()
        assert proc.wait(timeout=30) == 130, out
        assert time.monotonic() - started < 10
        assert "stopped by: cancelled" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ask_with_a_base_url_without_scheme_exits_2_at_once(team_file, tmp_path):
    import time

    started = time.monotonic()
    result = runner.invoke(app, ["ask", "q", "--team", str(team_file), "--model", "openai:x@notaurl",
                                 "--db", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2, result.output
    assert "invalid base_url 'notaurl'" in result.output
    assert time.monotonic() - started < 5  # not retried as a connection error
