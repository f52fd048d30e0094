"""The shipped PG&AKV team file, model-free, on the demo MetaQA KG (which has a vector index, so the
verifier retrieves through similar_triples): the Python API and `kgteam chat`."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kgteam.cli.app import app

PGAKV = Path(__file__).resolve().parents[3] / "examples" / "teams" / "pgakv.yaml"


def test_python_api_answers_precise_and_open_ended_questions(demo_kg_home):
    from kgteam import Team

    with Team.from_yaml(PGAKV, model="none", home=demo_kg_home) as team:
        answer = team.ask("who directed Kismet")
        assert [v.label for v in answer.values] == ["William Dieterle"] and answer.grounded
        assert answer.evidence.pseudo_graph and all(t.status == "verified" for t in answer.evidence.pseudo_graph)
        # model-free, the reading's score goes through the shipped map: a probability, never the raw 0.99
        assert answer.calibration == "builtin:pgakv-none" and answer.confidence < 0.9 < answer.raw_confidence
        about = team.ask("Tell me about Kismet")
        assert about.status == "answered" and "William Dieterle [t" in about.text


def test_chat_shows_the_pseudo_graph_being_checked(demo_kg_home, tmp_path):
    result = CliRunner().invoke(app, ["chat", "--team", str(PGAKV), "--home", str(demo_kg_home), "--model", "none",
                                      "--db", str(tmp_path / "s.db"), "--new-session", "p1"],
                                input="who directed Kismet\n/quit\n")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "pseudo_graph_generator → pseudo_graph" in out and "atomic_verifier → verified_graph" in out
    assert "graph_fixer → fixed_graph" in out and "William Dieterle" in out


def test_the_documented_open_ended_ask_answers_from_the_index(demo_kg_home):
    """docs/pgakv.md's example: the demo KG has triple vectors, so the verifier reads them (it failed)."""
    result = CliRunner().invoke(app, ["ask", "--team", str(PGAKV), "--home", str(demo_kg_home), "--model", "none",
                                      "Tell me about Kismet"])
    assert result.exit_code == 0, result.output
    assert "William Dieterle" in result.output and "failed" not in result.output
