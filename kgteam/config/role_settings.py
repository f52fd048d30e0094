"""What a role's settings are, read from its settings model: names, types, defaults, ranges.

``kgteam roles --json`` and the settings tables in docs/roles.md (``kgteam roles --markdown``)
are both derived from here, so neither can drift from the code.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

_BOUNDS = (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"), ("min_length", "length ≥"),
           ("max_length", "length ≤"))


def type_name(annotation: Any) -> str:
    """``int``, ``float | None``, ``one of 'a', 'b'``, ``list[str]``, or a nested model's class name."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in typing.get_args(annotation))
    if origin is not None:
        args = ", ".join(type_name(a) for a in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def _bounds(info: FieldInfo) -> str:
    parts = []
    for meta in info.metadata:
        for attr, sign in _BOUNDS:
            value = getattr(meta, attr, None)
            if value is not None:
                parts.append(f"{sign} {value}")
    return ", ".join(parts)


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _default(info: FieldInfo) -> Any:
    if info.is_required():
        return None
    value = info.get_default(call_default_factory=True)
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def describe_settings(model: type[BaseModel]) -> dict[str, dict[str, Any]]:
    """field -> {"type", "default", "range", "description"[, "settings" of a nested model]}."""
    out: dict[str, dict[str, Any]] = {}
    for name, info in model.model_fields.items():
        entry: dict[str, Any] = {"type": type_name(info.annotation), "default": _default(info),
                                 "range": _bounds(info), "description": info.description or "",
                                 "required": info.is_required()}
        nested = _nested_model(info.annotation)
        if nested is not None:
            entry["settings"] = describe_settings(nested)
        out[name] = entry
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default_text(entry: dict[str, Any]) -> str:
    if entry["required"]:
        return "required"
    if "settings" in entry:
        return "see below"
    return f"`{json.dumps(entry['default'], ensure_ascii=False)}`".replace("|", "\\|")  # as YAML reads it


def settings_markdown(roles: dict[str, type[BaseModel]]) -> str:
    """One table per role (name → settings model), then one per nested settings model, each once."""
    lines: list[str] = []
    nested: dict[str, type[BaseModel]] = {}

    def table(title: str, model: type[BaseModel]) -> None:
        fields = describe_settings(model)
        lines.extend([f"#### {title}", ""])
        if not fields:
            lines.extend(["No settings.", ""])
            return
        lines.extend(["| setting | type | default | range | what it does |", "|---|---|---|---|---|"])
        for name, entry in fields.items():
            annotation = model.model_fields[name].annotation
            sub = _nested_model(annotation)
            if sub is not None:
                nested.setdefault(sub.__name__, sub)
            lines.append(f"| `{name}` | {_cell(entry['type'])} | {_default_text(entry)} | {_cell(entry['range'])} | "
                         f"{_cell(entry['description'])} |")
        lines.append("")

    for role, model in roles.items():
        table(f"`{role}`", model)
    done: set[str] = set()
    while len(done) < len(nested):
        for name in sorted(nested):
            if name not in done:
                done.add(name)
                table(f"{name} (nested)", nested[name])
    return "\n".join(lines).rstrip() + "\n"
