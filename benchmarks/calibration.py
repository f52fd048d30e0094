"""Calibration of answer confidences, per set, before and after a map fitted on the *other* sets.

Input: run files written by ``kgteam eval ... --out`` (one per set). For each set, an isotonic map
(``kgteam/eval/calibration.py``) is fitted on every other set's (confidence, correct) pairs
(leave-one-set-out), so the "after" numbers are measured on questions the map never saw.

Per set, before and after: ECE (10 equal-width bins), wrong@>=0.9 over all graded questions and
over stated answers, Brier score, Hits@1 and the abstention rate. "After" re-decides each question
with the calibrated confidence: the answer (or an abstention's best guess) is stated when its
calibrated confidence is >= ``--threshold`` (the teams' own ``min_confidence`` default, 0.5), else
the question is abstained on; a question without a confidence keeps its decision. Hits@1 after is
the graded first-value hit for an unchanged answer, the guess's grade for a guess now stated, 0 for
an answer now withheld.

    .venv/bin/python benchmarks/calibration.py runs/m1.jsonl runs/m2.jsonl runs/wc-p1.jsonl > calibration.json

With ``--fit RUN [RUN ...]`` one map is fitted on those run files (another seed's questions, say)
instead, and measured on every positional run file, none of which it saw (``--balance``: each
fitting run file counts the same; ``--min-share S``: no step of the map rests on less than that
share of the pairs); ``--write-map PATH`` saves it (what ``kgteam/data/calibration-triad-none.json`` is made with, see docs/benchmarks.md).
Pairs are the scorer's raw scores (``raw_confidence`` when a run applied a map), so "before" is
the raw scorer and "after" the map, whatever map the runs used.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kgteam.eval.calibration import CalibrationInputError, fit_isotonic, pairs_from_runs, set_weights
from kgteam.eval.metrics import CONFIDENT, brier_score, expected_calibration_error
from kgteam.eval.report import latest_records
from kgteam.eval.runner import RunRecord, read_meta, read_run
from kgteam.protocols.calibration import CalibrationMap


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def decisions(records: list[RunRecord], mapping: CalibrationMap | None,
              threshold: float) -> list[tuple[bool, bool | None, float | None, bool]]:
    """Per graded question: (stated, correct, confidence, hit@1) — as run, or re-decided with ``mapping``."""
    out = []
    for r in records:
        if r.grading is None or r.grading.grade == "ungraded":
            continue
        stated = r.stated()
        correct = r.grading.grade == "accurate" if stated else None
        conf, hit = (r.raw_confidence if r.raw_confidence is not None else r.confidence), r.grading.hits1
        empty = r.answer_kind == "empty"
        if mapping is not None and conf is not None:
            conf = mapping.calibrate(conf)
            if stated and conf < threshold:
                stated, correct, hit = False, None, empty
            elif not stated and r.guess_correct is not None and conf >= threshold:
                stated, correct, hit = True, r.guess_correct, r.guess_correct
        out.append((stated, correct, conf, bool(hit)))
    return out


def measure(records: list[RunRecord], mapping: CalibrationMap | None, threshold: float, bins: int) -> dict[str, Any]:
    pairs = [p for r in records if (p := r.calibration_pair(raw=True)) is not None]
    if mapping is not None:
        pairs = [(mapping.calibrate(c), ok) for c, ok in pairs]
    rows = decisions(records, mapping, threshold)
    n = len(rows)
    stated = [row for row in rows if row[0]]
    confident_wrong = sum(1 for s, ok, c, _ in stated if ok is False and c is not None and c >= CONFIDENT)
    return {
        "questions": n, "pairs": len(pairs),
        "ece": _r(expected_calibration_error(pairs, bins)), "brier": _r(brier_score(pairs)),
        "wrong_at_90": _r(confident_wrong / n) if n else None,
        "wrong_at_90_stated": _r(confident_wrong / len(stated)) if stated else None,
        "hits_at_1": _r(sum(hit for *_, hit in rows) / n) if n else None,
        "abstention": _r(1 - len(stated) / n) if n else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run files of `kgteam eval --out`, one per set")
    parser.add_argument("--threshold", type=float, default=0.5, help="abstain below this calibrated confidence")
    parser.add_argument("--bins", type=int, default=10)
    parser.add_argument("--fit", nargs="+", type=Path, default=None,
                        help="fit one map on these run files and measure it on the positional ones")
    parser.add_argument("--write-map", type=Path, default=None, help="with --fit: save the fitted map here")
    parser.add_argument("--name", default="", help="with --write-map: the name answers will carry")
    parser.add_argument("--balance", action="store_true", help="with --fit: each run file counts the same")
    parser.add_argument("--min-width", type=float, default=0.0,
                        help="with --fit: the least span of scores one step of the map may cover")
    parser.add_argument("--min-share", type=float, default=0.0,
                        help="with --fit: the least share of the pairs one step of the map may rest on")
    args = parser.parse_args(argv)
    sets: dict[str, Path] = {}
    for path in args.runs:
        name = str(read_meta(path).get("dataset") or path.stem)
        sets[name if name not in sets else f"{name}#{path.stem}"] = path
    try:
        pairs = {name: pairs_from_runs([path]) for name, path in sets.items()}
        fit_groups = [pairs_from_runs([p]) for p in args.fit] if args.fit else None
    except CalibrationInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    method = "isotonic (PAV), " + ("fitted on --fit runs" if args.fit else "leave-one-set-out")
    out: dict[str, Any] = {"benchmark": "calibration", "threshold": args.threshold, "bins": args.bins,
                           "method": method, "sets": {}}
    fixed = None
    fit_pairs = [p for g in fit_groups for p in g] if fit_groups else None
    if fit_groups and fit_pairs:
        fixed = fit_isotonic(fit_pairs, sets=[str(p) for p in args.fit], min_share=args.min_share,
                             min_width=args.min_width,
                             weights=set_weights(fit_groups) if args.balance else None)
        fixed.name = args.name
        out["fitted_on"] = {"runs": [str(p) for p in args.fit], "n": len(fit_pairs), "method": fixed.fitted_on.method}
        if args.write_map:
            fixed.dump(args.write_map)
            out["map"] = str(args.write_map)
    for name, path in sets.items():
        records = latest_records(read_run(path))
        others = [p for other, ps in pairs.items() if other != name for p in ps]
        if fixed is not None:
            mapping, others = fixed, fit_pairs
        else:
            mapping = fit_isotonic(others, sets=[o for o in sets if o != name]) if others else None
        out["sets"][name] = {
            "run": str(path), "fitted_on": len(others),
            "before": measure(records, None, args.threshold, args.bins),
            "after": measure(records, mapping, args.threshold, args.bins) if mapping else None,
        }
    everything = [p for ps in pairs.values() for p in ps]
    pooled = fixed or fit_isotonic(everything, sets=list(sets))
    out["pooled_map"] = {"n": pooled.fitted_on.n, "xs": [round(x, 4) for x in pooled.xs],
                         "ys": [round(y, 4) for y in pooled.ys]}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
