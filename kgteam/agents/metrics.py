"""Run metrics: model usage per role and where the time went (for answers, /budget and benchmarks)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kgteam.protocols.budgets import BudgetUsage
from kgteam.protocols.evidence import Usage


@dataclass
class RunMetrics:
    usage: Usage = field(default_factory=Usage)  # model usage of the whole run
    role_usage: dict[str, Usage] = field(default_factory=dict)
    runtime_s: float = 0.0  # supervisor bookkeeping (the overhead benchmark reads it)
    role_s: float = 0.0  # inside Role.handle (tools and model included)
    tool_s: float = 0.0
    model_s: float = 0.0
    steps: int = 0

    def record_model_call(self, role: str, prompt_tokens: int, completion_tokens: int, seconds: float,
                          used: BudgetUsage) -> None:
        call = Usage(llm_calls=1, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, seconds=seconds)
        self.usage = self.usage + call
        self.role_usage[role] = self.role_usage.get(role, Usage()) + call
        used.llm_calls = self.usage.llm_calls
        used.tokens = self.usage.total_tokens
        self.model_s += seconds
