"""Fitting a score -> probability map from eval rows (isotonic regression by pool-adjacent-violators).

Isotonic regression keeps the order of the raw scores (a higher score never gets a lower
probability) and assumes no shape beyond that, which suits a hand-made scorer whose scale means
nothing. It is fitted here, on ``(confidence, correct)`` pairs of run files; the result is a
:class:`~kgteam.protocols.calibration.CalibrationMap`, which roles apply at run time without
importing this module. Why a self-written PAV instead of scikit-learn: docs/decisions.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from kgteam.eval.metrics import expected_calibration_error
from kgteam.eval.report import latest_records
from kgteam.eval.runner import read_run
from kgteam.protocols.calibration import CalibrationMap, FittedOn


class CalibrationInputError(ValueError):
    """Run files that give nothing to fit or measure; the message says which and why."""


def pool_adjacent_violators(xs: Sequence[float], ys: Sequence[float],
                            weights: Sequence[float] | None = None) -> list[tuple[float, float, float, float]]:
    """Least-squares non-decreasing fit of ``ys`` over ``xs``: blocks ``(x_low, x_high, y, weight)``.

    Pairs with the same x are pooled first (one score, one probability); then neighbouring blocks
    whose means fall are merged until the means rise, each merge taking the weighted mean.
    ``weights`` (default 1 each) say how much each pair counts.
    """
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    blocks: list[list[float]] = []  # [x_low, x_high, sum_wy, weight]
    for i in order:
        x, y, w = float(xs[i]), float(ys[i]), float(weights[i]) if weights is not None else 1.0
        if blocks and blocks[-1][1] == x:
            blocks[-1][2] += w * y
            blocks[-1][3] += w
        else:
            blocks.append([x, x, w * y, w])
        while len(blocks) > 1 and blocks[-2][2] / blocks[-2][3] >= blocks[-1][2] / blocks[-1][3]:
            last = blocks.pop()
            blocks[-1][1] = last[1]
            blocks[-1][2] += last[2]
            blocks[-1][3] += last[3]
    return [(lo, hi, s / w, w) for lo, hi, s, w in blocks]


def merge_small_blocks(blocks: list[tuple[float, float, float, float]], min_share: float = 0.0,
                       min_width: float = 0.0) -> list[tuple[float, float, float, float]]:
    """Merge each block holding less than ``min_share`` of the weight, or spanning less than
    ``min_width`` of the score, into the neighbour nearest in probability, until none is left: a
    step fitted on a handful of pairs, or on scores 0.0003 apart, is noise (one set's cluster of
    answers at one score), not something a new KG will repeat. Stays monotone."""
    out = [list(b) for b in blocks]
    total = sum(b[3] for b in out)

    def span(k: int) -> float:  # the scores a block answers for: from the block below's top to its own
        return out[k][1] - (out[k - 1][1] if k else 0.0)

    def small(k: int) -> bool:
        return out[k][3] < min_share * total or span(k) < min_width

    while len(out) > 1 and any(small(k) for k in range(len(out))):
        i = min((k for k in range(len(out)) if small(k)), key=lambda k: (span(k), out[k][3]))
        if i == 0:
            j = 1
        elif i == len(out) - 1:
            j = i - 1
        else:
            j = i - 1 if out[i][2] - out[i - 1][2] <= out[i + 1][2] - out[i][2] else i + 1
        a, b = sorted((i, j))
        w = out[a][3] + out[b][3]
        out[a:b + 1] = [[out[a][0], out[b][1], (out[a][2] * out[a][3] + out[b][2] * out[b][3]) / w, w]]
    return [(lo, hi, y, w) for lo, hi, y, w in out]


def fit_isotonic(pairs: Sequence[tuple[float, bool]], *, sets: Sequence[str] = (),
                 weights: Sequence[float] | None = None, min_share: float = 0.0,
                 min_width: float = 0.0) -> CalibrationMap:
    """The map fitted on ``pairs``: each block's ends become breakpoints at the block's mean.
    ``weights``: per pair (e.g. each set counting the same); ``min_share``: the least share of the
    weight a step may rest on; ``min_width``: the least span of scores (0, 0: plain isotonic
    regression)."""
    if not pairs:
        raise CalibrationInputError("no (confidence, correct) pairs to fit on")
    if weights is not None and (len(weights) != len(pairs) or any(not w > 0 for w in weights)):
        raise CalibrationInputError("weights: one positive weight per pair")
    blocks = pool_adjacent_violators([c for c, _ in pairs], [float(ok) for _, ok in pairs], weights)
    if min_share > 0 or min_width > 0:
        blocks = merge_small_blocks(blocks, min_share, min_width)
    xs: list[float] = []
    ys: list[float] = []
    for lo, hi, y, _ in blocks:
        for x in (lo, hi) if hi > lo else (lo,):
            xs.append(x)
            ys.append(min(1.0, max(0.0, y)))
    method = "isotonic" + (", sets weighted equally" if weights is not None else "") + (
        f", steps of >= {min_share:.0%} of the weight" if min_share > 0 else "") + (
        f", steps >= {min_width} wide" if min_width > 0 else "")
    fitted = FittedOn(sets=list(sets), n=len(pairs), date=datetime.now(UTC).isoformat(timespec="seconds"),
                      method=method)
    return CalibrationMap(xs=xs, ys=ys, fitted_on=fitted)


def set_weights(groups: Sequence[Sequence[tuple[float, bool]]]) -> list[float]:
    """Weights that make each group (a run file, a set) count the same, whatever its size: a map
    for KGs nobody fitted should not lean toward the set that happened to have most questions."""
    return [1.0 / len(g) for g in groups for _ in g]


def apply_map(mapping: CalibrationMap, pairs: Sequence[tuple[float, bool]]) -> list[tuple[float, bool]]:
    return [(mapping.calibrate(c), ok) for c, ok in pairs]


def ece_before_after(mapping: CalibrationMap, pairs: Sequence[tuple[float, bool]],
                     n_bins: int = 10) -> tuple[float | None, float | None]:
    return expected_calibration_error(pairs, n_bins), expected_calibration_error(apply_map(mapping, pairs), n_bins)


def pairs_from_runs(paths: Sequence[str | Path]) -> list[tuple[float, bool]]:
    """The raw (pre-calibration) pairs of every run file (latest record per id): a map is fitted on
    the scorer's own scores, whatever map the run applied. A missing, unreadable or corrupt file,
    or one with no pair at all, is a :class:`CalibrationInputError` naming it."""
    pairs: list[tuple[float, bool]] = []
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise CalibrationInputError(f"run file not found: {path}")
        try:
            records = latest_records(read_run(path))
        except (OSError, UnicodeDecodeError) as exc:
            raise CalibrationInputError(f"cannot read {path}: {exc}") from None
        except ValueError as exc:  # an invalid record before the last line
            raise CalibrationInputError(f"{exc} (not a run file written by `kgteam eval --out`?)") from None
        found = [p for r in records if (p := r.calibration_pair(raw=True)) is not None]
        if not found:
            raise CalibrationInputError(
                f"{path}: {len(records)} records, none with a confidence and a grade (a run file written by "
                f"`kgteam eval --out` with a team that reports confidences is needed)")
        pairs += found
    return pairs
