"""The checkable part of a team file whose structure is broken.

``kgteam validate`` must report every problem in one pass. When pydantic rejects some fields, the
later checks (installed roles, role settings, tools, routes, the message graph) can still run on
the rest: this module removes each rejected field (its default takes its place) or, when a required
field is missing, the smallest thing that holds it, and validates again. Nothing moves, so the
later issues keep their lines and field paths:

- a rejected role instance stays in the team as :data:`UNCHECKED_ROLE` (routes naming it are not
  reported again; the name checks skip it);
- a rejected route becomes :data:`INERT_ROUTE` (no kind, no targets), so later routes keep their index;
- a rejected item of any other list drops the whole list (its default).

Only when the file as a whole is rejected (``loc == ()``, e.g. neither routes nor playbook) is
there nothing left to check.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from kgteam.config.schema import TeamSpec
from kgteam.config.yaml_source import ConfigIssue, LoadedYaml, Loc, describe_error, field_path

UNCHECKED_ROLE = "<not checked: its entry is invalid>"
INERT_ROUTE = {"kind": "*", "to": [], "sender": "supervisor"}
_ROUNDS = 8
_ROUTE_LISTS = ("routes", "extra_routes")


@dataclass
class Checkable:
    """What the later checks can run on (``spec`` None: nothing), and the structure problems that
    only showed once the first ones were removed (a rule over several fields, e.g. "either routes
    or playbook", runs only when every field validates)."""

    spec: TeamSpec | None
    issues: list[ConfigIssue] = field(default_factory=list)


def checkable(loaded: LoadedYaml, source: str) -> Checkable:
    """A spec built from what validates in ``loaded`` (whose data is not changed)."""
    data = copy.deepcopy(loaded.data)
    removed: list[Loc] = []
    issues: list[ConfigIssue] = []
    for round_ in range(_ROUNDS):
        try:
            return Checkable(TeamSpec.model_validate(data), issues)
        except ValidationError as exc:
            errors = exc.errors()
        if round_:  # the first round's errors are already reported by the caller
            issues += [ConfigIssue(source, loaded.line_of(e["loc"]), field_path(e["loc"]),
                                   describe_error(e, TeamSpec, tuple(e["loc"])))
                       for e in errors if not _caused_by(tuple(e["loc"]), removed)]
        locs = {tuple(e["loc"]) for e in errors}
        if () in locs:
            return Checkable(None, issues)
        done: list[Loc] = []
        for loc in sorted(locs, key=len):  # a removed parent takes its children with it
            if any(loc[:len(d)] == d for d in done):
                continue
            where = _prune(data, loc)
            if where is None:
                return Checkable(None, issues)
            done.append(where)
        removed += done
    return Checkable(None, issues)


def _caused_by(loc: Loc, removed: list[Loc]) -> bool:
    """An error that removing ``removed`` caused: at or under a removed value (its required field is
    now missing), or the file-wide rule over routes, playbook and roles after one of them went. A
    rule of the block that held a removed value is still reported ("searxng needs url"), even
    when the removal is what it objects to ("oxigraph needs name" after a name of the wrong type)."""
    if not loc:
        return any(r[0] in ("routes", "playbook", "roles") for r in removed)
    return any(loc[:len(r)] == r for r in removed)


def _prune(data: dict[str, Any], loc: Loc) -> Loc | None:
    """Removes the rejected value at ``loc`` (or what holds a missing one); returns where it cut,
    None when nothing can be removed."""
    roles = data.get("roles")
    if len(loc) >= 2 and loc[0] == "roles" and isinstance(roles, dict) and loc[1] in roles \
            and (len(loc) == 2 or loc[2] == "role"):
        roles[loc[1]] = {"role": UNCHECKED_ROLE}  # keep the instance: routes may name it
        return loc[:2]
    while loc:
        parent, key = _get(data, loc[:-1]), loc[-1]
        if len(loc) == 2 and loc[0] in _ROUTE_LISTS and isinstance(parent, list) \
                and isinstance(key, int) and 0 <= key < len(parent):
            parent[key] = dict(INERT_ROUTE)
            return loc
        if isinstance(parent, dict) and key in parent:
            del parent[key]
            return loc
        if len(loc) == 1:
            return loc if _placeholder(data, key) else None
        loc = loc[:-1]  # a missing field, or an item of a list: remove what holds it
    return None


def _placeholder(data: dict[str, Any], key: Any) -> bool:
    """A missing required top-level text field (``name``) gets an empty value: nothing checks it."""
    field = TeamSpec.model_fields.get(key) if isinstance(key, str) else None
    if field is not None and field.annotation is str:
        data[key] = ""
        return True
    return False


def _get(data: Any, loc: Loc) -> Any:
    for step in loc:
        held = (isinstance(data, dict) and step in data) or (
            isinstance(data, list) and isinstance(step, int) and 0 <= step < len(data))
        if not held:
            return None
        data = data[step]
    return data
