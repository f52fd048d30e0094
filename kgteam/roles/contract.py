"""A role's contract, read from its code: typed handlers say what it takes and what it may give.

``@handles`` marks an async method ``(self, payload: SomePayload, ctx: RoleContext) -> list[A | B]``.
The first parameter's type (a payload class or a union of them) is what the method consumes;
the return annotation (``list[A | B]``, ``A``, ``A | None``) is what it may produce. The role's
``consumes``/``produces`` are derived from these, never restated, and every output is checked
against the declaration when the role runs.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgteam.protocols.errors import ContractError
from kgteam.protocols.payloads import Payload, kind_of

HANDLER_MARK = "__kgteam_handler__"


def handles(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a method as a typed handler (see the module docstring for the signature)."""
    if not inspect.iscoroutinefunction(fn):
        raise ContractError(f"handler {fn.__qualname__} must be 'async def'")
    setattr(fn, HANDLER_MARK, True)
    return fn


@dataclass(frozen=True)
class HandlerSpec:
    method: str
    consumes: tuple[type[Payload], ...]
    produces: tuple[type[Payload], ...]


def _payload_types(tp: Any, where: str, *, allow_none: bool) -> tuple[type[Payload], ...]:
    """``A``, ``A | B``, ``Optional[A]`` → payload classes (``None`` dropped when allowed)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        out: list[type[Payload]] = []
        for arg in typing.get_args(tp):
            if arg is type(None):
                if not allow_none:
                    raise ContractError(f"{where}: None is not a payload")
                continue
            out += _payload_types(arg, where, allow_none=allow_none)
        return tuple(out)
    if isinstance(tp, type) and issubclass(tp, Payload) and tp is not Payload:
        kind_of(tp)  # a concrete kind with a literal
        return (tp,)
    raise ContractError(f"{where}: expected concrete payload classes (e.g. Answer | RetrySignal), got {tp!r}")


def _resolve(fn: Callable[..., Any], name: str, raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return eval(raw, fn.__globals__)  # noqa: S307 - the role's own annotation, in its own module
        except Exception as exc:  # noqa: BLE001
            raise ContractError(f"{fn.__qualname__}: cannot resolve the annotation of {name!r} ({raw!r}): "
                                f"import the payload class at module level ({exc})") from exc
    return raw


def handler_spec(fn: Callable[..., Any]) -> HandlerSpec:
    where = fn.__qualname__
    params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
    if len(params) != 2:
        raise ContractError(f"handler {where} must take (payload, ctx), got {[p.name for p in params]}")
    payload_param = params[0]
    if payload_param.annotation is inspect.Parameter.empty:
        raise ContractError(f"handler {where}: annotate the payload parameter with its payload class")
    consumes = _payload_types(_resolve(fn, payload_param.name, payload_param.annotation), where, allow_none=False)
    raw_ret = fn.__annotations__.get("return", inspect.Parameter.empty)
    if raw_ret is inspect.Parameter.empty:
        raise ContractError(f"handler {where}: annotate the return type, e.g. -> list[Answer | RetrySignal]")
    ret = _resolve(fn, "return", raw_ret)
    if typing.get_origin(ret) is list:
        (inner,) = typing.get_args(ret) or (None,)
        produces = _payload_types(inner, where, allow_none=False)
    else:
        produces = _payload_types(ret, where, allow_none=True)
    return HandlerSpec(fn.__name__, consumes, produces)


def collect_handlers(cls: type) -> dict[str, HandlerSpec]:
    """Payload kind → handler, over the class and its bases (a subclass may override a handler)."""
    by_kind: dict[str, HandlerSpec] = {}
    seen: set[str] = set()
    for klass in cls.__mro__:
        for name, member in vars(klass).items():
            if name in seen or not getattr(member, HANDLER_MARK, False):
                continue
            seen.add(name)
            spec = handler_spec(member)
            for payload_cls in spec.consumes:
                kind = kind_of(payload_cls)
                if kind in by_kind and by_kind[kind].method != spec.method:
                    raise ContractError(f"{cls.__qualname__}: both {by_kind[kind].method} and {spec.method} "
                                        f"handle {payload_cls.__name__}")
                by_kind.setdefault(kind, spec)
    return by_kind


def normalise_output(result: Any, where: str) -> list[Payload]:
    """A handler's return value as a list of payloads (``None`` = nothing)."""
    if result is None:
        return []
    if isinstance(result, Payload):
        return [result]
    if isinstance(result, list) and all(isinstance(p, Payload) for p in result):
        return result
    raise ContractError(f"{where} must return payloads, got {type(result).__name__}")
