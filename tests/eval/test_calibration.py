"""Calibration: the (confidence, correct) pairs of eval rows, ECE / wrong@0.9 / Brier on rows with
known answers, the report's reliability diagram and table, the isotonic fit and ``kgteam calibrate``."""

from __future__ import annotations

import asyncio
import json
import random
import re

import matplotlib.image as mpimg
import numpy as np
import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.eval.answers_file import write_answers
from kgteam.eval.calibration import fit_isotonic, pool_adjacent_violators
from kgteam.eval.datasets import DatasetItem, GoldAnswer
from kgteam.eval.grading import GroundednessCheck
from kgteam.eval.metrics import brier_score, expected_calibration_error, reliability_bins
from kgteam.eval.report import calibration_pairs, load_runs, summarize, write_report
from kgteam.eval.runner import RunRecord, read_run, run_eval
from kgteam.protocols.calibration import CalibrationError, CalibrationMap, calibrator
from kgteam.protocols.evidence import Evidence, EvidenceQuery, RelationMatch
from kgteam.protocols.payloads import Answer, AnswerValue

# ------------------------------------------------------------------ a run with known answers
# q00-q09 stated right at 0.95; q10-q11 stated wrong at 0.95; q12-q15 abstain, guess right, 0.3;
# q16-q19 abstain, guess wrong, 0.3; q20 abstains with no guess and no confidence;
# q21 (gold empty) states "Alps" at 0.92; q22 (gold empty) abstains with the guess "Alps" at 0.4.

ITEMS = [DatasetItem(id=f"q{i:02d}", question=f"question {i}", answers=[GoldAnswer(label=f"gold{i}")])
         for i in range(21)] + [
    DatasetItem(id="q21", question="question 21", answer_kind="empty"),
    DatasetItem(id="q22", question="question 22", answer_kind="empty"),
]
SELECTED = "SELECT ?x WHERE { <http://ex/a> <http://ex/p> ?x }"


class KnownTeam:
    async def ask(self, question: str, *, session_id: str | None = None) -> Answer:
        i = int(question.split()[1])
        evidence = Evidence(queries=[EvidenceQuery(sparql=SELECTED, row_count=1),
                                     EvidenceQuery(sparql="SELECT broken", error="parse error")],
                            matches=[RelationMatch(predicate="http://ex/p", label="p", words="pees")])
        if i < 12:
            label = f"gold{i}" if i < 10 else "wrong"
            return Answer(text=label, values=[AnswerValue(label=label)], confidence=0.95, evidence=evidence)
        if i < 20:
            guess = f"gold{i}" if i < 16 else "wrong"
            return Answer(text="I don't know", status="unknown", confidence=0.3, guess=[AnswerValue(label=guess)],
                          evidence=evidence, reading="the p of a" if i == 12 else None)
        if i == 20:
            return Answer(text="I don't know", status="unknown")
        if i == 21:
            return Answer(text="Alps", values=[AnswerValue(label="Alps")], confidence=0.92)
        return Answer(text="I don't know", status="unknown", confidence=0.4, guess=[AnswerValue(label="Alps")])


HAND_PAIRS = [(0.95, True)] * 10 + [(0.95, False)] * 2 + [(0.92, False)] + [(0.3, True)] * 4 + \
             [(0.3, False)] * 4 + [(0.4, False)]


@pytest.fixture()
def known_run(tmp_path):
    out = tmp_path / "known.jsonl"
    asyncio.run(run_eval(ITEMS, KnownTeam(), out, progress=False))
    return out


def test_rows_carry_confidence_guess_and_reading(known_run, tmp_path):
    records = {r.id: r for r in read_run(known_run)}
    assert records["q00"].confidence == 0.95 and records["q00"].grading.grade == "accurate"
    assert records["q12"].guess[0].label == "gold12" and records["q12"].guess_correct is True
    assert records["q16"].guess_correct is False
    assert records["q12"].reading == "the p of a"  # the answer's own reading wins
    assert records["q13"].reading == '"pees" ~ ->p'  # else the question words matched to the path
    assert records["q13"].sparql == [SELECTED]  # queries that ran; the failed one is left out
    assert records["q20"].confidence is None and records["q20"].guess_correct is None
    assert records["q21"].grading.grade == "hallucinated" and records["q22"].grading.grade == "accurate"
    assert records["q22"].guess_correct is False  # on an empty-gold question every guess is wrong
    # the answers file carries them too
    path = tmp_path / "answers.jsonl"
    write_answers(path, load_runs([known_run]))
    rows = {row["id"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    assert (rows["q12"]["confidence"], rows["q12"]["guess"], rows["q12"]["guess_correct"]) == (0.3, ["gold12"], True)
    assert rows["q12"]["reading"] == "the p of a" and rows["q13"]["sparql"] == [SELECTED]


def test_pairs_and_metrics_from_known_rows(known_run):
    records = read_run(known_run)
    assert sorted(calibration_pairs(records)) == sorted(HAND_PAIRS)
    s = summarize(records)
    assert s["calibrated_n"] == 22
    # 3 stated answers wrong at >= 0.9 (q10, q11, q21); 23 graded questions, 13 stated answers
    assert (s["wrong_at_90_n"], s["stated"]) == (3, 13)
    assert s["wrong_at_90"] == pytest.approx(3 / 23) and s["wrong_at_90_stated"] == pytest.approx(3 / 13)
    top_conf = (12 * 0.95 + 0.92) / 13
    ece = 13 / 22 * abs(10 / 13 - top_conf) + 8 / 22 * abs(0.5 - 0.3) + 1 / 22 * abs(0.0 - 0.4)
    assert s["ece"] == pytest.approx(ece)
    brier = (10 * 0.05 ** 2 + 2 * 0.95 ** 2 + 0.92 ** 2 + 4 * 0.7 ** 2 + 4 * 0.3 ** 2 + 0.4 ** 2) / 22
    assert s["brier"] == pytest.approx(brier)


def test_ece_and_bins_on_constructed_pairs():
    pairs = [(0.95, True)] * 5 + [(0.95, False)] * 5 + [(0.25, True)] * 3 + [(0.25, False)] * 7
    assert expected_calibration_error(pairs) == pytest.approx(0.5 * 0.45 + 0.5 * 0.05)
    assert brier_score(pairs) == pytest.approx((5 * 0.05 ** 2 + 5 * 0.95 ** 2 + 3 * 0.75 ** 2 + 7 * 0.25 ** 2) / 20)
    bins = reliability_bins(pairs)
    assert [b.n for b in bins] == [0, 0, 10, 0, 0, 0, 0, 0, 0, 10]
    assert (bins[9].accuracy, bins[2].accuracy) == (0.5, 0.3)
    assert reliability_bins([(1.0, True), (0.0, False)])[9].n == 1  # 1.0 falls in the last bin
    perfect = [(0.8, True)] * 8 + [(0.8, False)] * 2
    assert expected_calibration_error(perfect) == pytest.approx(0.0)
    assert expected_calibration_error([]) is None


def test_wrong_and_grounded_is_counted_beside_groundedness():
    def rec(i: int, grade: str, grounded: bool) -> RunRecord:
        from kgteam.eval.grading import Grading

        return RunRecord(id=str(i), question="q", answer_text="x", answer_values=[AnswerValue(label="x")],
                         answer_status="answered", grading=Grading(grade=grade, decided_by="rule:test"),
                         groundedness=GroundednessCheck(grounded=grounded))
    records = [rec(0, "accurate", True), rec(1, "hallucinated", True), rec(2, "hallucinated", True),
               rec(3, "hallucinated", False)]
    s = summarize(records)
    assert (s["groundedness"], s["wrong_grounded"]) == (0.75, 2)


def test_report_reliability_diagram_and_table(known_run, tmp_path):
    path = write_report([known_run], tmp_path / "report")
    md = path.read_text(encoding="utf-8")
    png = tmp_path / "report" / "reliability.png"
    assert png.stat().st_size > 8_000 and float(np.std(mpimg.imread(png))) > 0.05
    assert "](reliability.png)" in md
    ece = expected_calibration_error(HAND_PAIRS)
    assert f"22 pairs, ECE {ece:.3f}" in md
    rows = re.findall(r"^\| (\d\.\d)–(\d\.\d) \| (\d+) \| ([\d.–]+) \| ([\d.–]+) \| ([\d.–]+) \|$", md, re.M)
    assert len(rows) == 10
    for row, b in zip(rows, reliability_bins(HAND_PAIRS), strict=True):
        assert int(row[2]) == b.n
        if b.n:
            assert (float(row[3]), float(row[4]), float(row[5])) == pytest.approx(
                (b.mean_confidence, b.accuracy, b.gap), abs=5e-4)
        else:
            assert row[3:] == ("–", "–", "–")
    # the overall table shows ECE and the confident-wrong share beside groundedness
    head = next(line for line in md.splitlines() if line.startswith("| run |"))
    assert "wrong & grounded" in head and "ECE" in head and "wrong@≥0.9" in head


def test_report_without_confidences_says_so(tmp_path):
    out = tmp_path / "plain.jsonl"

    class Plain:
        async def ask(self, question: str, *, session_id: str | None = None) -> Answer:
            return Answer(text="gold0", values=[AnswerValue(label="gold0")])

    asyncio.run(run_eval(ITEMS[:3], Plain(), out, progress=False))
    md = write_report([out], tmp_path / "r").read_text(encoding="utf-8")
    assert "no answer carries a confidence" in md
    assert not (tmp_path / "r" / "reliability.png").exists()


# ------------------------------------------------------------------ fitting

def test_pav_pools_violators():
    assert pool_adjacent_violators([1, 2, 3, 4], [1, 0, 1, 1]) == [(1, 2, 0.5, 2), (3, 4, 1.0, 2)]
    # equal scores are one block; already increasing data is left as it is
    assert pool_adjacent_violators([0.5, 0.5, 0.9], [1, 0, 1]) == [(0.5, 0.5, 0.5, 2), (0.9, 0.9, 1.0, 1)]
    assert pool_adjacent_violators([3, 1, 2], [1, 0, 0.5]) == [(1, 1, 0.0, 1), (2, 2, 0.5, 1), (3, 3, 1.0, 1)]


def overconfident(n: int, seed: int) -> list[tuple[float, bool]]:
    """Scores uniform in [0, 1], right with probability score**3: overconfident everywhere but the ends."""
    rng = random.Random(seed)
    return [(x, rng.random() < x ** 3) for x in (rng.random() for _ in range(n))]


def test_isotonic_fit_is_monotone_and_calibrates_unseen_rows():
    train, test = overconfident(3000, 1), overconfident(3000, 2)
    mapping = fit_isotonic(train, sets=["synthetic"])
    assert all(b >= a for a, b in zip(mapping.ys, mapping.ys[1:], strict=False))
    grid = [i / 100 for i in range(101)]
    mapped = [mapping.calibrate(x) for x in grid]
    assert all(b >= a for a, b in zip(mapped, mapped[1:], strict=False))
    assert mapping.calibrate(0.5) == pytest.approx(0.125, abs=0.06)
    before = expected_calibration_error(test)
    after = expected_calibration_error([(mapping.calibrate(c), ok) for c, ok in test])
    assert before > 0.2 and after < 0.04, (before, after)
    assert (mapping.fitted_on.n, mapping.fitted_on.sets) == (3000, ["synthetic"])


def test_map_interpolates_clamps_and_round_trips(tmp_path):
    m = CalibrationMap(xs=[0.2, 0.6, 1.0], ys=[0.1, 0.5, 0.9])
    assert (m.calibrate(0.0), m.calibrate(0.4), m.calibrate(0.8), m.calibrate(1.5)) == pytest.approx((0.1, 0.3, 0.7, 0.9))
    back = CalibrationMap.load(m.dump(tmp_path / "map.json"))
    assert back.calibrate(0.4) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        CalibrationMap(xs=[0.1, 0.5], ys=[0.9, 0.2])  # not monotone
    (tmp_path / "bad.json").write_text("{nope", encoding="utf-8")
    with pytest.raises(CalibrationError, match="not JSON"):
        CalibrationMap.load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"xs": [0.5]}', encoding="utf-8")
    with pytest.raises(CalibrationError, match="not a calibration map"):
        CalibrationMap.load(tmp_path / "other.json")
    with pytest.raises(CalibrationError, match="cannot read"):
        CalibrationMap.load(tmp_path / "missing.json")
    assert calibrator(tmp_path / "map.json")(0.4) == pytest.approx(0.3)
    assert calibrator(None)(0.37) == 0.37  # no map configured: the raw score
    with pytest.raises(CalibrationError):
        calibrator(tmp_path / "bad.json")


# ------------------------------------------------------------------ kgteam calibrate

def _records_file(path, pairs):
    """A run file whose stated answers have the given (confidence, correct) pairs."""
    from kgteam.eval.grading import Grading

    with open(path, "w", encoding="utf-8") as fh:
        for i, (conf, ok) in enumerate(pairs):
            fh.write(RunRecord(id=f"q{i}", question="q", answer_text="x", answer_values=[AnswerValue(label="x")],
                               answer_status="answered", confidence=conf,
                               grading=Grading(grade="accurate" if ok else "hallucinated", decided_by="rule:test"),
                               ).model_dump_json() + "\n")
    return path


def test_cli_calibrate_fits_and_measures_holdout(tmp_path):
    train = _records_file(tmp_path / "train.jsonl", overconfident(1500, 3))
    held = _records_file(tmp_path / "held.jsonl", overconfident(1500, 4))
    out = tmp_path / "maps" / "map.json"
    result = CliRunner().invoke(app, ["calibrate", str(train), "--out", str(out), "--holdout", str(held)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["in_sample"]["n"] == 1500 and report["holdout"]["n"] == 1500
    assert report["holdout"]["ece_after"] < 0.05 < report["holdout"]["ece_before"]
    assert report["in_sample"]["ece_after"] < report["in_sample"]["ece_before"]
    mapping = CalibrationMap.load(out)
    assert mapping.fitted_on.sets == [str(train)] and mapping.fitted_on.n == 1500


@pytest.mark.parametrize("content, message", [
    (None, "run file not found"),
    ("this is not json\nnor this\n", "invalid record"),
    ('{"question": "Who?", "answers": ["x"]}\n{"question": "Why?", "answers": ["y"]}\n', "invalid record"),
    ('{"id": "q1", "question": "q", "answer_text": "x"}\n', "none with a confidence"),
])
def test_cli_calibrate_bad_input_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "run.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(app, ["calibrate", str(path), "--out", str(tmp_path / "map.json")])
    assert result.exit_code == 2
    assert "error:" in result.output and message in result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    assert not (tmp_path / "map.json").exists()


# ------------------------------------------------------------------ benchmarks/calibration.py

def test_benchmark_leaves_each_set_out(tmp_path, capsys):
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "calibration.py"
    spec = importlib.util.spec_from_file_location("calibration_benchmark", script)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    runs = []
    for i, n in enumerate((400, 500, 600)):
        path = _records_file(tmp_path / f"set{i}.jsonl", overconfident(n, 10 + i))
        (tmp_path / f"set{i}.meta.json").write_text(json.dumps({"dataset": f"synthetic:{i}"}), encoding="utf-8")
        runs.append(str(path))
    assert bench.main(runs) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["sets"]) == ["synthetic:0", "synthetic:1", "synthetic:2"]
    assert [s["fitted_on"] for s in out["sets"].values()] == [1100, 1000, 900]  # the other sets' pairs only
    for s in out["sets"].values():
        before, after = s["before"], s["after"]
        assert before["ece"] > 0.2 and after["ece"] < 0.06
        # a tenth of the answers score >= 0.9 and about 18% of those are wrong before the map
        assert before["wrong_at_90"] > 0.005 and after["wrong_at_90"] < before["wrong_at_90"]
        assert before["abstention"] == 0.0 and after["abstention"] > 0.3  # low calibrated scores abstain
    assert bench.main([str(tmp_path / "missing.jsonl")]) == 2


def test_narrow_or_thin_steps_are_merged_into_their_nearest_neighbour():
    from kgteam.eval.calibration import fit_isotonic, set_weights

    # a cluster of wrong answers at 0.994 between right ones at 0.993 and 0.995: plain isotonic
    # regression makes a step of it; steps narrower than 0.01 of the score are merged away
    pairs = [(0.2, False)] * 30 + [(0.2, True)] * 10 + [(0.993, True)] * 20 + [(0.994, False)] * 10 + \
        [(0.995, True)] * 20 + [(1.0, True)] * 10
    plain = fit_isotonic(pairs)
    assert len(set(plain.ys)) > 2
    coarse = fit_isotonic(pairs, min_width=0.01)
    assert coarse.calibrate(0.2) == 0.25  # 10 of 40 right
    assert coarse.calibrate(0.9935) == coarse.calibrate(1.0) == 50 / 60  # one step for all stated answers
    assert "0.01 wide" in coarse.fitted_on.method
    thin = fit_isotonic(pairs, min_share=0.5)
    assert len(set(thin.ys)) <= 2
    # each group counts the same, whatever its size
    weights = set_weights([[(0.9, True)] * 90, [(0.9, False)] * 10])
    assert fit_isotonic([(0.9, True)] * 90 + [(0.9, False)] * 10, weights=weights).calibrate(0.9) == pytest.approx(0.5)
