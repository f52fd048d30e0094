"""Accounting the runtime puts between roles and their model / tools.

It counts LLM calls, tokens and latency per role, enforces the model budgets (a role cannot
spend past them even if it forgets to look), times tool calls and records both in the trace.
"""

from __future__ import annotations

import time
from typing import Any

from kgteam.agents.supervisor import ModelWait, Supervisor
from kgteam.llm.base import ChatMessage, ChatModel, ChatReply
from kgteam.llm.retries import ModelRetry, retries_heard_by
from kgteam.protocols.budgets import BudgetExhausted
from kgteam.roles.base import TraceSink
from kgteam.tools.toolbox import ToolCall, ToolHook


class AccountingModel:
    """Wraps a :class:`ChatModel`; raises :class:`BudgetExhausted` before a call past ``max_llm_calls``
    and after a call that pushes tokens past ``max_tokens``.

    The exhausted budget is also noted on the run state, so a role that swallows the exception
    (e.g. into a deterministic fallback) still ends the run at the end of its step.
    """

    def __init__(self, inner: ChatModel, state: Supervisor, trace: TraceSink, *, role: str | None = None):
        self._inner = inner
        self._state = state
        self._trace = trace
        self._role = role
        self.name = getattr(inner, "name", type(inner).__name__)

    def __getattr__(self, item: str) -> Any:  # expose e.g. structured-output capabilities
        return getattr(self._inner, item)

    async def chat(self, messages: list[ChatMessage], *, role: str, json_schema: dict[str, Any] | None = None,
                   temperature: float = 0.0, max_tokens: int | None = None, **kwargs: Any) -> ChatReply:
        state = self._state
        limits = state.budgets
        who = self._role or role
        if state.used.llm_calls >= limits.max_llm_calls:
            state.budget_stop("max_llm_calls", state.used.llm_calls)
            raise BudgetExhausted("max_llm_calls", limits.max_llm_calls, state.used.llm_calls)
        if state.used.tokens >= limits.max_tokens:
            state.budget_stop("max_tokens", state.used.tokens)
            raise BudgetExhausted("max_tokens", limits.max_tokens, state.used.tokens)
        t0 = time.perf_counter()
        wait = ModelWait(who, self.name, getattr(self._inner, "base_url", None))
        state.model_waits[id(wait)] = wait
        def heard(retry: ModelRetry) -> None:  # a retry is said while it waits, not only after the last one
            self._trace.record("llm_retry", role=who, retry=retry.retry, of=retry.of, reason=retry.reason,
                               message=retry.message, wait_s=retry.wait_s)

        try:
            with retries_heard_by(heard):
                reply = await self._inner.chat(messages, role=role, json_schema=json_schema,
                                               temperature=temperature, max_tokens=max_tokens, **kwargs)
        except Exception as exc:
            self._trace.record("llm_error", role=who, error=f"{type(exc).__name__}: {exc}",
                               seconds=round(time.perf_counter() - t0, 6))
            raise
        finally:
            state.model_waits.pop(id(wait), None)
        seconds = reply.latency_s or (time.perf_counter() - t0)
        state.record_model_call(who, reply.prompt_tokens, reply.completion_tokens, seconds)
        self._trace.record("llm_call", role=who, model=reply.model or self.name,
                           prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
                           latency_s=round(seconds, 6), structured=json_schema is not None)
        if state.used.tokens > limits.max_tokens:
            state.budget_stop("max_tokens", state.used.tokens)
            raise BudgetExhausted("max_tokens", limits.max_tokens, state.used.tokens)
        return reply


def _summarise(value: Any) -> Any:
    """Keep trace rows small: sizes for collections, short reprs for the rest."""
    if isinstance(value, list | tuple | set | dict):
        return {"type": type(value).__name__, "len": len(value)}
    rows = getattr(value, "rows", None)
    if isinstance(rows, list):
        return {"type": type(value).__name__, "rows": len(rows)}
    if isinstance(value, str):  # SPARQL and search text are worth keeping whole
        return value if len(value) <= 4000 else value[:3997] + "..."
    if value is None or isinstance(value, bool | int | float):
        return value
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def tool_trace_hook(state: Supervisor, trace: TraceSink, role: str) -> ToolHook:
    """Times every tool call of one role and records it in the trace."""

    def hook(call: ToolCall) -> None:
        state.metrics.tool_s += call.seconds
        trace.record("tool_call", role=role, tool=call.tool,
                     kwargs={k: _summarise(v) for k, v in call.arguments.items()},
                     result=None if call.error else _summarise(call.result), error=call.error,
                     seconds=round(call.seconds, 6))

    return hook
