"""Token estimates for servers (and scripted models) that report no usage, so budgets still bite."""

from __future__ import annotations

from collections.abc import Iterable

from kgteam.llm.base import ChatMessage


def estimate_tokens(text: str) -> int:
    """About four characters per token for English; never zero for non-empty text."""
    if not text:
        return 0
    return max(1, len(text) // 4)


def estimate_prompt_tokens(messages: Iterable[ChatMessage]) -> int:
    return sum(estimate_tokens(m.get("content") or "") for m in messages)
