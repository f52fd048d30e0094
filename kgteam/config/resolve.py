"""Turn ``playbook: <name>`` plus the YAML's own roles/routes into the team that actually runs.

A playbook supplies default role instances, routes, entry and answer role, and budgets; roles
written in the YAML override (same instance name) or extend the playbook's; ``routes`` replace the
playbook's, ``extra_routes`` are appended; budget fields written in the YAML override the
playbook's defaults one by one. Every role and route remembers where it was written (team file or
playbook file, with its line), so checks can point at the right line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgteam.config.playbooks import LoadedPlaybook, load_playbook, playbook_names
from kgteam.config.schema import RoleSpec, SubteamSpec, TeamSpec
from kgteam.config.yaml_source import ConfigIssue, LoadedYaml, Loc, TeamConfigError
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
        for slot, sub in book.spec.subteams.items():
            chosen = spec.subteams.get(slot)
            _add_subteam(slot, sub, chosen.playbook if chosen else sub.playbook, book, roles, role_origins,
                         routes, route_origins)
    unknown = sorted(set(spec.subteams) - (set(load_playbook(spec.playbook).spec.subteams) if spec.playbook else set()))
    if unknown:
        raise TeamConfigError([ConfigIssue(source, lines.line_of(("subteams", unknown[0])) if lines else None,
                                           f"subteams.{unknown[0]}",
                                           f"the playbook has no sub-team slot {unknown[0]!r}")])
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


def playbook_parts(name: str, choices: dict[str, str] | None = None) -> tuple[dict[str, RoleSpec], list[Route]]:
    """An installed playbook's roles and routes with its sub-teams filled in (``choices``: slot ->
    playbook, else the playbook's own picks), for scripts and tests that run a playbook directly."""
    book = load_playbook(name)
    roles = dict(book.spec.roles)
    routes = list(book.spec.routes)
    role_origins: dict[str, Origin] = {}
    route_origins: list[Origin] = []
    for slot, sub in book.spec.subteams.items():
        _add_subteam(slot, sub, (choices or {}).get(slot, sub.playbook), book, roles, role_origins, routes,
                     route_origins)
    return roles, routes


def _add_subteam(slot: str, sub: SubteamSpec, playbook: str, parent: LoadedPlaybook, roles: dict[str, RoleSpec],
                 role_origins: dict[str, Origin], routes: list[Route], route_origins: list[Origin]) -> None:
    """The sub-team's roles under ``<slot>_<role>``, its routes renamed to match and fenced to its
    own senders, its user question taken from ``question_from`` and its answer sent to ``answer_to``."""
    if playbook == parent.spec.name:
        raise TeamConfigError([ConfigIssue(parent.source, parent.lines.line_of(("subteams", slot)), f"subteams.{slot}",
                                           "a playbook cannot contain itself")])
    book = load_playbook(playbook)
    if book.spec.subteams:
        raise TeamConfigError([ConfigIssue(book.source, book.lines.line_of(("subteams",)), "subteams",
                                           f"playbook {playbook!r} has sub-teams itself; one level is supported")])
    prefix = f"{slot}_"

    def named(role: str) -> str:
        return prefix + role

    own = {named(r) for r in book.spec.roles}
    for inst, rspec in book.spec.roles.items():
        roles[named(inst)] = rspec
        role_origins[named(inst)] = Origin(book.source, book.lines, ("roles", inst))
    for i, r in enumerate(book.spec.routes):
        when = dict(r.when)
        if "envelope.sender" in when:
            value = when["envelope.sender"]
            when["envelope.sender"] = [named(v) for v in value] if isinstance(value, list) else named(value)
        sender = r.sender
        if sender == "user":
            sender = sub.question_from
        elif sender is not None:
            sender = named(sender)
        elif "envelope.sender" not in when:  # its own messages only, never the parent team's
            when["envelope.sender"] = sorted(own)
        routes.append(r.model_copy(update={"sender": sender, "to": [named(t) for t in r.to], "when": when}))
        route_origins.append(Origin(book.source, book.lines, ("routes", i)))
    if book.spec.answer_role is None:
        raise TeamConfigError([ConfigIssue(book.source, None, "answer_role",
                                           f"playbook {playbook!r} names no answer_role, so it cannot be a sub-team")])
    routes.append(Route(kind="answer", sender=named(book.spec.answer_role), to=list(sub.answer_to)))
    route_origins.append(Origin(parent.source, parent.lines, ("subteams", slot)))


__all__ = ["Origin", "ResolvedTeam", "playbook_names", "playbook_parts", "resolve_team"]
