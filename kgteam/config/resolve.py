"""Turn ``playbook: <name>`` plus the YAML's own roles/routes into the team that actually runs.

A playbook supplies default role instances, routes, entry and answer role, and budgets; roles
written in the YAML override (same instance name) or extend the playbook's; ``routes`` replace the
playbook's, ``extra_routes`` are appended; budget fields written in the YAML override the
playbook's defaults one by one. Every role and route remembers where it was written (team file or
playbook file, with its line), so checks can point at the right line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgteam.config.playbooks import load_playbook, playbook_names
from kgteam.config.schema import RoleSpec, TeamSpec
from kgteam.config.yaml_source import LoadedYaml, Loc
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.routes import Route


@dataclass(frozen=True)
class Origin:
    """Where something was written: ``source`` file, its line map, and the path inside it."""

    source: str
    lines: LoadedYaml | None
    loc: Loc

    def line(self) -> int | None:
        return self.lines.line_of(self.loc) if self.lines is not None else None


@dataclass
class ResolvedTeam:
    roles: dict[str, RoleSpec]
    routes: list[Route]
    entry: str | None
    answer_role: str | None
    budgets: Budgets
    role_origins: dict[str, Origin] = field(default_factory=dict)
    route_origins: list[Origin] = field(default_factory=list)
    answer_role_origin: Origin | None = None  # the file (team or playbook) that named the answer role


def resolve_team(spec: TeamSpec, *, source: str = "<team>", lines: LoadedYaml | None = None) -> ResolvedTeam:
    roles: dict[str, RoleSpec] = {}
    role_origins: dict[str, Origin] = {}
    routes: list[Route] = []
    route_origins: list[Origin] = []
    entry = answer_role = None
    answer_role_origin = Origin(source, lines, ("answer_role",)) if spec.answer_role else None
    budgets = spec.budgets
    if spec.playbook:
        book = load_playbook(spec.playbook)
        for inst, rspec in book.spec.roles.items():
            roles[inst] = rspec
            role_origins[inst] = Origin(book.source, book.lines, ("roles", inst))
        routes = list(book.spec.routes)
        route_origins = [Origin(book.source, book.lines, ("routes", i)) for i in range(len(routes))]
        entry, answer_role = book.spec.entry, book.spec.answer_role
        if answer_role_origin is None:
            answer_role_origin = Origin(book.source, book.lines, ("answer_role",))
        written = spec.budgets.model_dump(include=spec.budgets.model_fields_set)
        budgets = book.spec.budgets.model_copy(update=written)
    for inst, rspec in spec.roles.items():
        roles[inst] = rspec
        role_origins[inst] = Origin(source, lines, ("roles", inst))
    if spec.routes is not None:
        routes = list(spec.routes)
        route_origins = [Origin(source, lines, ("routes", i)) for i in range(len(routes))]
    routes += list(spec.extra_routes)
    route_origins += [Origin(source, lines, ("extra_routes", i)) for i in range(len(spec.extra_routes))]
    return ResolvedTeam(roles=roles, routes=routes, entry=spec.entry or entry,
                        answer_role=spec.answer_role or answer_role, budgets=budgets,
                        role_origins=role_origins, route_origins=route_origins,
                        answer_role_origin=answer_role_origin)


__all__ = ["Origin", "ResolvedTeam", "playbook_names", "resolve_team"]
