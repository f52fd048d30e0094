"""A learned map from a raw answer score to a probability of being right, and applying it.

The map is fitted by ``kgteam calibrate`` (``kgteam/eval/calibration.py``) from eval rows and
stored as a small JSON file: monotone ``(x, y)`` breakpoints, read by linear interpolation, plus
what it was fitted on. This module is the runtime half only (load, apply), so any layer can use it
without importing the evaluation code; it imports nothing of kgteam's.

Apply it in one line: ``CalibrationMap.load(path).calibrate(raw)``, or ``calibrator(path)(raw)``,
where a ``None`` path gives the raw score back (no map configured).

A team applies one map to every final answer (the supervisor does, so every playbook's answers
mean the same thing): the team file's ``calibration`` names a file, ``none``, or ``auto`` — the
map shipped in ``kgteam/data`` for the team's playbook and model when there is one
(:func:`resolve_calibration`). A map fitted for one scorer says nothing about another, so
``auto`` applies none to a model or playbook it was not fitted on.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator


class CalibrationError(ValueError):
    """A calibration file that cannot be read; the message names the file and what is wrong."""


class FittedOn(BaseModel):
    """Where a map came from: the run files (or set names), how many pairs, when."""

    sets: list[str] = Field(default_factory=list)
    n: int = 0
    date: str = ""
    method: str = "isotonic"


SHAPES = ("path", "chain", "literal", "count", "superlative", "comparative", "ask", "intersection", "negation",
          "union")


def signal_features(raw: float, signals: Any = None) -> dict[str, float]:
    """What a signal map weighs: the score on the logit scale and, when the answer carries its
    reading's signals (``ReadingSignals``), the content words left unread, the share of relations
    no word named, a described topic, an inferred relation, the number of values and the shape."""
    p = min(1 - 1e-4, max(1e-4, raw))
    out = {"score": math.log(p / (1 - p))}
    if signals is None:
        return out
    steps = getattr(signals, "steps", 0) or 0
    out.update({
        "unread": float(min(len(getattr(signals, "unread", []) or []), 3)),
        "unnamed": (getattr(signals, "unnamed", 0) or 0) / steps if steps else 0.0,
        "steps": float(min(steps, 4)),
        "described": float(bool(getattr(signals, "described", False))),
        "inferred": float(bool(getattr(signals, "inferred", False))),
        "values": math.log1p(getattr(signals, "values", 0) or 0),
    })
    shape = getattr(signals, "shape", "")
    out.update({f"shape:{s}": float(shape == s) for s in SHAPES})
    return out


class SignalWeights(BaseModel):
    """A logistic map over :func:`signal_features`, fitted on the answers a team states
    (``benchmarks/fit_prior.py``): graded, and never past ``ceiling`` (a few hundred graded
    answers cannot vouch for "sure")."""

    bias: float = 0.0
    weights: dict[str, float] = Field(default_factory=lambda: {"score": 1.0})
    ceiling: float = Field(0.89, ge=0.5, le=1.0)

    def probability(self, raw: float, signals: Any = None) -> float:
        feats = signal_features(raw, signals)
        z = self.bias + sum(w * feats.get(k, 0.0) for k, w in self.weights.items())
        return min(self.ceiling, 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))))


class CalibrationMap(BaseModel):
    """Monotone non-decreasing breakpoints; a raw score between two is interpolated linearly,
    one outside them takes the nearest end's value (never extrapolated past [0, 1]).

    A map with ``signals`` is a logistic map over the answer's reading signals instead; it was
    fitted on stated answers, so it maps those only (an "I don't know" keeps its score), and its
    breakpoints are the same curve read at the score alone (for an answer without signals)."""

    xs: list[float]
    ys: list[float]
    fitted_on: FittedOn = Field(default_factory=FittedOn)
    name: str = ""  # what the answer says it was calibrated with (the file's stem when empty)
    signals: SignalWeights | None = None

    @model_validator(mode="after")
    def _check(self) -> CalibrationMap:
        if not self.xs or len(self.xs) != len(self.ys):
            raise ValueError("xs and ys must be non-empty and of the same length")
        if any(b < a for a, b in zip(self.xs, self.xs[1:], strict=False)):
            raise ValueError("xs must be sorted")
        if any(b < a for a, b in zip(self.ys, self.ys[1:], strict=False)):
            raise ValueError("ys must be non-decreasing (the map is monotone)")
        if any(not 0.0 <= y <= 1.0 for y in self.ys):
            raise ValueError("ys are probabilities in [0, 1]")
        return self

    def calibrate(self, raw: float, signals: Any = None) -> float:
        """The probability that an answer with score ``raw`` (and these reading signals) is right."""
        if self.signals is not None and signals is not None:
            return self.signals.probability(raw, signals)
        xs, ys = self.xs, self.ys
        if raw <= xs[0]:
            return ys[0]
        if raw >= xs[-1]:
            return ys[-1]
        i = bisect.bisect_right(xs, raw)  # xs[i-1] <= raw < xs[i]
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 if x1 == x0 else y0 + (y1 - y0) * (raw - x0) / (x1 - x0)

    def dump(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.model_dump(), indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> CalibrationMap:
        path = Path(path)
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
            loaded = cls.model_validate(data)
            if not loaded.name:
                loaded.name = path.stem
            return loaded
        except OSError as exc:
            raise CalibrationError(f"{path}: cannot read: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise CalibrationError(f"{path}: not JSON: {exc}") from None
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "file"
            raise CalibrationError(f"{path}: not a calibration map ({where}: {first['msg']})") from None


def calibrator(path: str | Path | None) -> Callable[[float], float]:
    """The map at ``path`` as a function of the raw score; the identity when ``path`` is None.
    Loaded once, here, so a broken file fails when the team is built, not mid-question."""
    if path is None:
        return lambda raw: raw
    return CalibrationMap.load(path).calibrate


AUTO = "auto"
NONE = "none"
_BUILTIN_DIR = "data"


def builtin_map_name(playbook: str | None, model: str | None) -> str:
    """The file name a shipped map has for a playbook and model kind (``none`` or ``model``)."""
    kind = "none" if model in (None, "", NONE) else "model"
    return f"calibration-{playbook or 'custom'}-{kind}.json"


def resolve_calibration(setting: str | None, *, playbook: str | None, model: str | None,
                        base_dir: str | Path | None = None) -> CalibrationMap | None:
    """The map a team uses. ``auto`` (the default): the shipped map for this playbook and model
    kind, or none when nothing was fitted for them; ``none``: raw scores; else a file path
    (relative paths against ``base_dir``, the team file's folder). A broken file raises
    :class:`CalibrationError` now, when the team is built."""
    if setting is None or setting.strip().lower() == NONE:
        return None
    if setting.strip().lower() == AUTO:
        if model not in (None, "", NONE):
            return None  # only the model-free scorer has been fitted; a model's scores are its own
        shipped = resources.files("kgteam").joinpath(_BUILTIN_DIR, builtin_map_name(playbook, model))
        if not shipped.is_file():
            return None
        mapping = CalibrationMap.model_validate_json(shipped.read_text(encoding="utf-8"))
        mapping.name = mapping.name or f"builtin:{builtin_map_name(playbook, model)[:-5]}"
        return mapping
    path = Path(setting).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    if not path.is_file():
        raise CalibrationError(f"calibration map not found: {path} (give a file written by `kgteam calibrate`, "
                               "'auto' or 'none')")
    return CalibrationMap.load(path)
