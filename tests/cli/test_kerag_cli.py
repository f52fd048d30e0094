"""The shipped KERAG team file through `kgteam ask` and `kgteam chat` (model-free): the plan is
shown hop by hop as it is built, then the answer with its cited triples."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kgteam.cli.app import app

KERAG = Path(__file__).resolve().parents[2] / "examples" / "teams" / "kerag.yaml"


def test_kerag_team_answers_with_reasoning_in_ask(kg_home, tmp_path):
    result = CliRunner().invoke(app, ["ask", "which films did Joel Zwick direct", "--team", str(KERAG), "--kg",
                                      "mini", "--home", str(kg_home), "--model", "none", "--json",
                                      "--db", str(tmp_path / "s.db")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert sorted(v["label"] for v in data["values"]) == ["Fat Albert", "My Big Fat Greek Wedding"]
    assert data["grounded"] and data["cost"]["llm_calls"] == 0
    assert data["evidence"]["reasoning"] and "t0" in " ".join(data["evidence"]["reasoning"])


def test_kerag_chat_shows_the_plan_as_it_is_built(kg_home, tmp_path):
    result = CliRunner().invoke(app, ["chat", "--team", str(KERAG), "--kg", "mini", "--home", str(kg_home),
                                      "--model", "none", "--db", str(tmp_path / "s.db"), "--new-session", "p1"],
                                input="who directed Kismet\n/quit\n")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "planner → retrieval_plan" in out and "candidate relations around Kismet" in out
    assert "schema_filter → retrieval_plan" in out and "hop 1: kept" in out and "directed by" in out
    assert "retriever → subgraph" in out and "William Dieterle" in out
    assert "reasoning:" in out
