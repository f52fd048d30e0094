"""Checks on a team's message graph, from the roles' typed contracts and the routes.

* every route's kind is produced by some role that can reach it (or by the user / supervisor),
  and its targets have a handler for it (a join route's target handles ``join``);
* every ``when`` condition names a field the payload (or envelope) has, with a value its type
  can take — a ``Literal`` field accepts only its literals;
* every role is reached from the question, and the answer role is among them;
* every kind a role reads from its lineage is produced upstream of it;
* every kind a role produces is routed, read downstream, the answer, or declared ``informs``;
* every tool a role needs is installed and granted.

Each problem is a :class:`ConfigIssue` at the line where the route or role was written.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from kgteam.config.resolve import Origin, ResolvedTeam
from kgteam.config.yaml_source import ConfigIssue, field_path
from kgteam.protocols.payloads import PAYLOAD_TYPES, kind_of
from kgteam.protocols.routes import (
    BUDGET_OPERANDS,
    ENVELOPE_FIELDS,
    ENVELOPE_PREFIX,
    OPERATORS,
    Route,
    is_operator_condition,
)

USER, SUPERVISOR = "user", "supervisor"
SUPERVISOR_KINDS = ("join", "branch_pruned", "budget_exceeded")
ANSWER = "answer"
Add = Callable[[Origin, Any, str], None]


def _issue(origin: Origin, extra: Any, message: str) -> ConfigIssue:
    loc = (*origin.loc, *extra) if extra else origin.loc
    line = origin.lines.line_of(loc) if origin.lines is not None else None
    return ConfigIssue(origin.source, line, field_path(loc), message)


# ---------------------------------------------------------------- when conditions


def _unwrap(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _unwrap(args[0]) if len(args) == 1 else tp
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    return tp


def _field_type(model: type[BaseModel], path: list[str]) -> tuple[Any, str | None]:
    """The annotation at ``path`` in ``model``, or (None, problem)."""
    tp: Any = model
    for i, part in enumerate(path):
        tp = _unwrap(tp)
        origin = typing.get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            fields = tp.model_fields
            if part not in fields:
                return None, (f"{tp.__name__} has no field {part!r}; fields: {', '.join(f for f in fields if f != 'kind')}")
            tp = fields[part].annotation
        elif origin in (list, tuple):
            if not part.isdigit():
                return None, f"{'.'.join(path[:i]) or 'value'} is a list: use an index, not {part!r}"
            tp = typing.get_args(tp)[0] if typing.get_args(tp) else Any
        elif origin is dict or tp is Any:
            return Any, None
        else:
            return None, f"{'.'.join(path[:i])} has no fields (it is {getattr(tp, '__name__', tp)})"
    return _unwrap(tp), None


def _value_problem(tp: Any, value: Any) -> str | None:
    """Why ``value`` can never equal a value of type ``tp`` (None when it can)."""
    if typing.get_origin(tp) is Literal:
        allowed = typing.get_args(tp)
        if value not in allowed or isinstance(value, bool) != any(isinstance(a, bool) for a in allowed if a == value):
            return f"{value!r} is not one of {', '.join(repr(a) for a in allowed)}"
        return None
    if tp is bool and not isinstance(value, bool):
        return f"{value!r} is not a boolean (true/false)"
    if tp in (int, float) and (isinstance(value, bool) or not isinstance(value, int | float)):
        return f"{value!r} is not a number"
    if tp is str and not isinstance(value, str):
        return f"{value!r} is not a string"
    return None


def check_when(route: Route, add: Callable[[Any, str], None]) -> None:
    payload_cls = PAYLOAD_TYPES.get(route.kind)
    for key, condition in route.when.items():
        where = ("when", key)
        if not isinstance(key, str) or not key:
            add(where, "a condition needs a field name")
            continue
        if key.startswith(ENVELOPE_PREFIX):
            name = key[len(ENVELOPE_PREFIX):]
            if name not in ENVELOPE_FIELDS:
                add(where, f"the envelope has no field {name!r}; conditions may test "
                           f"{', '.join(ENVELOPE_PREFIX + f for f in ENVELOPE_FIELDS)}")
                continue
            tp: Any = ENVELOPE_FIELDS[name]
        elif payload_cls is None:
            continue  # kind "*" or unknown kind (reported elsewhere): fields cannot be checked
        else:
            tp, problem = _field_type(payload_cls, key.split("."))
            if problem:
                add(where, problem)
                continue
        values: list[Any]
        if is_operator_condition(condition):
            values = []
            for op, operand in condition.items():
                if op in ("lt", "le", "gt", "ge"):
                    numeric = isinstance(operand, int | float) and not isinstance(operand, bool)
                    if not numeric and operand not in BUDGET_OPERANDS:
                        add(where, f"{op} needs a number or a budget name ({', '.join(BUDGET_OPERANDS)}), "
                                   f"got {operand!r}")
                    elif tp not in (int, float, Any):
                        add(where, f"{op} compares numbers, but {key} is not a number")
                elif op in ("in", "not_in"):
                    values += operand if isinstance(operand, list) else [operand]
                elif not (operand in BUDGET_OPERANDS and tp in (int, float)):
                    values.append(operand)
        elif isinstance(condition, dict):
            add(where, f"unknown operator(s) {sorted(set(condition) - set(OPERATORS))}; "
                       f"use {', '.join(OPERATORS)}")
            continue
        else:
            values = condition if isinstance(condition, list) else [condition]
        for value in values:
            if value is not None and (problem := _value_problem(tp, value)):
                add(where, f"{route.kind}.{key}: {problem}")


# ---------------------------------------------------------------- the graph


def _kinds(classes: tuple[type, ...]) -> set[str]:
    return {kind_of(c) for c in classes}


class TeamGraph:
    """Roles as producers/consumers of payload kinds, wired by routes."""

    def __init__(self, team: ResolvedTeam, classes: dict[str, type]):
        self.team = team
        self.classes = classes  # instance -> Role class (only the ones that loaded)
        self.produces: dict[str, set[str]] = {USER: {"question"}, SUPERVISOR: set(SUPERVISOR_KINDS)}
        self.consumes: dict[str, set[str]] = {}
        self.reads: dict[str, set[str]] = {}
        self.informs: dict[str, set[str]] = {}
        for inst, cls in classes.items():
            self.produces[inst] = set(cls.produces)
            self.consumes[inst] = set(cls.consumes)
            self.reads[inst] = _kinds(cls.reads)
            self.informs[inst] = _kinds(cls.informs)

    def _route_carries(self, route: Route, producer: str) -> set[str]:
        """Kinds ``route`` takes from ``producer``."""
        if route.sender is not None and route.sender != producer:
            return set()
        made = self.produces.get(producer, set())
        return set(made) if route.kind == "*" else ({route.kind} & made)

    def edges(self) -> dict[str, set[str]]:
        """producer -> roles that receive something from it (and can handle it)."""
        out: dict[str, set[str]] = {p: set() for p in self.produces}
        for route in self.team.routes:
            for producer in self.produces:
                carried = self._route_carries(route, producer)
                if not carried:
                    continue
                for target in route.to:
                    handles = self.consumes.get(target, set())
                    if (route.join and "join" in handles) or (carried & handles):
                        out[producer].add(target)
                        if route.join:
                            out.setdefault(SUPERVISOR, set()).add(target)
        return out

    def reachable(self, start: str = USER) -> set[str]:
        edges = self.edges()
        seen: set[str] = set()
        frontier = [start]
        while frontier:
            node = frontier.pop()
            for nxt in edges.get(node, ()):
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        return seen

    def upstream(self, role: str) -> set[str]:
        """Everything that can send work towards ``role`` (the user always can)."""
        return {p for p in self.produces if p == USER or role in self.reachable(p)}


def check_graph(team: ResolvedTeam, classes: dict[str, type], add: Add) -> None:
    graph = TeamGraph(team, classes)
    reached = graph.reachable(USER)
    # routes: produced by someone who can reach them; handled by the targets
    for route, origin in zip(team.routes, team.route_origins, strict=False):
        if route.kind == "*" or route.kind not in PAYLOAD_TYPES:
            continue
        producers = [p for p in graph.produces if graph._route_carries(route, p)]
        live = [p for p in producers if p in (USER, SUPERVISOR) or p in reached]
        if not producers:
            who = f" from {route.sender!r}" if route.sender else ""
            add(origin, ("kind",), f"route for {route.kind!r}{who}: no role of this team produces it")
        elif not live:
            add(origin, ("kind",), f"route for {route.kind!r}: only {', '.join(sorted(producers))} produce it, "
                                   "and no route reaches them")
        for j, target in enumerate(route.to):
            if target not in graph.consumes:
                continue  # unknown or broken role: reported by the name checks
            wanted = "join" if route.join else route.kind
            if wanted not in graph.consumes[target]:
                add(origin, ("to", j), f"role {target!r} has no handler for {wanted!r}; it handles "
                                       f"{', '.join(sorted(graph.consumes[target])) or 'nothing'}")
        check_when(route, lambda extra, msg, o=origin: add(o, extra, msg))
    # roles: reached, reads produced upstream, outputs go somewhere
    read_downstream: dict[str, set[str]] = {}
    for inst in classes:
        if inst in reached:
            for kind in graph.reads[inst] | graph.consumes[inst]:
                read_downstream.setdefault(kind, set()).add(inst)
    for inst, cls in classes.items():
        origin = team.role_origins.get(inst, Origin("<team>", None, ("roles", inst)))
        if inst not in reached:
            add(origin, (), f"role {inst!r} is never reached: no route from the question leads to it")
            continue
        upstream = graph.upstream(inst)
        for kind in sorted(graph.reads[inst]):
            if not any(kind in graph.produces.get(p, set()) for p in upstream):
                add(origin, (), f"role {inst!r} ({cls.name}) reads {kind!r}, but nothing upstream of it produces it")
        for kind in sorted(graph.produces[inst]):
            routed = any(graph._route_carries(r, inst) & {kind} for r in team.routes)
            readers = read_downstream.get(kind, set()) - {inst}
            if not (routed or kind == ANSWER or kind in graph.informs[inst] or readers):
                add(origin, (), f"role {inst!r} ({cls.name}) produces {kind!r}, but no route takes it and no role "
                                f"reads it (route it, or list it in the role's 'informs')")
    if team.answer_role and team.answer_role in classes and team.answer_role not in reached:
        origin = team.answer_role_origin or Origin("<team>", None, ("answer_role",))
        add(origin, (), f"the answer role {team.answer_role!r} is never reached from the question")
