"""Routing: which roles receive an envelope. A pure function so playbooks can be tested without a bus.

Rules (all of a route's conditions must hold):

* ``route.kind`` equals the payload kind (``"*"`` matches any kind);
* ``route.sender``, when given, equals the envelope's sender;
* every ``route.when`` entry matches the payload: the key is a field name or a dotted path into
  nested models/dicts/lists (``"evidence.triples"``, ``"queries.0.row_count"``); the value is
  compared for equality, except a list, which means "one of". A missing field never matches.

The result keeps the order of ``routes`` and, inside a route, the order of ``to``; a role named
by several matching routes appears once, at its first position. So delivery order is
deterministic and under the playbook author's control.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from kgteam.protocols.envelope import Envelope
from kgteam.protocols.routes import Route

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


def condition_holds(payload: Any, path: str, expected: Any) -> bool:
    actual = resolve_path(payload, path)
    if actual is _MISSING:
        return False
    actual = _normalise(actual)
    if isinstance(expected, list | tuple | set | frozenset):
        return any(_equal(actual, option) for option in expected)
    return _equal(actual, expected)


def _equal(actual: Any, expected: Any) -> bool:
    # bool is an int in Python: keep True != 1 so ``when: {verdict: 1}`` is not silently true
    if isinstance(actual, bool) != isinstance(expected, bool):
        return False
    return actual == expected


def route_matches(envelope: Envelope, route: Route) -> bool:
    if route.kind != "*" and route.kind != envelope.kind:
        return False
    if route.sender is not None and route.sender != envelope.sender:
        return False
    return all(condition_holds(envelope.payload, path, value) for path, value in route.when.items())


def route(envelope: Envelope, routes: list[Route]) -> list[str]:
    """Recipients of ``envelope``: matching routes' targets, in route order, without duplicates."""
    recipients: list[str] = []
    seen: set[str] = set()
    for candidate in routes:
        if route_matches(envelope, candidate):
            for name in candidate.to:
                if name not in seen:
                    seen.add(name)
                    recipients.append(name)
    return recipients
