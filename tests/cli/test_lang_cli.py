"""`--lang`: names in the language a person asks for, relations included (a Wikidata-shaped KG's
property entities name them in several languages); `load --lang` is remembered; a bad tag is a
clear error, exit 2 (issue 39)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kgteam.cli.app import app

KG = Path(__file__).resolve().parents[1] / "data" / "kgs" / "wikilite" / "wikilite.ttl"
runner = CliRunner()


def _ask(home: Path, db: Path, *extra: str) -> dict:
    result = runner.invoke(app, ["ask", "What is the capital of Norvania?", "--kg", "wikilite", "--home", str(home),
                                 "--model", "none", "--json", "--db", str(db), *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_lang_names_entities_and_relations_in_that_language(tmp_path: Path) -> None:
    done = runner.invoke(app, ["load", str(KG), "--name", "wikilite", "--home", str(tmp_path), "-q", "--no-embed"])
    assert done.exit_code == 0, done.output
    english = _ask(tmp_path, tmp_path / "en.sqlite")
    assert [t["predicate_label"] for t in english["evidence"]["triples"]] == ["capital"]
    german = _ask(tmp_path, tmp_path / "de.sqlite", "--lang", "de")
    assert [v["label"] for v in german["values"]] == ["Oslen"]
    assert [(t["subject_label"], t["predicate_label"]) for t in german["evidence"]["triples"]] == [
        ("Norwanien", "Hauptstadt")]


def test_load_lang_is_remembered_and_a_bad_tag_is_refused(tmp_path: Path) -> None:
    done = runner.invoke(app, ["load", str(KG), "--name", "wikilite", "--home", str(tmp_path), "-q", "--no-embed",
                               "--lang", "de"])
    assert done.exit_code == 0, done.output
    manifest = json.loads((tmp_path / "kgs" / "wikilite" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["lang"] == "de"
    said = _ask(tmp_path, tmp_path / "m.sqlite")
    assert said["evidence"]["triples"][0]["subject_label"] == "Norwanien"
    bad = runner.invoke(app, ["ask", "What?", "--kg", "wikilite", "--home", str(tmp_path), "--model", "none",
                              "--lang", "de; drop", "--db", str(tmp_path / "b.sqlite")])
    assert bad.exit_code == 2 and "not a language tag" in bad.output
    bad = runner.invoke(app, ["load", str(KG), "--name", "x", "--home", str(tmp_path), "-q", "--lang", "??"])
    assert bad.exit_code != 0 and "not a language tag" in bad.output and "Traceback" not in bad.output
