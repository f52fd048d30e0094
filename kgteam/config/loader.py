"""Load a team YAML into a :class:`TeamSpec`, with errors that name file, line and field.

Loading runs in three passes, each collecting every problem it finds before failing:

1. YAML → plain data, remembering the line of every key and list item (PyYAML node marks),
   expanding ``${ENV}`` / ``${ENV:-default}`` and rejecting duplicate keys;
2. structure: pydantic ``TeamSpec`` (``extra="forbid"``); error ``loc`` paths map back to lines;
3. names: roles, backends, tools, payload kinds, playbooks and route targets are checked
   against what is installed (entry points) — unknown names list the installed ones.
"""

from __future__ import annotations

import contextlib
import difflib
import reprlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kgteam.config import registry
from kgteam.config.partial import UNCHECKED_ROLE, checkable
from kgteam.config.resolve import Origin, ResolvedTeam, playbook_names, resolve_team
from kgteam.config.safe_yaml import LIMITS, YamlRefused, decode
from kgteam.config.schema import RoleSpec, TeamSpec
from kgteam.config.team_graph import check_graph
from kgteam.config.yaml_source import (
    ConfigIssue,
    LoadedYaml,
    Loc,
    TeamConfigError,
    describe_error,
    field_path,
    read_yaml,
    validation_issues,
)
from kgteam.prompts import PromptNotFound
from kgteam.roles.base import NoSettings, prompt_for
from kgteam.sessions.records import SessionStoreError
from kgteam.sessions.urls import resolve_relative

SPECIAL_SENDERS = ("user", "supervisor")


def _normalise(loaded: LoadedYaml, source: str) -> None:
    """Friendly shapes → canonical ones, moving line numbers along so errors still point right."""
    data = loaded.data
    if not isinstance(data, dict):
        return
    roles = data.get("roles")
    if isinstance(roles, list):
        new: dict[Any, Any] = {}
        for i, item in enumerate(roles):
            name = item if isinstance(item, str) else (item.get("name") or item.get("role")) \
                if isinstance(item, dict) else None
            if not isinstance(name, str):
                problem = "a role needs 'role: <installed role>' (and optionally 'name')" if name is None \
                    else f"a role's name must be text (got {reprlib.repr(name)})"
                loaded.issues.append(ConfigIssue(source, loaded.line_of(("roles", i)), f"roles[{i}]", problem))
                continue
            if name in new:
                loaded.issues.append(ConfigIssue(source, loaded.line_of(("roles", i)), f"roles[{i}]",
                                                 f"duplicate role instance name {name!r}"))
                continue
            if isinstance(item, dict):
                item = {k: v for k, v in item.items() if k != "name"}
                item.setdefault("role", name)
            new[name] = item if isinstance(item, dict) else {"role": item}
            for loc, line in list(loaded.lines.items()):
                if loc[:2] == ("roles", i):
                    loaded.lines[("roles", name, *loc[2:])] = line
        data["roles"] = new
    elif isinstance(roles, dict):
        for key, spec in roles.items():
            if spec is None or isinstance(spec, str):
                roles[key] = {"role": spec or key}
                loaded.lines[("roles", key, "role")] = loaded.lines.get(("roles", key), 1)
            elif isinstance(spec, dict) and "role" not in spec:
                roles[key] = {"role": key, **spec}
                loaded.lines[("roles", key, "role")] = loaded.lines.get(("roles", key), 1)
    for key in ("routes", "extra_routes"):
        routes = data.get(key)
        if isinstance(routes, list):
            for i, route in enumerate(routes):
                if isinstance(route, dict) and isinstance(route.get("to"), str):
                    route["to"] = [route["to"]]
                    loaded.lines[(key, i, "to", 0)] = loaded.lines.get((key, i, "to"), 1)


def _resolve_paths(data: dict[str, Any], base_dir: Path) -> None:
    """Relative paths in a team file are relative to the file, not to the working directory."""

    def fix(container: Any, key: str) -> None:
        if isinstance(container, dict) and isinstance(container.get(key), str):
            p = Path(container[key]).expanduser()
            container[key] = str(p if p.is_absolute() else (base_dir / p).resolve())

    kg = data.get("kg")
    fix(kg, "path")
    if isinstance(kg, dict):
        fix(kg.get("labels"), "path")
    fix(data.get("model"), "script")
    if isinstance(data.get("calibration"), str) and data["calibration"].strip().lower() not in ("", "auto", "none"):
        fix(data, "calibration")
    if isinstance(data.get("sessions"), str) and data["sessions"].strip():
        with contextlib.suppress(SessionStoreError):  # a malformed URL is reported by the schema check
            data["sessions"] = resolve_relative(data["sessions"], base_dir)
    roles = data.get("roles")
    if isinstance(roles, dict):
        for spec in roles.values():
            if isinstance(spec, dict):
                fix(spec.get("model"), "script")


# ---------------------------------------------------------------- pass 3: names


def _unknown(group: registry.Group, name: str) -> str:
    try:
        registry.entry(group, name)
    except registry.UnknownName as exc:
        close = difflib.get_close_matches(name, exc.installed, n=1)
        return str(exc) + (f" (did you mean {close[0]!r}?)" if close else "")
    return ""


def _check_backend_options(spec: TeamSpec, loc: Loc, add: Any) -> None:
    """Options a backend's constructor would reject (``kg.options: {bogus: 1}``)."""
    from kgteam.config.backend_calls import check_call, labels_call, store_call

    call = store_call(spec.kg) if loc == ("kg", "backend") else labels_call(spec.kg)
    if call is not None and call.options and (problem := check_call(call)):
        add(call.where, problem)


def check_names(spec: TeamSpec, loaded: LoadedYaml, source: str) -> list[ConfigIssue]:
    """Installed names, settings, tools and the message graph; every problem, in line order."""
    from kgteam.protocols.payloads import PAYLOAD_TYPES

    issues: list[ConfigIssue] = []

    def add(loc: Loc, message: str) -> None:
        issues.append(ConfigIssue(source, loaded.line_of(loc), field_path(loc), message))

    def add_at(origin: Origin, extra: Loc, message: str) -> None:
        loc = (*origin.loc, *extra)
        line = origin.lines.line_of(loc) if origin.lines is not None else None
        issues.append(ConfigIssue(origin.source, line, field_path(loc), message))

    for loc, name in ((("kg", "backend"), spec.kg.backend),
                      (("kg", "labels", "backend"), spec.kg.labels.backend if spec.kg.labels else None)):
        if name and (msg := _unknown("backends", name)):
            add(loc, msg)
        elif name:
            _check_backend_options(spec, loc, add)

    if spec.calibration.strip().lower() not in ("auto", "none"):
        from kgteam.protocols.calibration import CalibrationError, CalibrationMap

        try:
            CalibrationMap.load(spec.calibration)
        except CalibrationError as exc:
            add(("calibration",), f"{exc} (give 'auto', 'none' or a map file written by `kgteam calibrate`)")

    if spec.playbook and spec.playbook not in playbook_names():
        known = playbook_names()
        close = difflib.get_close_matches(spec.playbook, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        add(("playbook",), f"unknown playbook {spec.playbook!r}{hint}; installed playbooks: "
                           f"{', '.join(known) or '(none)'}")
        return _sorted(issues)
    try:
        team: ResolvedTeam = resolve_team(spec, source=source, lines=loaded)
    except TeamConfigError as exc:  # a broken playbook file: its own file:line issues
        return _sorted(issues + exc.issues)

    # roles: installed, settings valid, tools installed and granted, model override valid
    classes: dict[str, type] = {}
    for inst, rspec in team.roles.items():
        origin = team.role_origins[inst]
        if rspec.role == UNCHECKED_ROLE:  # its entry was rejected by the structure check
            continue
        if msg := _unknown("roles", rspec.role):
            add_at(origin, ("role",), msg + "; a plugin role must be pip-installed (it registers under the "
                                             "'kgteam.roles' entry point)")
            continue
        try:
            cls = registry.role_class(rspec.role)
        except (registry.PluginLoadError, ImportError, TypeError) as exc:
            add_at(origin, ("role",), str(exc))
            continue
        classes[inst] = cls
        issues.extend(_check_settings(cls, rspec, origin))
        granted = rspec.tools if rspec.tools is not None else list(getattr(cls, "tools", ()))
        for j, tool in enumerate(granted):
            if msg := _unknown("tools", tool):
                where = ("tools", j) if rspec.tools is not None else ("role",)
                add_at(origin, where, f"role {inst!r} is granted tool {tool!r}: {msg}")
        for tool in getattr(cls, "tools", ()):
            if rspec.tools is not None and tool not in rspec.tools:
                add_at(origin, ("tools",), f"role {inst!r} ({rspec.role}) calls tool {tool!r}, which its 'tools' "
                                           f"list does not grant")
        for name in getattr(cls, "prompts", ()):
            try:
                prompt_for(cls, name)
            except PromptNotFound as exc:
                add_at(origin, ("role",), str(exc))
        if rspec.model is not None:
            try:
                rspec.model.apply_to(spec.model)
            except ValidationError as exc:
                for error in exc.errors():
                    add_at(origin, ("model", *error["loc"]),
                           describe_error(error, type(spec.model), tuple(error["loc"])))

    instances = sorted(team.roles)
    # Importing roles may register plugin payload kinds, so look them up only now.
    kinds = sorted(PAYLOAD_TYPES)
    for route, origin in zip(team.routes, team.route_origins, strict=False):
        if route.kind != "*" and route.kind not in kinds:
            close = difflib.get_close_matches(route.kind, kinds, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            add_at(origin, ("kind",), f"unknown payload kind {route.kind!r}{hint}; known kinds: {', '.join(kinds)}")
        for j, target in enumerate(route.to):
            if target not in team.roles:
                add_at(origin, ("to", j), f"route target {target!r} is not a role of this team; "
                                          f"roles: {', '.join(instances)}")
        if route.sender and route.sender not in team.roles and route.sender not in SPECIAL_SENDERS:
            add_at(origin, ("sender",), f"sender {route.sender!r} is not a role of this team; "
                                        f"roles: {', '.join(instances)} (or user, supervisor)")
    for key, value in (("entry", spec.entry), ("answer_role", spec.answer_role)):
        if value and value not in team.roles:
            add((key,), f"{value!r} is not a role of this team; roles: {', '.join(instances)}")
    check_graph(team, classes, add_at)
    return _sorted(issues)


def _sorted(issues: list[ConfigIssue]) -> list[ConfigIssue]:
    """Line order within each file (the team file first), duplicates dropped."""
    unique = list(dict.fromkeys(issues))
    return sorted(unique, key=lambda i: (i.file != (unique[0].file if unique else ""), i.file, i.line or 0))


def _check_settings(cls: type, rspec: RoleSpec, origin: Origin) -> list[ConfigIssue]:
    settings_model = getattr(cls, "settings_model", None)
    if settings_model is None or (settings_model is NoSettings and not rspec.settings):
        return []
    if settings_model is NoSettings:
        loc = (*origin.loc, "settings")
        line = origin.lines.line_of(loc) if origin.lines is not None else None
        return [ConfigIssue(origin.source, line, field_path(loc), f"role {rspec.role!r} takes no settings")]
    try:
        settings_model.model_validate(rspec.settings)
    except ValidationError as exc:
        if origin.lines is None:
            return [ConfigIssue(origin.source, None, field_path((*origin.loc, "settings")), str(exc))]
        return validation_issues(exc, settings_model, origin.lines, origin.source, prefix=(*origin.loc, "settings"))
    return []


# ---------------------------------------------------------------- entry points


def load_team_text(text: str, source: str = "<team>", *, base_dir: Path | None = None,
                   environ: dict[str, str] | None = None, check_installed: bool = True) -> TeamSpec:
    """Validate a team file's text. Raises :class:`TeamConfigError` and nothing else: a failure no
    check foresaw is reported as an internal error of this file, never as a traceback."""
    try:
        return _load_team_text(text, source, base_dir=base_dir, environ=environ, check_installed=check_installed)
    except TeamConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - fail closed: the caller gets one error type (the file reproduces it)
        raise TeamConfigError([ConfigIssue(source, None, "", f"internal error while reading {source} "
                                                             f"({type(exc).__name__}); please report it")]) from None


def _load_team_text(text: str, source: str, *, base_dir: Path | None, environ: dict[str, str] | None,
                    check_installed: bool) -> TeamSpec:
    loaded = read_yaml(text, source, environ)
    if loaded.issues and loaded.data is None:
        raise TeamConfigError(loaded.issues)
    if not isinstance(loaded.data, dict):
        raise TeamConfigError([*loaded.issues, ConfigIssue(source, loaded.line_of(()), "",
                                                           "a team file must be a mapping (name: ..., roles: ...)")])
    _normalise(loaded, source)
    _resolve_paths(loaded.data, base_dir or Path.cwd())
    # every problem of the file at once, in line order: reading (missing env vars, duplicate
    # keys), structure, then installed names and the message graph once the structure holds
    issues = list(loaded.issues)
    try:
        spec = TeamSpec.model_validate(loaded.data)
    except ValidationError as exc:
        issues += _new(validation_issues(exc, TeamSpec, loaded, source), issues)
        # one pass reports everything: the later checks still run on the fields that validate
        part = checkable(loaded, source)
        issues += _new(part.issues, issues)
        if check_installed and part.spec is not None:
            issues += _new(check_names(part.spec, loaded, source), issues)
        raise TeamConfigError(_sorted(issues)) from None
    if check_installed:
        issues += _new(check_names(spec, loaded, source), issues)
    if issues:
        raise TeamConfigError(_sorted(issues))
    return spec


def _new(found: list[ConfigIssue], known: list[ConfigIssue]) -> list[ConfigIssue]:
    """Issues not already reported at the same place (a missing env var also fails its field)."""
    seen = {(i.line, i.field) for i in known}
    return [i for i in found if (i.line, i.field) not in seen]


def load_team(path: str | Path, *, environ: dict[str, str] | None = None, check_installed: bool = True) -> TeamSpec:
    """Read, validate and resolve-check a team file. Raises :class:`TeamConfigError`."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(LIMITS.max_bytes + 1)  # a larger file is refused without reading it all
        text = decode(data)
    except OSError as exc:
        raise TeamConfigError([ConfigIssue(str(path), None, "", f"cannot read team file: {exc.strerror or exc}")]) \
            from None
    except YamlRefused as exc:
        raise TeamConfigError([ConfigIssue(str(path), exc.line, "", exc.message)]) from None
    return load_team_text(text, str(path), base_dir=path.resolve().parent, environ=environ,
                          check_installed=check_installed)
