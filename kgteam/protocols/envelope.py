"""The envelope: routing, lineage and accounting around every payload on the bus.

``parents`` are the ids of the messages an output answers (one for a normal step, several for
a join); ``step`` is the id of the step that produced it, shared by everything one role returned
for one message, so a role can read what was produced *together* with its input (the patterns
that came with a template). ``branch`` says which alternative line of work a message belongs to;
``depth`` counts hops/levels on that branch; ``attempt`` counts retries.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field, field_serializer, field_validator

from kgteam.protocols.evidence import Usage
from kgteam.protocols.payloads import Payload, payload_from_dict


def new_id() -> str:
    return uuid.uuid4().hex


class Envelope(BaseModel):
    id: str = Field(default_factory=new_id)
    session_id: str
    turn: int = 0  # index of the question within the session
    sender: str  # role name, "user" or "supervisor"
    kind: str = ""
    payload: Payload
    parents: list[str] = Field(default_factory=list)
    step: str = ""  # the step that produced it (co-products share it); "" for the user's question
    depth: int = 0
    branch: int = 0
    attempt: int = 0
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    usage: Usage = Field(default_factory=Usage)

    def model_post_init(self, __context: Any) -> None:
        if not self.kind:
            self.kind = self.payload.kind
        elif self.kind != self.payload.kind:
            raise ValueError(f"envelope kind {self.kind!r} != payload kind {self.payload.kind!r}")

    @field_validator("payload", mode="before")
    @classmethod
    def _decode_payload(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return payload_from_dict(value)
        return value

    @field_serializer("payload")
    def _encode_payload(self, payload: Payload) -> dict[str, Any]:
        return payload.model_dump(mode="json")
