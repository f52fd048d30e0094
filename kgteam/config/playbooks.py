"""Playbooks are data: YAML files registered under the ``kgteam.playbooks`` entry point.

An entry point names an object that is the playbook file (a path or an ``importlib.resources``
file, as kgteam's own ``kgteam.roles.triad:PLAYBOOK``) or its text. It is read with the same
line-aware loader as team files, so a mistake in a playbook is reported with its file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kgteam.config import registry
from kgteam.config.schema import PlaybookSpec
from kgteam.config.yaml_source import ConfigIssue, LoadedYaml, TeamConfigError, read_yaml, validation_issues


@dataclass(frozen=True)
class LoadedPlaybook:
    spec: PlaybookSpec
    source: str  # the file it came from, for file:line errors
    lines: LoadedYaml


def _text_of(obj: Any, name: str) -> tuple[str, str]:
    """(text, source) of a registered playbook object."""
    if isinstance(obj, str) and "\n" in obj:
        return obj, f"<playbook {name}>"
    if isinstance(obj, str | Path):
        path = Path(obj)
        return path.read_text(encoding="utf-8"), str(path)
    read_text = getattr(obj, "read_text", None)
    if callable(read_text):
        return read_text(encoding="utf-8"), str(obj)
    raise TeamConfigError([ConfigIssue(f"<playbook {name}>", None, "",
                                       f"playbook {name!r} is registered as {type(obj).__name__}; "
                                       "register the YAML file (a path or importlib.resources file) or its text")])


def parse_playbook(text: str, source: str) -> LoadedPlaybook:
    loaded = read_yaml(text, source)
    if loaded.issues:
        raise TeamConfigError(loaded.issues)
    if not isinstance(loaded.data, dict):
        raise TeamConfigError([ConfigIssue(source, loaded.line_of(()), "", "a playbook file must be a mapping")])
    try:
        spec = PlaybookSpec.model_validate(loaded.data)
    except ValidationError as exc:
        raise TeamConfigError(validation_issues(exc, PlaybookSpec, loaded, source)) from None
    return LoadedPlaybook(spec, source, loaded)


@lru_cache(maxsize=64)
def load_playbook(name: str) -> LoadedPlaybook:
    """The installed playbook ``name``; unknown names list the installed ones."""
    try:
        obj = registry.load("playbooks", name)
    except registry.UnknownName as exc:
        raise TeamConfigError([ConfigIssue("<team>", None, "playbook", str(exc))]) from None
    text, source = _text_of(obj, name)
    return parse_playbook(text, source)


def playbook_names() -> list[str]:
    return registry.installed("playbooks")


def refresh() -> None:
    load_playbook.cache_clear()
