"""A confidence that went through the KG's own map (fitted on its examples) says so on the answer,
and the playbook's shipped map is not applied on top; every other confidence keeps the shipped map.

The atelier KG gets a reader that learned nothing (the hand scorer's paths and scores) but carries a
Platt map: the answers differ from the bank-less ones only in how their confidence was mapped.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from kgteam.cli.render import answer_renderable
from kgteam.config.defaults import default_team_spec, with_overrides
from kgteam.config.loader import load_team
from kgteam.protocols.calibration import resolve_calibration
from kgteam.protocols.payloads import (
    KG_MAP_CEILING,
    RankedPath,
    kg_map_name,
    path_belief,
    path_confidence,
    platt,
)
from kgteam.roles.semantic.reader import TrainedReader
from kgteam.team_builder import open_team
from kgteam.tools.example_bank import READER_FILE, write_json

KERAG = Path(__file__).resolve().parents[2] / "examples" / "teams" / "kerag.yaml"
MAP = (0.4, -0.5)  # a map that moves every confidence, below the ceiling (the shipped one would give other numbers)
CHAIN = "Who founded Northgate Letterpress?"
JOIN = "Which maker has a bench at Greywater Pottery and is a native of Ostrand?"


@pytest.fixture(scope="module")
def taught_home(atelier_home, tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("taught")
    shutil.copytree(atelier_home / "kgs" / "atelier", home / "kgs" / "atelier")
    write_json(TrainedReader({}, calibration=MAP).to_json(), home / "kgs" / "atelier" / READER_FILE)
    return home


def _ask(home: Path, question: str, playbook: str = "triad"):
    base = load_team(KERAG, check_installed=False) if playbook == "kerag" else default_team_spec()
    spec = with_overrides(base, kg="atelier", model="none")
    with open_team(spec, home=home) as runner:
        return asyncio.run(runner.ask(question))


def test_a_path_confidence_says_whether_the_kgs_map_made_it():
    path = RankedPath(entity="e", mention="m", steps=[], score=1.0, support=0.15, answers=[{"value": "a"}])
    rival = path.model_copy(update={"entity": "f", "score": 0.9, "answers": [{"value": "b"}]})
    assert path_belief(path, [path, rival]) == (path_confidence(path, [path, rival]), None)  # no map: nothing claimed
    mapped = path.model_copy(update={"calibration": MAP, "calibration_name": kg_map_name("atelier")})
    value, kg_map = path_belief(mapped, [mapped, rival])
    assert kg_map is not None and kg_map.name == "examples of KG 'atelier'"
    assert kg_map.raw == path_confidence(path, [path, rival])
    assert value == pytest.approx(platt(kg_map.raw, MAP), abs=1e-3) and value != kg_map.raw


@pytest.mark.parametrize("playbook", ["triad", "kerag"])
def test_a_chain_answer_carries_the_kgs_map_and_is_mapped_once(atelier_home, taught_home, playbook):
    shipped = resolve_calibration("auto", playbook=playbook, model="none")
    plain = _ask(atelier_home, CHAIN, playbook)
    taught = _ask(taught_home, CHAIN, playbook)
    assert plain.text == taught.text == "Maren Holt"
    assert plain.calibration == shipped.name  # no bank: the shipped map, as before
    assert taught.calibration == "examples of KG 'atelier'"
    assert taught.raw_confidence == plain.raw_confidence  # the same score (the reader learned nothing) ...
    assert taught.confidence == pytest.approx(platt(taught.raw_confidence, MAP), abs=1e-3)  # ... through one map
    assert taught.confidence != pytest.approx(shipped.calibrate(taught.confidence), abs=1e-3)
    said = " ".join(str(r) for r in answer_renderable(taught).renderable.renderables)
    assert f"calibrated by examples of KG 'atelier'; score {taught.raw_confidence:.2f}" in said


def test_a_join_never_passes_the_kgs_map_and_keeps_the_shipped_one(taught_home):
    shipped = resolve_calibration("auto", playbook="triad", model="none")
    joined = _ask(taught_home, JOIN)
    assert joined.text == "Caspar Wren"
    assert joined.calibration == shipped.name
    assert joined.confidence == pytest.approx(shipped.calibrate(joined.raw_confidence), abs=1e-4)


def test_the_kgs_map_never_says_more_than_its_ceiling(atelier_home, tmp_path):
    """A map steep enough to say 0.99 is held at the ceiling: a few hundred held-out examples cannot
    vouch for "sure", and a wrong answer at 0.9 or more is a defect."""
    shutil.copytree(atelier_home / "kgs" / "atelier", tmp_path / "kgs" / "atelier")
    steep = (3.0, 4.0)
    write_json(TrainedReader({}, calibration=steep).to_json(), tmp_path / "kgs" / "atelier" / READER_FILE)
    taught = _ask(tmp_path, CHAIN)
    assert taught.text == "Maren Holt" and taught.calibration == "examples of KG 'atelier'"
    assert platt(taught.raw_confidence, steep) > 0.95  # what the map alone would have said
    assert taught.confidence == KG_MAP_CEILING


JOIN_MAP = (1.0, 3.0)  # a map fitted on joins that were all right: lifts a join's confidence


def test_a_join_passes_the_kgs_join_map_when_the_bank_recorded_joins(atelier_home, tmp_path):
    shipped = resolve_calibration("auto", playbook="triad", model="none")
    shutil.copytree(atelier_home / "kgs" / "atelier", tmp_path / "kgs" / "atelier")
    write_json(TrainedReader({}, calibration=MAP, join_calibration=JOIN_MAP, kg="atelier").to_json(),
               tmp_path / "kgs" / "atelier" / READER_FILE)
    plain = _ask(atelier_home, JOIN)
    joined = _ask(tmp_path, JOIN)
    assert joined.text == plain.text == "Caspar Wren"
    assert plain.calibration == shipped.name
    assert joined.calibration == "examples of KG 'atelier', joins"
    assert joined.raw_confidence == plain.raw_confidence  # the same join, read the same way ...
    assert joined.confidence == pytest.approx(min(KG_MAP_CEILING, platt(joined.raw_confidence, JOIN_MAP)), abs=1e-3)


@pytest.mark.parametrize("playbook", ["triad", "kerag"])
def test_a_kg_whose_examples_leave_the_topic_out_answers_chains_without_it(atelier_home, tmp_path, playbook):
    question = "Who has a bench at the workshop that was started by Maren Holt?"
    shutil.copytree(atelier_home / "kgs" / "atelier", tmp_path / "kgs" / "atelier")
    write_json(TrainedReader({}, convention="no_topic", kg="atelier").to_json(), tmp_path / "kgs" / "atelier" / READER_FILE)
    plain = _ask(atelier_home, question, playbook)
    taught = _ask(tmp_path, question, playbook)
    assert {v.label for v in plain.values} == {"Maren Holt", "Jonas Pike"}  # she works there too
    assert [v.label for v in taught.values] == ["Jonas Pike"]
    said = {(t.subject, t.predicate) for t in taught.evidence.triples}
    assert ("http://example.org/atelier/JonasPike", "http://example.org/atelier/benchAt") in said
    if playbook == "triad":  # its evidence is the answer's walks, counted as the answer is (KERAG's: its sub-graph)
        assert ("http://example.org/atelier/MarenHolt", "http://example.org/atelier/benchAt") not in said


def test_a_join_below_every_recorded_one_keeps_the_shipped_map(atelier_home, tmp_path):
    """The join map lifts only confidences its examples recorded: below the lowest it has no say."""
    shipped = resolve_calibration("auto", playbook="triad", model="none")
    shutil.copytree(atelier_home / "kgs" / "atelier", tmp_path / "kgs" / "atelier")
    write_json(TrainedReader({}, join_calibration=JOIN_MAP, join_floor=0.999, kg="atelier").to_json(),
               tmp_path / "kgs" / "atelier" / READER_FILE)
    joined = _ask(tmp_path, JOIN)
    assert joined.text == "Caspar Wren" and joined.raw_confidence < 0.999
    assert joined.calibration == shipped.name
