"""``kgteam sparql`` and ``kgteam --version``: look inside a KG read-only, with clear errors."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kgteam import __version__
from kgteam.cli.app import app

TTL = Path(__file__).resolve().parents[1] / "data" / "orchard.ttl"
E = "http://example.org/orchard/"


def test_version():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"kgteam {__version__}"


def test_sparql_reads_and_refuses_writes(tmp_path):
    from kgteam.tools.loading import build_kg

    build_kg([TTL], "orchard", home=tmp_path, progress=False, embed=False)
    home = ["--home", str(tmp_path)]
    runner = CliRunner()
    q = f"SELECT ?t WHERE {{ ?t <{E}tendedBy> <{E}Ada> }} ORDER BY ?t"
    shown = runner.invoke(app, ["sparql", "orchard", q, *home])
    assert shown.exit_code == 0, shown.output
    assert f"{E}Ash" in shown.output and f"{E}Elm" in shown.output and "2 rows" in shown.output
    as_json = json.loads(runner.invoke(app, ["sparql", "orchard", q, "--json", *home]).output)
    assert [r["t"]["value"] for r in as_json["rows"]] == [E + "Ash", E + "Elm"]
    asked = runner.invoke(app, ["sparql", "orchard", f"ASK {{ <{E}Oak> <{E}tendedBy> <{E}Bo> }}", *home])
    assert asked.output.strip() == "true"
    refused = runner.invoke(app, ["sparql", "orchard", "DELETE WHERE { ?s ?p ?o }", *home])
    assert refused.exit_code == 2 and "read-only" in refused.output and "Traceback" not in refused.output
    still = json.loads(runner.invoke(app, ["sparql", "orchard", q, "--json", *home]).output)
    assert len(still["rows"]) == 2  # nothing was deleted
    missing = runner.invoke(app, ["sparql", "nope", "ASK {}", *home])
    assert missing.exit_code == 1 and "cannot open KG 'nope'" in missing.output
