"""Retry hints: what the advisor tells earlier phases so the next attempt is *different*.

The hint travels as JSON text in ``RetrySignal.hint`` so it is readable by people, usable in a
prompt, and exact for the deterministic fallbacks.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field, ValidationError


class RetryHint(BaseModel):
    note: str = ""
    hops: int | None = None  # parse with this many hops
    k: int | None = None  # keep this many entity/relation candidates
    exclude: list[str] = Field(default_factory=list)  # tried combination keys, do not repeat
    tried_hops: list[int] = Field(default_factory=list)

    def to_text(self) -> str:
        return self.model_dump_json(exclude_defaults=True)


def parse_hint(text: str | None) -> RetryHint:
    if not text:
        return RetryHint()
    try:
        return RetryHint.model_validate(json.loads(text))
    except (ValueError, ValidationError):
        return RetryHint(note=text)
