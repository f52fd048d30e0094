"""The reading prior: a semantic reading's confidence from everything it knows about itself.

The scorer's confidence says how far the chosen reading leads its rivals and how well the
question's words named its relations. It does not see what the reading left out (a word it never
read: "how many *major* cities"), whether its topic was itself a description read first, whether
a relation was chosen by an adjective's dimensions rather than named, or how often readings of
its shape are right at all (a count over a wrongly chosen set is a confident wrong number). The
prior is a logistic model over those signals (:class:`ReadingSignals`), fitted on graded answers
of several KGs (``benchmarks/fit_prior.py``; none of the sets it is measured on) and shipped as
``kgteam/data/reading-prior-triad-none.json``; its output is the answer's probability of being
right, so the stating line (``min_confidence``) and the answer's confidence mean one thing. A KG
tuned with its own examples keeps its own map instead.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kgteam.protocols.payloads import ReadingSignals

SHAPES = ("path", "chain", "literal", "count", "superlative", "comparative", "ask", "intersection", "negation",
          "union")
PRIOR_FILE = "reading-prior-triad-none.json"


def features(signals: ReadingSignals) -> dict[str, float]:
    """The prior's inputs: the scorer's confidence on the logit scale, what the reading left unread
    or unnamed, whether it read its topic from a description or chose a relation by an adjective,
    how many values it gives, and its shape."""
    p = min(1 - 1e-4, max(1e-4, signals.score))
    out = {
        "score": math.log(p / (1 - p)),
        "unread": float(min(len(signals.unread), 3)),
        "unnamed": signals.unnamed / signals.steps if signals.steps else 0.0,
        "steps": float(min(signals.steps, 4)),
        "described": float(signals.described),
        "inferred": float(signals.inferred),
        "values": math.log1p(signals.values),
    }
    for shape in SHAPES:
        out[f"shape:{shape}"] = float(signals.shape == shape)
    return out


class ReadingPrior(BaseModel):
    """Logistic weights over :func:`features` (a feature not named weighs nothing)."""

    bias: float = 0.0
    weights: dict[str, float] = Field(default_factory=lambda: {"score": 1.0})
    fitted_on: dict[str, Any] = Field(default_factory=dict)
    name: str = "builtin:reading-prior"

    def probability(self, signals: ReadingSignals) -> float:
        """The probability that an answer of this reading is right."""
        z = self.bias + sum(self.weights.get(k, 0.0) * v for k, v in features(signals).items())
        return round(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))), 4)

    def dump(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.model_dump(), indent=2) + "\n", encoding="utf-8")
        return path


@lru_cache(maxsize=1)
def shipped_prior() -> ReadingPrior | None:
    """The prior shipped in ``kgteam/data`` (None when the package has none)."""
    ref = resources.files("kgteam").joinpath("data", PRIOR_FILE)
    if not ref.is_file():
        return None
    return ReadingPrior.model_validate_json(ref.read_text(encoding="utf-8"))
