"""``kgteam load`` and ``kgteam kgs``: success, file:line errors without tracebacks, interrupts, --demo."""

from __future__ import annotations

import json
import lzma
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app

DATA = Path(__file__).resolve().parents[1] / "data" / "load"
runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_load_builds_a_kg_and_kgs_lists_it(tmp_path):
    home = str(tmp_path / "home")
    result = invoke("load", str(DATA / "metaqa_small.txt"), "--name", "mini", "--home", home, "--quiet")
    assert result.exit_code == 0, result.output
    assert "KG 'mini' ready" in result.output and "10 triples" in result.output
    assert (tmp_path / "home" / "kgs" / "mini" / "manifest.json").is_file()
    result = invoke("load", str(DATA / "wc_small.tsv"), "--name", "wc", "--home", home, "-q")
    assert result.exit_code == 0, result.output
    listing = invoke("kgs", "--home", home)
    assert listing.exit_code == 0
    assert "mini" in listing.output and "wc" in listing.output and "metaqa_small.txt" in listing.output
    as_json = json.loads(invoke("kgs", "--home", home, "--json").output)
    assert [(m["name"], m["counts"]["facts"]) for m in as_json] == [("mini", 10), ("wc", 5)]


def test_load_with_format_override_base_iri_and_label_files(tmp_path):
    home = str(tmp_path / "home")
    renamed = tmp_path / "triples.dat"
    renamed.write_bytes((DATA / "fb_small.tsv").read_bytes())
    result = invoke("load", str(renamed), "--name", "fb", "--home", home, "-q", "--format", "tsv",
                    "--base-iri", "http://kg.test/fb/", "--labels", str(DATA / "fb_entities.tsv"),
                    "--relation-labels", str(DATA / "fb_relations.tsv"))
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "home" / "kgs" / "fb" / "manifest.json").read_text())
    assert manifest["base_iri"] == "http://kg.test/fb/" and manifest["format"] == "tsv"
    assert manifest["entity_labels"]["records"] == 3 and manifest["relation_labels"]["records"] == 1


def test_bad_input_prints_file_line_problem_and_keeps_the_previous_kg(tmp_path):
    home = str(tmp_path / "home")
    assert invoke("load", str(DATA / "metaqa_small.txt"), "--name", "kg", "--home", home, "-q").exit_code == 0
    result = runner.invoke(app, ["load", str(DATA / "metaqa_bad.txt"), "--name", "kg", "--home", home, "-q"])
    assert result.exit_code == 1
    assert f"{DATA / 'metaqa_bad.txt'}:3: expected 'subject|relation|object'" in result.output
    assert "Traceback" not in result.output
    manifest = json.loads((tmp_path / "home" / "kgs" / "kg" / "manifest.json").read_text())
    assert manifest["counts"]["facts"] == 10


@pytest.mark.parametrize(
    "args,code,message",
    [
        (["load", "--name", "x"], 2, "give input files"),
        (["load", str(DATA / "small.nt")], 2, "--name is required"),
        (["load", "missing.nt", "--name", "x"], 1, "missing.nt: no such file"),
        (["load", str(DATA / "small.nt"), "--name", "x", "--format", "jsonld"], 1, "unknown format 'jsonld'"),
        (["load", str(DATA / "bad.ttl"), "--name", "x"], 1, "bad.ttl:4:"),
        (["load", str(DATA / "small.nt"), "--name", "../x"], 1, "invalid KG name"),
        (["load", str(DATA / "small.nt"), "--demo"], 1, "--demo takes no input files"),
    ],
)
def test_errors_exit_non_zero_without_traceback(tmp_path, args, code, message):
    result = runner.invoke(app, [*args, "--home", str(tmp_path / "home"), "-q"])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_kgs_with_no_kgs_says_how_to_make_one(tmp_path):
    result = invoke("kgs", "--home", str(tmp_path / "empty"))
    assert result.exit_code == 0 and "kgteam load" in result.output


def test_load_demo_installs_the_bundled_kb_as_metaqa(tmp_path, monkeypatch):
    # The real bundled KB is loaded once by tests/tools/test_kg_dir.py; here a small KB in the same
    # (xz-compressed MetaQA) form stands in for it, so only the command's wiring is new.
    small = tmp_path / "metaqa_kb.txt.xz"
    small.write_bytes(lzma.compress((DATA / "metaqa_small.txt").read_bytes()))
    monkeypatch.setattr("kgteam.tools.kg.demo_kb_path", lambda: small)
    result = invoke("load", "--demo", "--home", str(tmp_path / "home"), "-q")
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "home" / "kgs" / "metaqa" / "manifest.json").read_text())
    assert manifest["format"] == "metaqa" and manifest["base_iri"] == "http://example.org/metaqa/"


def test_sigterm_during_load_exits_cleanly_and_keeps_the_previous_kg(tmp_path):
    home = tmp_path / "home"
    assert invoke("load", str(DATA / "metaqa_small.txt"), "--name", "kg", "--home", str(home), "-q").exit_code == 0
    big = tmp_path / "big.txt"
    big.write_text("".join(f"Film {i % 1000}|directed_by|Person {i // 1000}\n" for i in range(600_000)),
                   encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-c", "from kgteam.cli.app import main; main()", "load", str(big), "--name", "kg",
         "--home", str(home), "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.startswith(".tmp+kg+") for p in (home / "kgs").iterdir()):
            assert proc.poll() is None and time.monotonic() < deadline, "load finished before it could be stopped"
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted; KG 'kg' was left as it was" in err and "Traceback" not in err
    assert sorted(p.name for p in (home / "kgs").iterdir() if p.name.startswith((".tmp", ".old"))) == []
    manifest = json.loads((home / "kgs" / "kg" / "manifest.json").read_text())
    assert manifest["counts"]["facts"] == 10
