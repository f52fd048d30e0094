"""Routing: which roles receive an envelope. A pure function so playbooks can be tested without a bus.

Rules (all of a route's conditions must hold):

* ``route.kind`` equals the payload kind (``"*"`` matches any kind);
* ``route.sender``, when given, equals the envelope's sender;
* every ``route.when`` entry holds: the key is a dotted path into the payload
  (``"evidence.triples"``, ``"queries.0.row_count"``) or ``envelope.depth`` / ``envelope.branch`` /
  ``envelope.attempt`` / ``envelope.sender``; the condition is a value (equality), a list (one of)
  or operators (``{lt: max_depth}``) whose operand may name a budget. A missing field never matches.

The result keeps the order of ``routes`` and, inside a route, the order of ``to``; a role named
by several matching routes appears once, at its first position. So delivery order is
deterministic and under the playbook author's control.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from kgteam.protocols.budgets import Budgets
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.routes import BUDGET_OPERANDS, ENVELOPE_PREFIX, Route, is_operator_condition

_MISSING = object()


def resolve_path(obj: Any, path: str) -> Any:
    """Follow a dotted path through pydantic models, mappings and sequences; ``_MISSING`` if absent."""
    current = obj
    for part in path.split("."):
        if isinstance(current, BaseModel):
            if part in type(current).model_fields or hasattr(current, part):
                current = getattr(current, part, _MISSING)
            else:
                return _MISSING
        elif isinstance(current, Mapping):
            current = current.get(part, _MISSING)
        elif isinstance(current, Sequence) and not isinstance(current, str | bytes):
            try:
                current = current[int(part)]
            except (ValueError, IndexError):
                return _MISSING
        else:
            return _MISSING
        if current is _MISSING:
            return _MISSING
    return current


def _normalise(value: Any) -> Any:
    """Compare enum-like and model values by their plain form."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


def _equal(actual: Any, expected: Any) -> bool:
    # bool is an int in Python: keep True != 1 so ``when: {verdict: 1}`` is not silently true
    if isinstance(actual, bool) != isinstance(expected, bool):
        return False
    return actual == expected


def _operand(value: Any, budgets: Budgets | None) -> Any:
    if isinstance(value, str) and value in BUDGET_OPERANDS and budgets is not None:
        return getattr(budgets, value)
    return value


def _compare(actual: Any, op: str, operand: Any) -> bool:
    if op == "eq":
        return _equal(actual, operand)
    if op == "ne":
        return not _equal(actual, operand)
    if op in ("in", "not_in"):
        options = operand if isinstance(operand, list | tuple | set | frozenset) else [operand]
        inside = any(_equal(actual, o) for o in options)
        return inside if op == "in" else not inside
    if isinstance(actual, bool) or not isinstance(actual, int | float) or not isinstance(operand, int | float):
        return False
    return {"lt": actual < operand, "le": actual <= operand, "gt": actual > operand, "ge": actual >= operand}[op]


def condition_holds(target: Any, path: str, expected: Any, budgets: Budgets | None = None) -> bool:
    actual = resolve_path(target, path)
    if actual is _MISSING:
        return False
    actual = _normalise(actual)
    if is_operator_condition(expected):
        return all(_compare(actual, op, _operand(v, budgets)) for op, v in expected.items())
    if isinstance(expected, list | tuple | set | frozenset):
        return any(_equal(actual, option) for option in expected)
    return _equal(actual, expected)


def route_matches(envelope: Envelope, route: Route, budgets: Budgets | None = None) -> bool:
    if route.kind != "*" and route.kind != envelope.kind:
        return False
    if route.sender is not None and route.sender != envelope.sender:
        return False
    for path, expected in route.when.items():
        if path.startswith(ENVELOPE_PREFIX):
            target: Any = envelope
            path = path[len(ENVELOPE_PREFIX):]
        else:
            target = envelope.payload
        if not condition_holds(target, path, expected, budgets):
            return False
    return True


def matching_routes(envelope: Envelope, routes: list[Route], budgets: Budgets | None = None) -> list[Route]:
    return [r for r in routes if route_matches(envelope, r, budgets)]


def route(envelope: Envelope, routes: list[Route], budgets: Budgets | None = None) -> list[str]:
    """Recipients of ``envelope``: matching routes' targets, in route order, without duplicates."""
    recipients: list[str] = []
    seen: set[str] = set()
    for candidate in matching_routes(envelope, routes, budgets):
        for name in candidate.to:
            if name not in seen:
                seen.add(name)
                recipients.append(name)
    return recipients
