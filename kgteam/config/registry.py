"""Short names → installed roles, tools, backends and playbooks, through Python entry points.

Team YAML only ever names things by short name; this module is the one place that turns a
name into code, and only for what an installed distribution declared in the groups
``kgteam.roles``, ``kgteam.tools``, ``kgteam.backends`` and ``kgteam.playbooks``. YAML never
imports dotted paths. kgteam's own entries are declared in its ``pyproject.toml`` like any
plugin's (reinstall, ``pip install -e .``, after adding one), so there is one registry, not two.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any, Literal

from kgteam.protocols.errors import KgteamError

Group = Literal["roles", "tools", "backends", "playbooks"]
GROUPS: tuple[Group, ...] = ("roles", "tools", "backends", "playbooks")
_SINGULAR = {"roles": "role", "tools": "tool", "backends": "backend", "playbooks": "playbook"}


class UnknownName(KgteamError, LookupError):
    """A short name nobody installed; the message lists what is installed."""

    def __init__(self, group: Group, name: str, installed: list[str]):
        self.group, self.name, self.installed = group, name, installed
        singular = _SINGULAR[group]
        listed = ", ".join(installed) if installed else "(none)"
        super().__init__(f"unknown {singular} {name!r}; installed {group}: {listed}")

    def __str__(self) -> str:
        return str(self.args[0])


class PluginLoadError(KgteamError, ImportError):
    """An installed name whose code could not be imported (broken plugin)."""


@dataclass(frozen=True)
class Entry:
    group: Group
    name: str
    target: str  # "module" or "module:attr"
    package: str  # distribution that declared it

    def load(self) -> Any:
        module_name, _, attr = self.target.partition(":")
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError as exc:
            raise PluginLoadError(f"{self.group} {self.name!r} from {self.package}: cannot import "
                                  f"{module_name!r}: {exc}") from exc
        if attr:
            for part in attr.split("."):
                try:
                    obj = getattr(obj, part)
                except AttributeError as exc:
                    raise PluginLoadError(f"{self.group} {self.name!r} from {self.package}: "
                                          f"{module_name!r} has no {attr!r}") from exc
            return obj
        if self.group == "roles":
            return _role_class_in(obj, self.name, self)
        return obj


def _role_class_in(module: Any, name: str, entry: Entry) -> Any:
    from kgteam.roles.base import Role

    found = [obj for obj in vars(module).values()
             if inspect.isclass(obj) and issubclass(obj, Role) and obj is not Role
             and not inspect.isabstract(obj) and getattr(obj, "name", None) == name]
    if not found:
        raise PluginLoadError(f"role {name!r}: module {module.__name__!r} defines no Role with name {name!r}")
    return found[0]


@lru_cache(maxsize=1)
def _entry_points() -> dict[Group, dict[str, Entry]]:
    table: dict[Group, dict[str, Entry]] = {g: {} for g in GROUPS}
    for group in GROUPS:
        for ep in entry_points(group=f"kgteam.{group}"):
            dist = ep.dist.name if ep.dist is not None else "?"
            table[group][ep.name] = Entry(group, ep.name, ep.value, dist)
    return table


def entry_table(group: Group) -> dict[str, Entry]:
    """The live table of one group (tests add entries to it with ``monkeypatch.setitem``)."""
    return _entry_points()[group]


def refresh() -> None:
    """Forget cached entry points (after installing/uninstalling a plugin in this process)."""
    _entry_points.cache_clear()
    importlib.invalidate_caches()


def entries(group: Group) -> dict[str, Entry]:
    return dict(sorted(_entry_points()[group].items()))


def installed(group: Group) -> list[str]:
    return sorted(_entry_points()[group])


def entry(group: Group, name: str) -> Entry:
    table = _entry_points()[group]
    if name not in table:
        raise UnknownName(group, name, sorted(table))
    return table[name]


def load(group: Group, name: str) -> Any:
    return entry(group, name).load()


def role_class(name: str) -> type:
    """The Role subclass installed under ``name``; checks it really is a Role."""
    from kgteam.roles.base import Role

    cls = load("roles", name)
    if not (inspect.isclass(cls) and issubclass(cls, Role)):
        e = entry("roles", name)
        raise PluginLoadError(f"role {name!r} from {e.package} ({e.target}) is not a kgteam Role subclass")
    return cls


@dataclass(frozen=True)
class RoleInfo:
    name: str
    consumes: tuple[str, ...]
    produces: tuple[str, ...]
    tools: tuple[str, ...]
    package: str
    doc: str
    reads: tuple[str, ...] = ()
    settings: dict[str, Any] | None = None  # field -> {"type", "default", "range", "description", ...}
    error: str | None = None


def _own_doc(cls: type) -> str:
    """The class's own docstring (not its base's), else its module's first paragraph."""
    import sys

    doc = cls.__dict__.get("__doc__") or getattr(sys.modules.get(cls.__module__), "__doc__", None) or ""
    return inspect.cleandoc(doc).split("\n\n")[0].replace("\n", " ")


def role_settings_models(*, package: str | None = None) -> dict[str, type]:
    """Role name -> its settings model, for every role that loads (of ``package`` only, if given)."""
    out = {}
    for name, e in entries("roles").items():
        if package is not None and e.package != package:
            continue
        try:
            out[name] = role_class(name).settings_model
        except (PluginLoadError, ImportError):
            continue  # ``kgteam roles`` lists it with its error
    return out


def describe_roles() -> list[RoleInfo]:
    """Every installed role, loaded, for ``kgteam roles``; a broken plugin is listed with its error."""
    from kgteam.config.role_settings import describe_settings
    from kgteam.protocols.payloads import kind_of

    infos = []
    for name, e in entries("roles").items():
        try:
            cls = role_class(name)
        except (PluginLoadError, ImportError) as exc:
            infos.append(RoleInfo(name, (), (), (), e.package, "", error=str(exc)))
            continue
        settings = describe_settings(cls.settings_model)
        infos.append(RoleInfo(name, tuple(cls.consumes), tuple(cls.produces), tuple(getattr(cls, "tools", ())),
                              e.package, _own_doc(cls), tuple(kind_of(c) for c in cls.reads), settings))
    return infos
