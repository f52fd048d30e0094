"""The Triad playbook's shipped map is a logistic map over the reading signals a stated answer
carries: a graded probability (the old map gave every stated answer 0.88), never "sure"; an
"I don't know" keeps its score; the answer shows the score it was stated on and what its reading
knew, and `calibration: none` still gives the score as it is."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kgteam.config.defaults import default_team_spec, with_overrides
from kgteam.protocols.calibration import CalibrationMap, SignalWeights, resolve_calibration, signal_features
from kgteam.protocols.payloads import ReadingSignals
from kgteam.team_builder import open_team
from kgteam.tools.loading.builder import build_kg

KGS = Path(__file__).resolve().parents[1] / "data" / "kgs"


def test_the_shipped_map_is_graded_monotone_in_the_score_and_capped() -> None:
    shipped = resolve_calibration("auto", playbook="triad", model="none")
    assert shipped is not None and shipped.signals is not None and shipped.fitted_on.n > 0
    probs = [shipped.calibrate(s, ReadingSignals(score=s)) for s in (0.5, 0.7, 0.9, 0.99, 1.0)]
    assert probs == sorted(probs)  # monotone in the score
    assert shipped.calibrate(1.0, ReadingSignals(score=1.0)) <= shipped.signals.ceiling < 0.9
    assert shipped.calibrate(0.6) == pytest.approx(shipped.calibrate(0.6, ReadingSignals(score=0.6)), abs=0.01)
    graded = {shipped.calibrate(0.95, ReadingSignals(score=0.95, unread=["w"] * n, described=d, inferred=i))
              for n in range(3) for d in (False, True) for i in (False, True)}
    assert len(graded) >= 6  # graded by what the reading knows, not two steps


def test_a_signal_the_map_weighs_moves_the_probability_its_way() -> None:
    weights = SignalWeights(bias=0.5, weights={"score": 1.0, "unread": -0.7, "described": -0.4})
    plain = weights.probability(0.8, ReadingSignals(score=0.8))
    assert weights.probability(0.8, ReadingSignals(score=0.8, unread=["major"])) < plain
    assert weights.probability(0.8, ReadingSignals(score=0.8, described=True)) < plain
    assert set(signal_features(0.5, ReadingSignals())) >= {"score", "unread", "described", "inferred", "shape:count"}
    assert set(signal_features(0.5)) == {"score"}  # an answer without signals is read by its score


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("signal_map")
    build_kg([KGS / "wikilite" / "wikilite.ttl"], "wikilite", home=home, progress=False)
    return home


def _ask(home: Path, question: str, calibration: str = "auto"):
    spec = with_overrides(default_team_spec(), kg="wikilite", model="none").model_copy(
        update={"calibration": calibration})
    with open_team(spec, home=home) as runner:
        return asyncio.run(runner.ask(question))


def test_a_stated_answer_carries_its_signals_and_the_score_it_was_stated_on(home: Path) -> None:
    shipped = resolve_calibration("auto", playbook="triad", model="none")
    a = _ask(home, "What is the capital of Norvania?")
    assert a.status == "answered" and a.signals is not None
    assert a.raw_confidence == a.signals.score and a.calibration == shipped.name
    assert a.confidence == pytest.approx(shipped.calibrate(a.signals.score, a.signals), abs=1e-4)
    raw = _ask(home, "What is the capital of Norvania?", calibration="none")
    assert raw.raw_confidence is None and raw.confidence == a.signals.score
    a = _ask(home, "How many major volcanoes are there?")
    assert a.signals is not None and "major" in a.signals.unread  # the answer says what it did not read


def test_an_i_dont_know_keeps_its_score_under_a_map_fitted_on_stated_answers(home: Path, tmp_path: Path) -> None:
    path = CalibrationMap(xs=[0.0, 1.0], ys=[0.7, 0.8], signals=SignalWeights(bias=2.0)).dump(tmp_path / "m.json")
    a = _ask(home, "Which volcano is the prettiest of Estria's?", calibration=str(path))
    assert a.status != "answered"
    assert a.raw_confidence is None and a.calibration is None


def test_a_stated_answer_its_signals_put_below_one_half_is_said_as_a_guess(home: Path, tmp_path: Path) -> None:
    doubtful = SignalWeights(bias=0.0, weights={"score": 0.0, "unread": -5.0})  # any unread word: 0.007
    path = CalibrationMap(xs=[0.0, 1.0], ys=[0.5, 0.5], signals=doubtful).dump(tmp_path / "doubt.json")
    plain = _ask(home, "What is the capital of Norvania?", calibration=str(path))
    assert plain.status == "answered" and plain.confidence == 0.5  # nothing unread: the bias alone
    a = _ask(home, "What is the famous capital of Norvania?", calibration=str(path))
    assert a.status == "unknown" and not a.values and [v.label for v in a.guess] == ["Oslen"]
    assert "famous" in a.text and a.confidence < 0.5
