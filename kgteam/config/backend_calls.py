"""How a KG spec turns into backend constructor calls, so ``validate`` and the factory agree.

``kg.options`` and ``kg.labels.options`` are free-form mappings handed to a backend's
constructor; checking them against the constructor's signature up front turns a typo into a
config error with a field path instead of a ``TypeError`` when the team is built.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass, field
from typing import Any

from kgteam.config import registry
from kgteam.config.schema import KGSpec


@dataclass
class BackendCall:
    """``registry.load('backends', backend)(*args, **kwargs)``; ``options`` are the user-given kwargs."""

    where: tuple[str, ...]  # field path of the options, e.g. ("kg", "options")
    opened: tuple[str, ...]  # field path blamed when the backend cannot be opened, e.g. ("kg",)
    backend: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return ".".join(self.where)

    @property
    def opened_path(self) -> str:
        return ".".join(self.opened)


def store_call(kg: KGSpec) -> BackendCall | None:
    """The store constructor call for a non-Oxigraph KG (Oxigraph KGs are opened by name/path)."""
    if kg.backend == "oxigraph":
        return None
    args = (kg.endpoint,) if kg.backend == "sparql" else ()
    return BackendCall(("kg", "options"), ("kg",), kg.backend, args, dict(kg.options), dict(kg.options))


def labels_call(kg: KGSpec) -> BackendCall | None:
    """The label-index constructor call, or None when the KG brings its own labels."""
    labels = kg.labels
    if labels is None or kg.backend == "oxigraph":
        return None
    where = ("kg", "labels", "options")
    if labels.backend == "tantivy":
        return BackendCall(where, ("kg", "labels", "path"), "tantivy", (labels.path,))
    if labels.backend == "elastic":
        kwargs = dict(labels.options)
        if labels.index:
            kwargs["index"] = labels.index
        if labels.api_key_env:
            kwargs["api_key"] = os.environ.get(labels.api_key_env)
        return BackendCall(where, ("kg", "labels"), "elastic", (labels.url,), kwargs, dict(labels.options))
    return BackendCall(where, ("kg", "labels"), labels.backend, (), dict(labels.options), dict(labels.options))


def signature_problem(factory: Any, call: BackendCall) -> str | None:
    """Why ``factory(*call.args, **call.kwargs)`` cannot bind, or None (also when not inspectable)."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        positional = [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                      inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        taken = {p.name for p in positional[:len(call.args)]}
        accepted = [p.name for p in params
                    if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
                    and p.name not in taken]
        unknown = sorted(set(call.options) - set(accepted))
        if unknown:
            return (f"backend {call.backend!r} does not accept option(s) {', '.join(map(repr, unknown))}; "
                    f"accepted: {', '.join(accepted) or '(none)'}")
    try:
        sig.bind(*call.args, **call.kwargs)
    except TypeError as exc:
        return f"backend {call.backend!r}: {exc}"
    return None


def check_call(call: BackendCall) -> str | None:
    """A config problem with ``call`` (unloadable backend or options it does not accept), or None."""
    try:
        factory = registry.load("backends", call.backend)
    except (registry.UnknownName, ImportError) as exc:
        return str(exc)
    return signature_problem(factory, call)
