"""Fit the Triad playbook's shipped map (``kgteam/data/calibration-triad-none.json``): a logistic map
over the reading signals stated answers carry (``Answer.signals``), on graded answers of several KGs.

Each question of each fitting set is asked with the built-in Triad team, ``--model none``; the
answer's reading signals (``Answer.signals``) and whether its first value, or its best guess when
it abstained, is right make one row (an unanswerable question's guess is wrong: stating it would
be). A logistic model with an L2 penalty is fitted on the rows a team states (score >= 0.5; all
rows with ``--all-rows``) over the signals named by ``--features``; each set is also scored by a
model fitted on the *other* sets (leave one set out), which is what the prior does on a KG it never
saw. The sets it is measured on (GeoQuery dev, the blind sets under ``tests/data/blind``) are never
fitting sets.

    .venv/bin/python benchmarks/fit_prior.py --home /tmp/kgh --rows runs/prior-rows.jsonl          # ask and fit
    .venv/bin/python benchmarks/fit_prior.py --from-rows runs/prior-rows.jsonl --write kgteam/data/calibration-triad-none.json

Prints JSON: the weights, and per set the rows, the share right and the AUROC of the raw score,
of the in-sample prior and of the leave-one-set-out prior.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answer_sets import auroc, read_answer_set, stored_gold  # noqa: E402
from floor import load_set  # noqa: E402
from shapes import Gold, gold_for, grade, read_shape_set  # noqa: E402

from kgteam.eval.metrics import Predicted  # noqa: E402
from kgteam.protocols.calibration import CalibrationMap, FittedOn, SignalWeights, signal_features  # noqa: E402
from kgteam.protocols.payloads import ReadingSignals  # noqa: E402
from kgteam.roles.semantic.reader import STATED_AT  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
CHAIN_SETS = ["metaqa-consistent:1-hop", "metaqa-consistent:2-hop", "metaqa-consistent:3-hop", "wc2014:P1",
              "wc2014:P2", "wc2014:C", "pq:2H", "pq:3H"]
SHAPE_SETS = {"shapes:metaqa": ("metaqa", ROOT / "benchmarks/shapes/metaqa.jsonl"),
              "shapes:wc2014": ("wc2014", ROOT / "benchmarks/shapes/worldcup.jsonl"),
              "shapes:isles": ("isles", ROOT / "tests/data/kgs/isles/shapes.jsonl")}
OWN_KGS = {"isles": ROOT / "tests/data/kgs/isles/isles.ttl"}


def questions_of(spec: str, home: Path, n: int, seed: int) -> tuple[str, list[tuple[str, Gold, str]]] | str:
    """(KG, [(question, gold, shape)]) of one fitting set, or why it was skipped."""
    from floor import ensure_kg

    if spec == "geoquery:train":
        ensure_kg("geoquery", [DATA / "geoquery/geo.nt"], None, None, home)
        return "geoquery", [(q.question, stored_gold(q.answers), q.shape)
                            for q in read_answer_set(DATA / "geoquery/train.jsonl")]
    if spec in SHAPE_SETS:
        kg, path = SHAPE_SETS[spec]
        if kg in OWN_KGS:
            ensure_kg(kg, [OWN_KGS[kg]], None, None, home)
        elif not (home / "kgs" / kg).exists():
            return f"KG {kg} not built (run a chain set of it first)"
        qs = read_shape_set(path)
        golds = gold_for(kg, home, qs)
        return kg, [(q.question, golds[q.id], q.shape) for q in qs if not isinstance(golds[q.id], str)]
    loaded = load_set(spec, DATA, home, n, seed)
    if isinstance(loaded, str):
        return loaded
    kg, items = loaded
    return kg, [(it.question, Gold("items", items=list(it.answers)), "chain") for it in items]


async def ask(kg: str, home: Path, questions: list[tuple[str, Gold, str]], spec: str) -> list[dict[str, Any]]:
    from kgteam.cli.team_setup import choose_team
    from kgteam.config.schema import KGSpec
    from kgteam.team_builder import open_team

    team, _ = choose_team(None, model="none")
    team = team.model_copy(update={"kg": KGSpec(name=kg)})
    rows = []
    with open_team(team, home=home) as runner:
        for question, gold, shape in questions:
            answer = await runner.ask(question)
            if answer.signals is None:
                continue
            said = answer.values or answer.guess
            preds = [Predicted(label=v.label, iri=v.iri) for v in said]
            g = grade(shape, gold, status="answered" if preds else answer.status,
                      text=answer.text if answer.values else "", values=preds)
            rows.append({"set": spec, "question": question, "right": g.right if preds else False,
                         "stated": answer.status == "answered", "signals": answer.signals.model_dump()})
            print(f"{spec}: {'right' if rows[-1]['right'] else 'wrong'} {question[:60]}", file=sys.stderr, flush=True)
    return rows


FEATURES = ("score", "unread", "described", "inferred")  # chosen on leave-one-set-out AUROC (docs/benchmarks.md)


def _features(row: dict[str, Any]) -> dict[str, float]:
    signals = ReadingSignals(**row["signals"])
    return signal_features(signals.score, signals)


def fit(rows: list[dict[str, Any]], l2: float = 1.0, names: tuple[str, ...] = FEATURES) -> SignalWeights:
    """Logistic regression (Newton steps, L2 on the weights, not the bias) on the rows' features."""
    names = tuple(sorted(names))
    x = np.array([[_features(r)[k] for k in names] for r in rows], dtype=float)
    y = np.array([1.0 if r["right"] else 0.0 for r in rows])
    x1 = np.hstack([np.ones((len(rows), 1)), x])
    w = np.zeros(x1.shape[1])
    penalty = np.eye(x1.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x1 @ w, -30, 30)))
        grad = x1.T @ (p - y) + penalty @ w
        hess = x1.T @ (x1 * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return SignalWeights(bias=round(float(w[0]), 6),
                         weights={k: round(float(v), 6) for k, v in zip(names, w[1:], strict=True)})


def as_map(weights: SignalWeights, fitted_on: FittedOn) -> CalibrationMap:
    """The shipped map: the logistic part, and the same curve read at the score alone as breakpoints."""
    xs = [round(i / 100, 2) for i in range(101)]
    ys = [round(weights.probability(x), 4) for x in xs]
    ys = [max(ys[: i + 1]) for i in range(len(ys))]  # monotone even where a weight made it dip
    return CalibrationMap(xs=xs, ys=ys, fitted_on=fitted_on, signals=weights, name="builtin:triad-none")


def report(rows: list[dict[str, Any]], l2: float, names: tuple[str, ...]) -> dict[str, Any]:
    prior = fit(rows, l2, names)
    out: dict[str, Any] = {}
    for spec in sorted({r["set"] for r in rows}):
        mine = [r for r in rows if r["set"] == spec]
        others = [r for r in rows if r["set"] != spec]
        held = fit(others, l2, names) if others else prior
        sig = [ReadingSignals(**r["signals"]) for r in mine]
        ys = [bool(r["right"]) for r in mine]
        out[spec] = {
            "rows": len(mine), "right_share": round(sum(ys) / len(ys), 4),
            "auroc_score": auroc([(s.score, y) for s, y in zip(sig, ys, strict=True)]),
            "auroc_prior": auroc([(prior.probability(s.score, s), y) for s, y in zip(sig, ys, strict=True)]),
            "auroc_prior_held_out": auroc([(held.probability(s.score, s), y) for s, y in zip(sig, ys, strict=True)]),
        }
    return {"weights": prior.weights, "bias": prior.bias, "by_set": out}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=None, help="KGTEAM home to build/reuse KGs in")
    parser.add_argument("--sets", nargs="*", default=["geoquery:train", *CHAIN_SETS, *SHAPE_SETS])
    parser.add_argument("--n", type=int, default=100, help="questions per chain set (seeded sample)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rows", type=Path, default=None, help="write the graded rows here (JSONL)")
    parser.add_argument("--from-rows", type=Path, default=None, help="fit on rows written before (no questions asked)")
    parser.add_argument("--l2", type=float, default=3.0)
    parser.add_argument("--features", nargs="*", default=list(FEATURES),
                        help=f"signals the map weighs (of {', '.join(signal_features(0.5, ReadingSignals()))})")
    parser.add_argument("--all-rows", action="store_true", help="fit on abstentions' guesses too (default: the "
                        "answers a team states, score >= 0.5: what the prior's probability is shown with)")
    parser.add_argument("--write", type=Path, default=None, help="write the fitted prior here")
    args = parser.parse_args(argv)
    if args.from_rows:
        rows = [json.loads(line) for line in args.from_rows.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        if args.home is None:
            parser.error("--home is needed to ask questions")
        rows = []
        for spec in args.sets:
            got = questions_of(spec, args.home, args.n, args.seed)
            if isinstance(got, str):
                print(f"{spec}: skipped ({got})", file=sys.stderr)
                continue
            kg, questions = got
            rows += asyncio.run(ask(kg, args.home, questions, spec))
        if args.rows:
            args.rows.parent.mkdir(parents=True, exist_ok=True)
            args.rows.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if not args.all_rows:
        rows = [r for r in rows if r["signals"]["score"] >= STATED_AT]
    names = tuple(args.features)
    result = report(rows, args.l2, names)
    if args.write:
        fitted = FittedOn(sets=sorted({r["set"] for r in rows}), n=len(rows),
                          date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                          method=f"logistic over {', '.join(names)} (L2 {args.l2}), on "
                                 f"{'all rows' if args.all_rows else 'stated answers (score >= 0.5)'}; "
                                 "benchmarks/fit_prior.py")
        as_map(fit(rows, args.l2, names), fitted).dump(args.write)
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
