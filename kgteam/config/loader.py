"""Load a team YAML into a :class:`TeamSpec`, with errors that name file, line and field.

Loading runs in three passes, each collecting every problem it finds before failing:

1. YAML → plain data, remembering the line of every key and list item (PyYAML node marks),
   expanding ``${ENV}`` / ``${ENV:-default}`` and rejecting duplicate keys;
2. structure: pydantic ``TeamSpec`` (``extra="forbid"``); error ``loc`` paths map back to lines;
3. names: roles, backends, tools, payload kinds, playbooks and route targets are checked
   against what is installed (entry points) — unknown names list the installed ones.
"""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from kgteam.config import registry
from kgteam.config.env import MissingEnvVar, expand_env
from kgteam.config.resolve import ResolvedTeam, playbook_names, resolve_team
from kgteam.config.schema import RoleSpec, TeamSpec

Loc = tuple[Any, ...]
SPECIAL_SENDERS = ("user", "supervisor")


@dataclass
class ConfigIssue:
    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class TeamConfigError(ValueError):
    """Everything wrong with one team file, each issue with file, line and field."""

    def __init__(self, issues: list[ConfigIssue]):
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))


@dataclass
class LoadedYaml:
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)
    issues: list[ConfigIssue] = field(default_factory=list)

    def line_of(self, loc: Loc) -> int | None:
        """Line of the deepest existing prefix of ``loc`` (a missing field points at its parent)."""
        loc = tuple(loc)
        while loc:
            if loc in self.lines:
                return self.lines[loc]
            loc = loc[:-1]
        return self.lines.get((), 1)


def field_path(loc: Loc) -> str:
    out = ""
    for step in loc:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out += ("." if out else "") + str(step)
    return out


# ---------------------------------------------------------------- pass 1: YAML with lines and env


def read_yaml(text: str, source: str, environ: dict[str, str] | None = None) -> LoadedYaml:
    result = LoadedYaml(data=None)
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        result.issues.append(ConfigIssue(source, line, "", f"YAML syntax error: {problem}"))
        return result
    except yaml.YAMLError as exc:
        result.issues.append(ConfigIssue(source, None, "", f"YAML error: {exc}"))
        return result
    finally:
        loader.dispose()
    if node is None:
        result.issues.append(ConfigIssue(source, 1, "", "the file is empty"))
        return result
    result.lines[()] = node.start_mark.line + 1
    walker = _Walker(loader, source, result, environ)
    result.data = walker.walk(node, ())
    return result


class _Walker:
    def __init__(self, loader: yaml.SafeLoader, source: str, out: LoadedYaml, environ: dict[str, str] | None):
        self.loader, self.source, self.out, self.environ = loader, source, out, environ

    def walk(self, node: yaml.Node, loc: Loc) -> Any:
        if isinstance(node, yaml.MappingNode):
            self.loader.flatten_mapping(node)  # YAML merge keys ("<<: *defaults")
            data: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.loader.construct_object(key_node, deep=True)
                if isinstance(key, list):
                    key = tuple(key)
                line = key_node.start_mark.line + 1
                if key in data:
                    first = self.out.lines.get((*loc, key))
                    self.out.issues.append(ConfigIssue(self.source, line, field_path((*loc, key)),
                                                       f"duplicate key (first defined on line {first})"))
                    continue
                self.out.lines[(*loc, key)] = line
                data[key] = self.walk(value_node, (*loc, key))
            return data
        if isinstance(node, yaml.SequenceNode):
            items = []
            for i, item in enumerate(node.value):
                self.out.lines[(*loc, i)] = item.start_mark.line + 1
                items.append(self.walk(item, (*loc, i)))
            return items
        value = self.loader.construct_object(node, deep=True)
        if isinstance(value, str) and "${" in value:
            try:
                value = expand_env(value, self.environ)
            except MissingEnvVar as exc:
                self.out.issues.append(ConfigIssue(self.source, node.start_mark.line + 1, field_path(loc), str(exc)))
        return value


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
            if name is None:
                loaded.issues.append(ConfigIssue(source, loaded.line_of(("roles", i)), f"roles[{i}]",
                                                 "a role needs 'role: <installed role>' (and optionally 'name')"))
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
    roles = data.get("roles")
    if isinstance(roles, dict):
        for spec in roles.values():
            if isinstance(spec, dict):
                fix(spec.get("model"), "script")


# ---------------------------------------------------------------- pass 2: structure


def _unwrap(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _unwrap(args[0]) if args else tp
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    return tp


def _model_at(root: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    tp: Any = root
    for step in loc:
        tp = _unwrap(tp)
        origin = typing.get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            f = tp.model_fields.get(step) if isinstance(step, str) else None
            if f is None:
                return None
            tp = f.annotation
        elif origin is dict:
            tp = typing.get_args(tp)[1]
        elif origin is list:
            tp = typing.get_args(tp)[0]
        else:
            return None
    tp = _unwrap(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _describe(error: dict[str, Any], root: type[BaseModel], loc: Loc) -> str:
    etype = error["type"]
    if etype == "extra_forbidden":
        parent = _model_at(root, loc[:-1])
        allowed = sorted(parent.model_fields) if parent else []
        msg = f"unknown field {loc[-1]!r}"
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        if close:
            msg += f" (did you mean {close[0]!r}?)"
        if allowed:
            msg += f"; allowed: {', '.join(allowed)}"
        return msg
    if etype == "missing":
        return "required field is missing"
    msg = error["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if etype not in ("value_error", "assertion_error") and "input" in error:
        value = error["input"]
        if not isinstance(value, dict | list):
            msg += f" (got {value!r})"
    return msg


def validation_issues(exc: ValidationError, root: type[BaseModel], loaded: LoadedYaml, source: str,
                      prefix: Loc = ()) -> list[ConfigIssue]:
    issues = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        full = (*prefix, *loc)
        issues.append(ConfigIssue(source, loaded.line_of(full), field_path(full), _describe(error, root, loc)))
    return issues


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
    from kgteam.protocols.payloads import PAYLOAD_TYPES

    issues: list[ConfigIssue] = []

    def add(loc: Loc, message: str) -> None:
        issues.append(ConfigIssue(source, loaded.line_of(loc), field_path(loc), message))

    for loc, name in ((("kg", "backend"), spec.kg.backend),
                      (("kg", "labels", "backend"), spec.kg.labels.backend if spec.kg.labels else None)):
        if name and (msg := _unknown("backends", name)):
            add(loc, msg)
        elif name:
            _check_backend_options(spec, loc, add)

    if spec.playbook and spec.playbook not in playbook_names():
        known = playbook_names()
        add(("playbook",), f"unknown playbook {spec.playbook!r}; built-in playbooks: {', '.join(known) or '(none)'}")
        return issues
    try:
        team: ResolvedTeam = resolve_team(spec)
    except (ValueError, ImportError) as exc:
        add(("playbook",), str(exc))
        return issues

    # roles: installed, settings valid, tools installed, model override valid
    for inst, rspec in team.roles.items():
        from_yaml = inst in spec.roles
        base: Loc = ("roles", inst) if from_yaml else ("playbook",)
        if msg := _unknown("roles", rspec.role):
            add((*base, "role") if from_yaml else base,
                msg + "; a plugin role must be pip-installed (it registers under the 'kgteam.roles' entry point)")
            continue
        try:
            cls = registry.role_class(rspec.role)
        except (registry.PluginLoadError, ImportError) as exc:
            add((*base, "role") if from_yaml else base, str(exc))
            continue
        issues.extend(_check_settings(cls, rspec, base, loaded, source))
        for tool in getattr(cls, "tools", ()):
            if msg := _unknown("tools", tool):
                add((*base, "role"), f"role {rspec.role!r} needs tool {tool!r}: {msg}")
        if rspec.model is not None:
            try:
                rspec.model.apply_to(spec.model)
            except ValidationError as exc:
                for error in exc.errors():
                    add((*base, "model", *error["loc"]), _describe(error, type(spec.model), tuple(error["loc"])))

    instances = sorted(team.roles)
    # Importing roles may register plugin payload kinds, so look them up only now.
    kinds = sorted(PAYLOAD_TYPES)
    for key in ("routes", "extra_routes"):
        routes = getattr(spec, key) or []
        for i, route in enumerate(routes):
            if route.kind not in kinds:
                close = difflib.get_close_matches(route.kind, kinds, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                add((key, i, "kind"), f"unknown payload kind {route.kind!r}{hint}; known kinds: {', '.join(kinds)}")
            for j, target in enumerate(route.to):
                if target not in team.roles:
                    add((key, i, "to", j), f"route target {target!r} is not a role of this team; "
                                           f"roles: {', '.join(instances)}")
            if route.sender and route.sender not in team.roles and route.sender not in SPECIAL_SENDERS:
                add((key, i, "sender"), f"sender {route.sender!r} is not a role of this team; "
                                        f"roles: {', '.join(instances)} (or user, supervisor)")
    for key, value in (("entry", spec.entry), ("answer_role", spec.answer_role)):
        if value and value not in team.roles:
            add((key,), f"{value!r} is not a role of this team; roles: {', '.join(instances)}")
    return issues


def _check_settings(cls: type, rspec: RoleSpec, base: Loc, loaded: LoadedYaml, source: str) -> list[ConfigIssue]:
    settings_model = getattr(cls, "settings_model", None)
    if settings_model is None:
        if rspec.settings:
            return [ConfigIssue(source, loaded.line_of((*base, "settings")), field_path((*base, "settings")),
                                f"role {rspec.role!r} takes no settings")]
        return []
    try:
        settings_model.model_validate(rspec.settings)
    except ValidationError as exc:
        return validation_issues(exc, settings_model, loaded, source, prefix=(*base, "settings"))
    return []


# ---------------------------------------------------------------- entry points


def load_team_text(text: str, source: str = "<team>", *, base_dir: Path | None = None,
                   environ: dict[str, str] | None = None, check_installed: bool = True) -> TeamSpec:
    loaded = read_yaml(text, source, environ)
    if loaded.issues and loaded.data is None:
        raise TeamConfigError(loaded.issues)
    if not isinstance(loaded.data, dict):
        raise TeamConfigError([*loaded.issues, ConfigIssue(source, loaded.line_of(()), "",
                                                           "a team file must be a mapping (name: ..., roles: ...)")])
    _normalise(loaded, source)
    _resolve_paths(loaded.data, base_dir or Path.cwd())
    if loaded.issues:  # missing env vars, duplicate keys: report before structure errors pile up
        raise TeamConfigError(loaded.issues)
    try:
        spec = TeamSpec.model_validate(loaded.data)
    except ValidationError as exc:
        raise TeamConfigError(validation_issues(exc, TeamSpec, loaded, source)) from None
    if check_installed:
        issues = check_names(spec, loaded, source)
        if issues:
            raise TeamConfigError(issues)
    return spec


def load_team(path: str | Path, *, environ: dict[str, str] | None = None, check_installed: bool = True) -> TeamSpec:
    """Read, validate and resolve-check a team file. Raises :class:`TeamConfigError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TeamConfigError([ConfigIssue(str(path), None, "", f"cannot read team file: {exc.strerror or exc}")]) \
            from None
    return load_team_text(text, str(path), base_dir=path.resolve().parent, environ=environ,
                          check_installed=check_installed)
