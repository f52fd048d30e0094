"""``kgteam corpus add|list|rm``: what a person sees, and no traceback on bad input."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kgteam.cli.app import app

DOCS = Path(__file__).resolve().parents[1] / "data" / "web" / "docs"


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_add_list_and_remove(tmp_path: Path):
    home = str(tmp_path)
    added = run("corpus", "add", "notes", str(DOCS / "places.jsonl"), str(DOCS / "recipes.csv"), "--text-column",
                "body", "--title-column", "dish", "--url-column", "link", "--chunk-chars", "300", "--overlap", "50",
                "--home", home, "-q")
    assert added.exit_code == 0, added.output
    assert "corpus 'notes' ready at" in added.output and "5 documents" in added.output
    assert "dense index wordllama" in added.output
    listed = run("corpus", "list", "--home", home, "--json")
    [manifest] = json.loads(listed.output)
    assert (manifest["name"], manifest["documents"], manifest["chunk_chars"], manifest["overlap"]) == (
        "notes", 5, 300, 50)
    table = run("corpus", "list", "--home", home)
    assert "notes" in table.output and "places.jsonl, recipes.csv" in table.output
    removed = run("corpus", "rm", "notes", "--home", home)
    assert removed.exit_code == 0 and "corpus 'notes' removed" in removed.output
    assert "no corpora in" in run("corpus", "list", "--home", home).output


def test_the_progress_bar_names_each_phase(tmp_path: Path):
    result = CliRunner().invoke(app, ["corpus", "add", "bees", str(DOCS / "beekeeping.txt"), "--home",
                                      str(tmp_path)])
    assert result.exit_code == 0, result.output
    for phase in ("reading files", "BM25 index", "embedding chunks"):
        assert f"bees: {phase}" in result.output


def test_no_embed_builds_bm25_only(tmp_path: Path):
    result = run("corpus", "add", "bees", str(DOCS / "beekeeping.txt"), "--no-embed", "--home", str(tmp_path), "-q")
    assert result.exit_code == 0 and "no dense index (BM25 only)" in result.output


def test_bad_input_is_one_error_line_and_leaves_the_old_corpus(tmp_path: Path):
    home = str(tmp_path)
    assert run("corpus", "add", "c", str(DOCS / "beekeeping.txt"), "--home", home, "-q", "--no-embed").exit_code == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    for args, message in (
        ([str(bad)], "bad.jsonl:1: not JSON"),
        ([str(DOCS / "beekeeping.txt"), "--chunk-chars", "10"], "chunk size must be between 100 and 1500"),
        ([str(tmp_path / "missing.md")], "missing.md: no such file"),
        ([str(DOCS / "recipes.csv"), "--text-column", "nope"], "no column 'nope' (--text-column)"),
    ):
        result = run("corpus", "add", "c", *args, "--home", home, "-q")
        assert result.exit_code == 1, result.output
        assert result.output.startswith("error: ")
        assert message in result.output and "Traceback" not in result.output
    [manifest] = json.loads(run("corpus", "list", "--home", home, "--json").output)
    assert manifest["sources"][0]["path"].endswith("beekeeping.txt")


def test_removing_or_naming_badly_is_an_error(tmp_path: Path):
    gone = run("corpus", "rm", "nope", "--home", str(tmp_path))
    assert gone.exit_code == 1 and "no corpus 'nope'" in gone.output
    bad = run("corpus", "add", "../up", str(DOCS / "beekeeping.txt"), "--home", str(tmp_path))
    assert bad.exit_code == 1 and "invalid corpus name" in bad.output
