"""Turn ``playbook: <name>`` plus the YAML's own roles/routes into the team that actually runs.

A playbook supplies default role instances, routes, entry and answer role, and budgets; roles
written in the YAML override (same instance name) or extend the playbook's; ``extra_routes`` are
appended; budget fields written in the YAML override the playbook's defaults one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgteam.config.schema import RoleSpec, TeamSpec, normalise_roles
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.routes import Route


@dataclass
class ResolvedTeam:
    roles: dict[str, RoleSpec]
    routes: list[Route]
    entry: str | None
    answer_role: str | None
    budgets: Budgets


def _playbooks() -> dict[str, Any]:
    try:
        from kgteam.roles.playbooks import PLAYBOOKS
    except ImportError:
        return {}
    return dict(PLAYBOOKS)


def playbook_names() -> list[str]:
    return list(_playbooks())


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if value is not None:
            return value
    return None


def _as_role_spec(value: Any) -> RoleSpec:
    if isinstance(value, RoleSpec):
        return value
    if isinstance(value, dict):
        return RoleSpec.model_validate(value)
    return RoleSpec(role=str(value))


def resolve_team(spec: TeamSpec) -> ResolvedTeam:
    roles: dict[str, RoleSpec] = {}
    routes: list[Route] = []
    entry = answer_role = None
    budgets = spec.budgets
    if spec.playbook:
        books = _playbooks()
        if spec.playbook not in books:
            raise ValueError(f"unknown playbook {spec.playbook!r}; built-in playbooks: {', '.join(books) or '(none)'}")
        book = books[spec.playbook]
        raw_roles = _get(book, "roles") or {}
        if isinstance(raw_roles, list | tuple):
            raw_roles = list(raw_roles)
        for inst, value in normalise_roles(raw_roles).items():
            roles[inst] = _as_role_spec(value)
        routes = [r if isinstance(r, Route) else Route.model_validate(r) for r in (_get(book, "routes") or [])]
        entry = _get(book, "entry", "entry_role")
        answer_role = _get(book, "answer_role")
        book_budgets = _get(book, "default_budgets", "budgets")
        if isinstance(book_budgets, Budgets):
            written = spec.budgets.model_dump(include=spec.budgets.model_fields_set)
            budgets = book_budgets.model_copy(update=written)
    roles.update(spec.roles)
    if spec.routes is not None:
        routes = list(spec.routes)
    routes = routes + list(spec.extra_routes)
    return ResolvedTeam(roles=roles, routes=routes, entry=spec.entry or entry,
                        answer_role=spec.answer_role or answer_role, budgets=budgets)
