"""Open-ended evaluation: ROUGE-L through rouge-score, factual precision against the KG, and the
PG&AKV team on the hand-written open-ended set over its own small KG (model-free)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.config import registry
from kgteam.eval.open_ended import factual_precision, rouge_l
from kgteam.protocols.evidence import EvidenceTriple

ROOT = Path(__file__).resolve().parents[2]
HARBOURS = ROOT / "tests" / "data" / "kgs" / "harbours" / "harbours.ttl"
SET = ROOT / "tests" / "data" / "open_ended"
PGAKV = ROOT / "examples" / "teams" / "pgakv.yaml"
H = "http://example.org/harbours/"


@pytest.fixture(scope="module")
def harbours_home(tmp_path_factory):
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("harbours_home")
    build_kg([HARBOURS], "harbours", home=home, progress=False)
    return home


@pytest.fixture
def harbours_tools(harbours_home):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(open_kg("harbours", home=harbours_home), embedder=None)
    yield tools
    tools.close()


def test_rouge_l_is_the_lcs_f_measure_without_citations():
    # LCS "tracker directed by ian sharp" = 5 tokens: P = 5/5, R = 5/6, F = 10/11
    assert rouge_l("Tracker directed by Ian Sharp [t0].", "Tracker was directed by Ian Sharp.") == pytest.approx(10 / 11)
    assert rouge_l("Saltmere.", "Tracker was directed by Ian Sharp.") == 0.0


async def test_factual_precision_counts_sentences_whose_cited_triples_exist_and_are_named(harbours_tools):
    real = EvidenceTriple(subject=H + "GreyFinLight", predicate=H + "keptBy", object=H + "OdaMarsh")
    fake = EvidenceTriple(subject=H + "GreyFinLight", predicate=H + "keptBy", object=H + "IvoRenn")
    answer = ("Grey Fin Light is kept by Oda Marsh [t0]. Grey Fin Light is kept by Ivo Renn [t1]. "
              "It is the oldest light on the coast. Grey Fin Light has a keeper [t0].")
    assert await factual_precision(answer, [real, fake], harbours_tools) == (1, 4)


def test_the_open_ended_set_has_references_on_both_kgs():
    rows = [json.loads(line) for f in sorted(SET.glob("*.jsonl")) for line in f.read_text().splitlines()]
    assert len(rows) >= 15 and {r["kg"] for r in rows} == {"metaqa", "harbours"}
    assert all(r["question"] and r["reference"] for r in rows)


def test_pgakv_team_on_the_harbours_set_is_factually_precise(harbours_home, tmp_path, monkeypatch):
    for group, name, target in (("playbooks", "pgakv", "kgteam.roles.pgakv:PLAYBOOK"),
                                ("roles", "pseudo_graph_generator", "kgteam.roles.pgakv.generator:PseudoGraphGenerator"),
                                ("roles", "atomic_verifier", "kgteam.roles.pgakv.verifier:AtomicVerifier"),
                                ("roles", "graph_fixer", "kgteam.roles.pgakv.fixer:GraphFixer"),
                                ("roles", "answer_writer", "kgteam.roles.pgakv.answer_writer:AnswerWriter")):
        if name not in registry.entry_table(group):  # before the editable install is refreshed
            monkeypatch.setitem(registry.entry_table(group), name, registry.Entry(group, name, target, "tests"))
    out = tmp_path / "run.jsonl"
    result = CliRunner().invoke(app, ["eval", str(SET / "harbours.jsonl"), "--team", str(PGAKV), "--kg", "harbours",
                                      "--home", str(harbours_home), "--model", "none", "--concurrency", "1",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    scores = [r["open_ended"] for r in records]
    assert len(scores) == 9 and all(s is not None for s in scores)
    assert all(s["factual_precision"] == 1.0 for s in scores), [r["answer_text"] for r in records]
    assert sum(s["rouge_l"] for s in scores) / 9 > 0.3
    assert "rouge_l=" in result.output and "factual_precision=" in result.output
