"""Routes: which payload kind (optionally with conditions) goes to which role(s).

``when`` maps a field to a condition; all must hold. The field is a dotted path into the payload
(``status``, ``evidence.triples``) or, with the prefix ``envelope.``, one of the envelope's
``depth``, ``branch``, ``attempt`` or ``sender``. A condition is a value (equality), a list (one of)
or an operator mapping such as ``{lt: max_depth}``; a budget name as an operand means that
budget's limit in the running team, so "deeper while depth < max_depth" needs no copied number.

A route with ``join`` waits for sibling branches (``all``: until every sibling branch has
produced this kind or ended; ``first``: the first one, then the others are pruned) and hands
their payloads together to its target as one :class:`~kgteam.protocols.payloads.Join`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Operator = Literal["eq", "ne", "lt", "le", "gt", "ge", "in", "not_in"]
OPERATORS: tuple[str, ...] = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in")
ENVELOPE_PREFIX = "envelope."
ENVELOPE_FIELDS: dict[str, type] = {"depth": int, "branch": int, "attempt": int, "sender": str}
BUDGET_OPERANDS = ("max_depth", "max_breadth", "max_retries", "max_turns", "max_llm_calls", "max_tokens")
JoinMode = Literal["all", "first"]


class Route(BaseModel):
    """``kind`` (``"*"`` = any) from ``sender`` (any when unset) to the roles in ``to``."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    to: list[str]
    when: dict[str, Any] = Field(default_factory=dict)
    sender: str | None = None
    join: JoinMode | None = None


def is_operator_condition(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(k in OPERATORS for k in value)
