"""A learned map from a raw answer score to a probability of being right, and applying it.

The map is fitted by ``kgteam calibrate`` (``kgteam/eval/calibration.py``) from eval rows and
stored as a small JSON file: monotone ``(x, y)`` breakpoints, read by linear interpolation, plus
what it was fitted on. This module is the runtime half only (load, apply), so any layer can use it
without importing the evaluation code; it imports nothing of kgteam's.

Apply it in one line: ``CalibrationMap.load(path).calibrate(raw)``, or ``calibrator(path)(raw)``,
where a ``None`` path gives the raw score back (no map configured).
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable
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


class CalibrationMap(BaseModel):
    """Monotone non-decreasing breakpoints; a raw score between two is interpolated linearly,
    one outside them takes the nearest end's value (never extrapolated past [0, 1])."""

    xs: list[float]
    ys: list[float]
    fitted_on: FittedOn = Field(default_factory=FittedOn)

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

    def calibrate(self, raw: float) -> float:
        """The probability that an answer with score ``raw`` is right."""
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
            return cls.model_validate(data)
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
