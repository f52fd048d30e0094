"""A team's calibration map turns every final answer's score into the probability it reports.

The map is applied once, by the supervisor, so every playbook's confidence means the same; the
scorer's own score stays on the answer (``raw_confidence``) and in eval rows, where a new map is
fitted from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kgteam.config.defaults import default_team_spec, with_overrides
from kgteam.eval.calibration import pairs_from_runs
from kgteam.eval.runner import RunRecord
from kgteam.protocols.calibration import CalibrationMap, builtin_map_name, resolve_calibration
from kgteam.team_builder import TeamBuildError, open_team

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "who is the gardener of Old Elm"


@pytest.fixture(scope="module")
def orchard_home(tmp_path_factory):
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("home")
    build_kg([ROOT / "tests" / "data" / "orchard.ttl"], "orchard", home=home, progress=False, embed=False)
    return home


def _ask(home: Path, calibration: str) -> object:
    import asyncio

    spec = with_overrides(default_team_spec(), kg="orchard", model="none").model_copy(
        update={"calibration": calibration})
    with open_team(spec, home=home) as runner:
        return asyncio.run(runner.ask(QUESTION))


def test_a_map_file_turns_the_score_into_its_probability(orchard_home, tmp_path):
    path = CalibrationMap(xs=[0.0, 1.0], ys=[0.1, 0.6]).dump(tmp_path / "halved.json")
    raw = _ask(orchard_home, "none")
    assert raw.text == "Ada Quill" and raw.raw_confidence is None and raw.calibration is None
    mapped = _ask(orchard_home, str(path))
    assert mapped.text == "Ada Quill"
    assert mapped.raw_confidence == raw.confidence
    assert mapped.confidence == pytest.approx(0.1 + 0.5 * raw.confidence, abs=1e-4)
    assert mapped.calibration == "halved"


def test_a_missing_map_is_a_clear_error_when_the_team_is_built(orchard_home, tmp_path):
    with pytest.raises(TeamBuildError, match=r"calibration map not found: .*nope\.json"):
        _ask(orchard_home, str(tmp_path / "nope.json"))


def test_auto_uses_the_shipped_map_only_for_the_scorer_it_was_fitted_on(orchard_home):
    shipped = resolve_calibration("auto", playbook="triad", model="none")
    assert shipped is not None, f"kgteam/data/{builtin_map_name('triad', 'none')} is shipped"
    assert shipped.fitted_on.n > 0 and shipped.name.startswith("builtin:")
    assert resolve_calibration("auto", playbook="triad", model="model") is None  # a model's scores are its own
    assert resolve_calibration("auto", playbook="kerag", model="none").name == "builtin:kerag-none"
    assert resolve_calibration("auto", playbook="no-such-playbook", model="none") is None
    assert resolve_calibration("none", playbook="triad", model="none") is None
    answer = _ask(orchard_home, "auto")
    assert answer.calibration == shipped.name
    assert answer.confidence == pytest.approx(shipped.calibrate(answer.raw_confidence, answer.signals), abs=1e-4)


def test_a_new_map_is_fitted_on_the_raw_scores_of_a_calibrated_run(tmp_path):
    right = RunRecord(id="a", question="q", answer_text="x", answer_status="answered", confidence=0.3,
                      raw_confidence=0.95, grading={"grade": "accurate", "decided_by": "rule:test", "hits1": True})
    run = tmp_path / "run.jsonl"
    run.write_text(right.model_dump_json() + "\n", encoding="utf-8")
    assert right.calibration_pair() == (0.3, True)  # what the eval measures: the stated probability
    assert pairs_from_runs([run]) == [(0.95, True)]  # what a map is fitted on: the scorer's score


def test_a_blank_calibration_setting_is_a_clear_error_in_the_team_file():
    from kgteam.config.loader import TeamConfigError, load_team_text

    with pytest.raises(TeamConfigError, match="'calibration' is empty"):
        load_team_text("name: t\nplaybook: triad\ncalibration: '  '\n", check_installed=False)
    assert load_team_text("name: t\nplaybook: triad\n", check_installed=False).calibration == "auto"


def test_validate_reports_a_calibration_map_that_cannot_be_read(tmp_path):
    from kgteam.config.loader import TeamConfigError, load_team

    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    team = tmp_path / "team.yaml"
    team.write_text("name: t\nplaybook: triad\ncalibration: broken.json\n", encoding="utf-8")
    with pytest.raises(TeamConfigError, match=r"team\.yaml:3.*broken\.json: not JSON"):
        load_team(team)
    CalibrationMap(xs=[0.0, 1.0], ys=[0.2, 0.8]).dump(tmp_path / "broken.json")
    assert load_team(team).calibration == str(tmp_path / "broken.json")
