"""Routes: which payload kind (optionally with field conditions) goes to which role(s)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Route(BaseModel):
    """``when`` maps payload field names to required values (all must match), e.g.
    ``{"status": "answered"}`` or ``{"verdict": False}``; ``sender`` restricts the producer."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    to: list[str]
    when: dict[str, Any] = Field(default_factory=dict)
    sender: str | None = None
