"""Budget limits and usage: set in the team YAML, enforced by the supervisor, shown to roles."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kgteam.protocols.errors import KgteamError


class Budgets(BaseModel):
    """Per-question limits. ``None`` would mean unlimited; every budget has a safe default."""

    model_config = ConfigDict(extra="forbid")

    max_depth: int = Field(3, ge=0, description="hops/levels per branch")
    max_breadth: int = Field(3, ge=1, description="parallel branches / alternative candidate sets")
    max_retries: int = Field(3, ge=0, description="retry signals honoured")
    max_turns: int = Field(60, ge=1, description="messages per question (hard safety cap)")
    max_llm_calls: int = Field(20, ge=0)
    max_tokens: int = Field(60_000, ge=0, description="prompt + completion tokens")
    timeout_s: float = Field(120.0, gt=0)
    max_embed_triples: int = Field(2000, ge=0, description="triples a KG without vectors may embed on the fly "
                                   "per question (PG&AKV's verifier: the linked entities' neighbourhoods)")
    embed_timeout_s: float = Field(2.0, gt=0, description="seconds the on-the-fly embedding may take per question")


class BudgetUsage(BaseModel):
    depth: int = 0
    breadth: int = 0
    retries: int = 0
    turns: int = 0
    llm_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0


class BudgetExhausted(KgteamError):
    """Raised inside a role (e.g. by the accounted model) when a budget is spent.

    Roles should not catch it: the supervisor turns it into ``BudgetExceeded`` and a final answer.
    """

    def __init__(self, budget: str, limit: float, used: float):
        super().__init__(f"budget {budget} exhausted ({used} of {limit})")
        self.budget = budget
        self.limit = limit
        self.used = used
