"""A schema.org-style KG reads like an rdfs:label one in `kgteam ask`, `chat` and `sparql`;
`kgteam load --label-predicate` is remembered, and a bad one is a clear error (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app

DATA = Path(__file__).resolve().parents[1] / "data" / "names"
C = "http://example.org/campus/"
QUESTION = "Which students does Marisol Achterburg advise?"
runner = CliRunner()


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("names-cli")
    for name, file, extra in (("by_schema", "schema_name.ttl", []), ("by_rdfs", "rdfs_label.ttl", []),
                              ("by_own", "own_predicate.ttl", ["--label-predicate", f"{C}displayName"])):
        done = runner.invoke(app, ["load", str(DATA / file), "--name", name, "--home", str(home), "-q",
                                   "--no-embed", *extra])
        assert done.exit_code == 0, done.output
    return home


def _ask(home: Path, kg: str, tmp_path: Path) -> dict:
    result = runner.invoke(app, ["ask", QUESTION, "--kg", kg, "--home", str(home), "--model", "none", "--json",
                                 "--db", str(tmp_path / f"{kg}.sqlite")])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_ask_reads_a_schema_name_kg_like_an_rdfs_label_one(home, tmp_path):
    by_schema, by_rdfs, by_own = (_ask(home, kg, tmp_path) for kg in ("by_schema", "by_rdfs", "by_own"))
    assert sorted(v["label"] for v in by_schema["values"]) == ["Hana Bellweather", "Jonah Pettifer"]
    assert by_schema["confidence"] is not None
    for other in (by_rdfs, by_own):
        assert by_schema["text"] == other["text"] and by_schema["values"] == other["values"]
        assert by_schema["evidence"]["triples"] == other["evidence"]["triples"]
    plain = runner.invoke(app, ["ask", QUESTION, "--kg", "by_schema", "--home", str(home), "--model", "none",
                                "--db", str(tmp_path / "plain.sqlite")])
    assert plain.exit_code == 0 and "Jonah Pettifer" in plain.output and "s-0981" not in plain.output


def test_chat_shows_the_kgs_names(home, tmp_path):
    result = runner.invoke(app, ["chat", "--kg", "by_schema", "--home", str(home), "--model", "none",
                                 "--db", str(tmp_path / "chat.sqlite"), "--new-session", "n1"],
                           input=f"{QUESTION}\n/quit\n")
    assert result.exit_code == 0, result.output
    assert "Jonah Pettifer" in result.output and "Hana Bellweather" in result.output


def test_sparql_names_every_iri_column(home):
    q = f"SELECT ?student ?n WHERE {{ <{C}staff/4417> <{C}advises> ?student BIND(1 AS ?n) }} ORDER BY ?student"
    shown = runner.invoke(app, ["sparql", "by_schema", q, "--home", str(home)])
    assert shown.exit_code == 0, shown.output
    header = shown.output.splitlines()[0].split()
    assert header == ["student", "student", "name", "n"]  # a name column after the IRI one only
    assert "Jonah Pettifer" in shown.output and "Hana Bellweather" in shown.output
    as_json = json.loads(runner.invoke(app, ["sparql", "by_own", q, "--json", "--home", str(home)]).output)
    assert as_json["names"] == {f"{C}student/s-0981": "Jonah Pettifer", f"{C}student/s-1204": "Hana Bellweather"}


def test_label_predicate_is_remembered_and_checked(home, tmp_path):
    manifest = json.loads((home / "kgs" / "by_own" / "manifest.json").read_text())
    assert manifest["label_predicates"] == [f"{C}displayName"]
    bad = runner.invoke(app, ["load", str(DATA / "own_predicate.ttl"), "--name", "bad", "--home", str(tmp_path),
                              "-q", "--no-embed", "--label-predicate", "display name"])
    assert bad.exit_code == 1 and "not an absolute IRI" in bad.output and "Traceback" not in bad.output


def test_a_team_files_label_predicates_are_checked(tmp_path):
    team = tmp_path / "team.yaml"
    team.write_text("name: t\nmodel: {provider: none}\nkg:\n  backend: sparql\n  endpoint: http://127.0.0.1:1/query\n"
                    "  labels: {backend: tantivy, path: ./labels}\n  label_predicates: [\"display name\"]\n"
                    "playbook: triad\n")
    result = runner.invoke(app, ["validate", str(team)])
    assert result.exit_code == 1 and ":7: kg.label_predicates:" in result.output and "not an absolute IRI" in result.output
