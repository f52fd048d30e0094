"""``--corpus NAME`` and the built-in movie-notes corpus: the README's adaptive example runs on a
fresh home with no file from outside the package, and ``ask --proposals`` appends stamped lines.

The home holds a KG named ``metaqa`` made of the bundled MetaQA KB's lines about the shipped
documents' films (the real demo KB, cut to 160 triples so the test is quick); the corpus is built
by the team itself on first use, from ``kgteam/data/corpora/movie-notes``."""

from __future__ import annotations

import json
import lzma
import re
import shlex
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from kgteam.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "kgteam" / "data" / "corpora" / "movie-notes"
TITLES = {p.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip() for p in SHIPPED.glob("*.md")}
ADAPTIVE = ROOT / "examples" / "teams" / "adaptive.yaml"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("corpus_flag_home")
    films = "|".join(re.escape(t) for t in TITLES)
    with lzma.open(ROOT / "kgteam" / "data" / "metaqa_kb.txt.xz", "rt", encoding="utf-8") as fh:
        lines = [line for line in fh if re.match(rf"(?:{films})\|", line)]
    kb = home / "kb.txt"
    kb.write_text("".join(lines), encoding="utf-8")
    build_kg([kb], "metaqa", home=home, format="metaqa", progress=False, embed=False)
    return home


@pytest.fixture
def in_home(home, tmp_path, monkeypatch) -> Path:
    """A fresh working folder (with ``examples/``, as in a clone) using the module's home."""
    monkeypatch.setenv("KGTEAM_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    return tmp_path


def _run(args: list[str]):
    return CliRunner().invoke(app, args, env={"COLUMNS": "200"})


def _readme_adaptive_commands() -> list[list[str]]:
    """The README's adaptive example: its shell lines from the first ``--team ...adaptive.yaml`` to ``kg add``."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("kgteam ask --team examples/teams/adaptive.yaml"))
    commands = []
    for line in lines[start:]:
        if not line.startswith("kgteam "):
            break
        commands.append(shlex.split(line.split(" #")[0])[1:])
        if commands[-1][:2] == ["kg", "add"]:
            break
    return commands


def test_corpus_overrides_the_team_file(in_home, home):
    from kgteam.tools.web import build_corpus

    build_corpus("harbour", [ROOT / "tests" / "data" / "adaptive" / "docs.jsonl"], home=home, embed=False)
    question = "Who directed The Silent Harbour?"  # only the test corpus knows this (made-up) film
    result = _run(["ask", "--team", str(ADAPTIVE), "--model", "none", "--corpus", "harbour", "--json", question])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout[result.stdout.index("{"):])
    assert [v["label"] for v in answer["values"]] == ["Greta Lindqvist"]
    assert answer["evidence"]["documents"][0]["id"].startswith("corpus:harbour:")


def test_an_unknown_corpus_is_a_clear_error_that_lists_the_known_ones(in_home):
    for command in (["ask", "--team", str(ADAPTIVE), "--model", "none", "--corpus", "nope", "who?"],
                    ["eval", "claims:metaqa:2", "--model", "none", "--corpus", "nope"],
                    ["serve", "--model", "none", "--corpus", "nope", "--port", "1"]):
        result = _run(command)
        assert result.exit_code == 2, (command, result.output)
        assert "no corpus 'nope'" in result.output and "movie-notes" in result.output, result.output
        assert "Traceback" not in result.output


def test_every_team_command_takes_corpus():
    group = typer.main.get_command(app)
    for name in ("ask", "chat", "eval", "serve"):
        assert "--corpus" in {o for p in group.commands[name].params for o in p.opts}, name


def test_proposals_are_appended_stamped_and_never_overwritten(in_home):
    out = in_home / "proposed.jsonl"
    earlier = '{"subject_label": "an earlier proposal", "predicate": "p", "object_label": "kept"}\n'
    out.write_text(earlier, encoding="utf-8")
    base = ["ask", "--team", str(ADAPTIVE), "--model", "none", "--proposals", str(out)]
    question = "Who plays Doyle in River Queen?"
    result = _run([*base, question])
    assert result.exit_code == 0 and "appended to" in result.output, result.output
    text = out.read_text(encoding="utf-8")
    assert text.startswith(earlier) and len(text) > len(earlier)  # added after what was there
    rows = [json.loads(line) for line in text.splitlines()[1:]]
    for row in rows:
        assert row["question"] == question and row["predicate"] and row["object_label"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", row["asked_at"]), row
    result = _run([*base, "who directed Casablanca"])  # the KG answers: no document, no proposal
    assert result.exit_code == 0 and "no proposed triples" in result.output, result.output
    assert out.read_text(encoding="utf-8") == text  # nothing written, nothing lost


def test_the_readme_adaptive_example_runs_on_the_shipped_documents(in_home, home):
    """Last in this file: its `kg add` line writes into the module's KG."""
    commands = _readme_adaptive_commands()
    assert len(commands) >= 2 and all("--model" in c and "none" in c for c in commands if c[0] == "ask")
    for args in commands:
        result = _run(args)
        assert result.exit_code == 0, (args, result.output)
        if args[0] == "ask":
            cited = re.findall(r"doc ([^:\n]+):", result.output)
            assert cited and set(cited) <= TITLES, result.output  # cites a document the package ships
        if "Esmeralda" in args[-1]:  # the note says Maureen O'Hara plays her (issue 40: Charles Laughton at 1.00)
            assert "│ Maureen O'Hara" in result.output and "Charles Laughton (from" not in result.output, result.output
        if args[:2] == ["kg", "add"]:  # a studio read from the note is no director: never proposed, never added
            rows = [json.loads(line) for line in (in_home / args[3]).read_text(encoding="utf-8").splitlines()]
            assert rows and not any("RKO" in (r["subject_label"], r["object_label"]) for r in rows), rows
            assert "RKO (new)" not in result.output, result.output
    assert (home / "corpora" / "movie-notes" / "manifest.json").is_file()  # built on first use
