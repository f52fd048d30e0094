"""The model contract every role uses; implementations: OpenAI-compatible client, scripted model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from kgteam.protocols.errors import KgteamError

ChatMessage = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": ...}


@dataclass
class ChatReply:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    usage_estimated: bool = False  # True when the server sent no usage and tokens are chars/4


class ModelError(KgteamError):
    """A model call failed for good (after retries); ``permanent`` means retrying will not help."""

    def __init__(self, message: str, *, permanent: bool = True, status: int | None = None):
        super().__init__(message)
        self.permanent = permanent
        self.status = status


class ChatModel(Protocol):
    """``role`` lets scripted models key replies and traces attribute calls."""

    name: str

    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        role: str,
        json_schema: dict[str, Any] | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> ChatReply: ...
