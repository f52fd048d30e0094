"""The absent model: ``--model none`` runs a team on its deterministic scorers alone.

Every LLM decision in kgteam goes through :mod:`kgteam.roles.choice`, which sees
``available = False`` and lets the scorer decide without a call; a role that calls the model
directly gets a clear, permanent :class:`ModelError`. No server is started.
"""

from __future__ import annotations

from typing import Any

from kgteam.llm.base import ChatMessage, ChatReply, ModelError

NO_MODEL = "none"


class NoModel:
    """A ``ChatModel`` that is not there (for CI, users without an LLM, and measuring the floor)."""

    name = NO_MODEL
    available = False

    async def chat(self, messages: list[ChatMessage], *, role: str, json_schema: dict[str, Any] | None = None,
                   temperature: float = 0.0, max_tokens: int | None = None, **kwargs: Any) -> ChatReply:
        raise ModelError(f"role {role!r} asked for a model, but this team runs with '--model none' "
                         "(deterministic scorers only)", permanent=True)


def model_available(model: Any) -> bool:
    """False for :class:`NoModel` (also behind the runtime's accounting wrapper)."""
    return bool(getattr(model, "available", True))
