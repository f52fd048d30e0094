"""Budget policy: what a budget does when it runs out, per branch or for the whole run.

Per branch (the branch is pruned, the others go on):

* ``max_depth`` — a message deeper than the cap is not delivered; its branch is pruned;
* ``max_breadth`` — at most this many branches are opened per alternative kind in a run; when a
  step offers more, the best-scored (``score`` field, ties by order) are kept, the rest pruned;
* ``max_retries`` — retry signals honoured per branch; the one past the cap prunes the branch.

Run-wide (the run stops and the roles' ``finalize`` gives the best grounded answer so far):
``max_turns`` (messages), ``max_llm_calls``, ``max_tokens``, ``timeout_s``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kgteam.protocols.budgets import Budgets, BudgetUsage

RUN_WIDE = ("max_turns", "max_llm_calls", "max_tokens", "timeout_s")
PER_BRANCH = ("max_depth", "max_breadth", "max_retries")


@dataclass
class StopReason:
    """Why a run stopped: ``done``, ``no_answer``, a budget name, ``cancelled`` or ``error``."""

    reason: str
    limit: float | None = None
    used: float | None = None
    error: str | None = None

    @property
    def is_budget(self) -> bool:
        return self.reason in RUN_WIDE or self.reason in PER_BRANCH


@dataclass
class BudgetPolicy:
    budgets: Budgets
    started: float = field(default_factory=time.monotonic)
    used: BudgetUsage = field(default_factory=BudgetUsage)
    stop: StopReason | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def remaining_s(self) -> float:
        return self.budgets.timeout_s - self.elapsed()

    def limit(self, name: str) -> float:
        return float(getattr(self.budgets, name))

    def set_stop(self, reason: str, *, limit: float | None = None, used: float | None = None,
                 error: str | None = None) -> bool:
        """First reason wins; True when this call set it."""
        if self.stop is not None:
            return False
        self.stop = StopReason(reason, limit, used, error)
        return True

    def clock_ok(self) -> bool:
        """False (and the stop set) once ``timeout_s`` has passed."""
        self.used.seconds = self.elapsed()
        if self.stop is None and self.used.seconds >= self.budgets.timeout_s:
            self.set_stop("timeout_s", limit=self.budgets.timeout_s, used=self.used.seconds)
        return self.stop is None

    def turn(self) -> bool:
        """Count one role message; False (and the stop set) past ``max_turns``."""
        self.used.turns += 1
        if self.used.turns > self.budgets.max_turns:
            self.set_stop("max_turns", limit=self.budgets.max_turns, used=self.used.turns)
            return False
        return True

    def depth_ok(self, depth: int) -> bool:
        self.used.depth = max(self.used.depth, depth)
        return depth <= self.budgets.max_depth

    def retry_ok(self, branch_retries: int) -> bool:
        self.used.retries = max(self.used.retries, branch_retries)
        return branch_retries <= self.budgets.max_retries

    def breadth_capacity(self, opened: int) -> int:
        """How many more branches of one alternative kind may open."""
        return max(0, self.budgets.max_breadth - opened)
