"""YAML with line numbers: the shared first pass of team files and playbook files.

Reads YAML into plain data while remembering the line of every key and list item (PyYAML node
marks), expands ``${ENV}`` / ``${ENV:-default}``, rejects duplicate keys, and maps pydantic
validation errors back to ``file:line: field: message`` issues. Hostile text (alias bombs, deep
nesting, custom tags ...) is refused by :mod:`kgteam.config.safe_yaml` before anything is built.
"""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from kgteam.config.env import MissingEnvVar, expand_env
from kgteam.config.safe_yaml import MERGE_TAG, YamlRefused, compose, construct_scalar
from kgteam.protocols.errors import KgteamError

Loc = tuple[Any, ...]


@dataclass(frozen=True)
class ConfigIssue:
    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class TeamConfigError(KgteamError, ValueError):
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
    """Plain data with the line of every key and item; a refused or broken file yields issues, never
    an exception (limits and value checks: :mod:`kgteam.config.safe_yaml`)."""
    result = LoadedYaml(data=None)
    try:
        loader, node = compose(text)
    except YamlRefused as exc:
        result.issues.append(ConfigIssue(source, exc.line, "", exc.message))
        return result
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        result.issues.append(ConfigIssue(source, line, "", f"YAML syntax error: {problem}"))
        return result
    except yaml.YAMLError as exc:
        result.issues.append(ConfigIssue(source, None, "", f"YAML error: {exc}"))
        return result
    try:
        if node is None:
            result.issues.append(ConfigIssue(source, 1, "", "the file is empty"))
            return result
        result.lines[()] = node.start_mark.line + 1
        result.data = _Walker(loader, source, result, environ).walk(node, ())
    except YamlRefused as exc:
        result.data = None
        result.issues.append(ConfigIssue(source, exc.line, "", exc.message))
    finally:
        loader.dispose()
    return result


class _Walker:
    """Builds plain data from a graph :func:`compose` has checked (bounded size and depth, scalar keys)."""

    def __init__(self, loader: yaml.SafeLoader, source: str, out: LoadedYaml, environ: dict[str, str] | None):
        self.loader, self.source, self.out, self.environ = loader, source, out, environ

    def walk(self, node: yaml.Node, loc: Loc) -> Any:
        if isinstance(node, yaml.MappingNode):
            data: dict[Any, Any] = {}
            own: set[Any] = set()
            for key_node, value_node, merged in _pairs(node):
                key = construct_scalar(self.loader, key_node)
                line = key_node.start_mark.line + 1
                if not merged:
                    if key in own:
                        first = self.out.lines.get((*loc, key))
                        self.out.issues.append(ConfigIssue(self.source, line, field_path((*loc, key)),
                                                           f"duplicate key (first defined on line {first})"))
                        continue
                    own.add(key)
                self.out.lines[(*loc, key)] = line
                data[key] = self.walk(value_node, (*loc, key))
            return data
        if isinstance(node, yaml.SequenceNode):
            items = []
            for i, item in enumerate(node.value):
                self.out.lines[(*loc, i)] = item.start_mark.line + 1
                items.append(self.walk(item, (*loc, i)))
            return items
        value = construct_scalar(self.loader, node)
        if isinstance(value, str) and "${" in value:
            try:
                value = expand_env(value, self.environ)
            except MissingEnvVar as exc:
                self.out.issues.append(ConfigIssue(self.source, node.start_mark.line + 1, field_path(loc), str(exc)))
        return value


def _pairs(node: yaml.MappingNode) -> list[tuple[yaml.Node, yaml.Node, bool]]:
    """(key, value, merged) of a mapping with its ``<<`` merges expanded, lowest priority first: a key
    of the mapping itself overrides a merged one, and in ``<<: [*a, *b]`` *a overrides *b. The node
    is not changed (PyYAML's flatten_mapping would, and an aliased mapping is walked again)."""
    merged: list[tuple[yaml.Node, yaml.Node, bool]] = []
    own = []
    for key, value in node.value:
        if key.tag == MERGE_TAG:
            sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
            for source in reversed(sources):
                merged.extend((k, v, True) for k, v, _ in _pairs(source))
        else:
            own.append((key, value, False))
    return merged + own


# ---------------------------------------------------------------- structure errors


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


def describe_error(error: dict[str, Any], root: type[BaseModel], loc: Loc) -> str:
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
        issues.append(ConfigIssue(source, loaded.line_of(full), field_path(full), describe_error(error, root, loc)))
    return issues


