"""Reading the current question's transcript: roles share state only through messages."""

from __future__ import annotations

from typing import TypeVar

from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Payload, Question
from kgteam.roles.base import RoleContext

P = TypeVar("P", bound=Payload)


def all_of(ctx: RoleContext, cls: type[P], *, sender: str | None = None) -> list[P]:
    out = []
    for env in ctx.transcript:
        if isinstance(env.payload, cls) and (sender is None or env.sender == sender):
            out.append(env.payload)
    return out


def latest(ctx: RoleContext, cls: type[P], *, sender: str | None = None) -> P | None:
    found = all_of(ctx, cls, sender=sender)
    return found[-1] if found else None


def current_question(ctx: RoleContext, message: Envelope | None = None) -> str:
    """The standalone question: the contextualizer's rewrite if there is one, else the user's."""
    if message is not None and isinstance(message.payload, Question):
        return message.payload.text
    q = latest(ctx, Question)
    return q.text if q else ""
