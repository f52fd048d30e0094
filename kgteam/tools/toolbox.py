"""Tools by name: typed async functions whose arguments and LLM schema come from their signature.

A tool is an async callable registered under a short name (entry point group ``kgteam.tools``).
Its first parameter may take a resource the team owns — the KG tools object for the built-in
``KGTools`` methods (``self``), or any parameter annotated with a resource's type for a plugin
tool — which is bound when the toolbox is built; every other parameter is an argument. The
argument model (pydantic, from the annotations and defaults, ``Annotated[int, Field(ge=1)]``
constraints included) validates every call, from a role or from an LLM, and gives the JSON
schema offered to a model, so the schema never drifts from the code.

A role sees a :class:`Toolbox` restricted to the tools its team grants it; asking for another
one is an error that names what is granted.
"""

from __future__ import annotations

import inspect
import time
import typing
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from kgteam.protocols.errors import ContractError
from kgteam.tools.tool_cache import ToolCache, call_key
from kgteam.tools.types import ToolError

ToolFn = Callable[..., Awaitable[Any]]


class ToolNotGranted(ToolError, KeyError):
    """A role asked for a tool its team did not grant it (or nobody installed)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


@dataclass(frozen=True)
class ToolCall:
    """What instrumentation sees of one call (the runtime times and traces these)."""

    tool: str
    arguments: dict[str, Any]
    result: Any = None
    error: str | None = None
    seconds: float = 0.0


ToolHook = Callable[[ToolCall], None]


def _first_line(doc: str | None) -> str:
    return (inspect.cleandoc(doc).split("\n\n")[0].replace("\n", " ").strip()) if doc else ""


def _bindable(fn: Callable[..., Any], param: inspect.Parameter, resources: list[Any]) -> Any:
    """The resource to bind to ``fn``'s first parameter, or None when it is a plain argument."""
    if param.name == "self":  # an unbound method of a resource's class (KGTools.neighbors)
        for res in resources:  # its class, or a subclass (KGUnion): the subclass's override runs
            if any(vars(cls).get(fn.__name__) is fn for cls in type(res).__mro__):
                return res
        raise ContractError(f"tool {fn.__qualname__}: no resource of its class is available to bind")
    hints = typing.get_type_hints(fn) if param.annotation is not inspect.Parameter.empty else {}
    wanted = hints.get(param.name)
    if isinstance(wanted, type):
        for res in resources:
            if isinstance(res, wanted):
                return res
    return None


def params_self(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` is an unbound method (its first parameter is ``self``)."""
    params = list(inspect.signature(fn).parameters)
    return bool(params) and params[0] == "self"


@dataclass(frozen=True)
class Tool:
    """One named tool, bound to its resources, validating its arguments."""

    name: str
    description: str
    fn: ToolFn  # bound: takes only the arguments
    arguments: type[BaseModel]
    hook: ToolHook | None = field(default=None, compare=False)
    # read-only and deterministic within a question (the KG tools): a ToolCache may reuse its results
    cacheable: bool = False
    cache: ToolCache | None = field(default=None, compare=False)

    @classmethod
    def from_callable(cls, name: str, fn: Callable[..., Any], resources: list[Any] = ()) -> Tool:  # type: ignore[assignment]
        if not inspect.iscoroutinefunction(fn):
            raise ContractError(f"tool {name!r} ({getattr(fn, '__qualname__', fn)!r}) must be an async function")
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        bound_fn: ToolFn = fn
        if params:
            resource = _bindable(fn, params[0], list(resources))
            if resource is not None:
                params = params[1:]
                own = getattr(type(resource), fn.__name__, fn) if params_self(fn) else fn
                bound_fn = _bind(own, resource)
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except Exception as exc:  # noqa: BLE001 - a broken plugin annotation is a contract error
            raise ContractError(f"tool {name!r}: cannot read its type hints: {exc}") from exc
        fields: dict[str, Any] = {}
        for p in params:
            if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise ContractError(f"tool {name!r}: *args/**kwargs cannot be offered to a model")
            annotation = hints.get(p.name, Any)
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[p.name] = (annotation, default)
        model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
                             **fields)
        return cls(name, _first_line(fn.__doc__) or name, bound_fn, model)

    def schema(self) -> dict[str, Any]:
        """The OpenAI ``tools=[...]`` entry: JSON Schema derived from the signature."""
        params = self.arguments.model_json_schema()
        params.pop("title", None)
        for prop in params.get("properties", {}).values():
            prop.pop("title", None)
        params["additionalProperties"] = False
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": params}}

    def validate(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        names = list(self.arguments.model_fields)
        if len(args) > len(names):
            raise ToolError(f"{self.name} takes at most {len(names)} positional argument(s)")
        merged = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key in merged:
                raise ToolError(f"{self.name}: argument {key!r} given twice")
            merged[key] = value
        fields = self.arguments.model_fields
        # an explicit null for an optional argument means "use the default" (models send those)
        merged = {k: v for k, v in merged.items() if v is not None or k not in fields or fields[k].is_required()}
        for key, value in merged.items():  # pydantic's lax mode would read true as 1
            if isinstance(value, bool) and key in fields and not _admits_bool(fields[key].annotation):
                raise ToolError(f"bad arguments for {self.name}: {key}: a boolean is not allowed here")
        try:
            validated = self.arguments.model_validate(merged)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or self.name}: {e['msg']}" for e in exc.errors())
            raise ToolError(f"bad arguments for {self.name}: {problems}") from None
        return {k: getattr(validated, k) for k in validated.model_fields_set | {
            k for k, f in fields.items() if f.is_required()}}

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        arguments = self.validate(args, kwargs)
        if self.cache is not None and self.cacheable:  # a reused result is no call: the hook does not see it
            return await self.cache.run(call_key(self.name, arguments), lambda: self._invoke(arguments))
        return await self._invoke(arguments)

    async def _invoke(self, arguments: dict[str, Any]) -> Any:
        if self.hook is None:
            return await self.fn(**arguments)
        t0 = time.perf_counter()
        try:
            result = await self.fn(**arguments)
        except Exception as exc:
            self.hook(ToolCall(self.name, arguments, error=f"{type(exc).__name__}: {exc}",
                               seconds=time.perf_counter() - t0))
            raise
        self.hook(ToolCall(self.name, arguments, result=result, seconds=time.perf_counter() - t0))
        return result

    def with_hook(self, hook: ToolHook | None) -> Tool:
        return Tool(self.name, self.description, self.fn, self.arguments, hook, self.cacheable, self.cache)

    def with_cache(self, cache: ToolCache | None) -> Tool:
        return Tool(self.name, self.description, self.fn, self.arguments, self.hook, self.cacheable, cache)

    def cached(self, cacheable: bool = True) -> Tool:
        """This tool marked as one whose results a question's ToolCache may reuse."""
        return Tool(self.name, self.description, self.fn, self.arguments, self.hook, cacheable, self.cache)


def _admits_bool(annotation: Any) -> bool:
    if annotation is bool or annotation is Any:
        return True
    return any(_admits_bool(a) for a in typing.get_args(annotation))


def _bind(fn: Callable[..., Any], resource: Any) -> ToolFn:
    async def bound(**kwargs: Any) -> Any:
        return await fn(resource, **kwargs)

    bound.__name__ = getattr(fn, "__name__", "tool")
    bound.__doc__ = fn.__doc__
    return bound


class Toolbox(Mapping[str, Tool]):
    """The tools one role may call, by name: ``await ctx.tools["neighbors"](iri, hops=2)``."""

    def __init__(self, tools: Mapping[str, Tool] | None = None, *, owner: str = "", installed: list[str] | None = None,
                 reader: Any = None, bank: Any = None, profile: Any = None):
        self._tools = dict(tools or {})
        # what the KG says about itself (kgteam.tools.profile.KGProfile; not a tool: read by the
        # semantic layer for classes, typing and schema nodes); None: worked out from run_sparql
        self.profile = profile
        # the KG's trained reader data (not a tool: no model calls it), passed on to every role's box
        self.reader = reader
        # the KG's example bank (a LazyBank; not a tool either): worked examples for model prompts
        self.bank = bank
        self.owner = owner
        self._installed = installed if installed is not None else sorted(self._tools)

    @classmethod
    def from_callables(cls, callables: Mapping[str, Callable[..., Any]], resources: list[Any] = ()) -> Toolbox:  # type: ignore[assignment]
        return cls({name: Tool.from_callable(name, fn, list(resources)) for name, fn in callables.items()})

    def __getitem__(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            who = f"role {self.owner!r}" if self.owner else "this toolbox"
            granted = ", ".join(sorted(self._tools)) or "(none)"
            extra = "" if name in self._installed else "; it is not an installed tool either"
            raise ToolNotGranted(f"{who} may not call tool {name!r}: granted {granted}{extra}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def only(self, names: list[str] | tuple[str, ...], *, owner: str = "") -> Toolbox:
        """The subset granted to one role (unknown names are the team check's business)."""
        return Toolbox({n: self._tools[n] for n in names if n in self._tools}, owner=owner,
                       installed=sorted(self._tools), reader=self.reader, bank=self.bank, profile=self.profile)

    def with_hook(self, hook: ToolHook | None) -> Toolbox:
        return Toolbox({n: t.with_hook(hook) for n, t in self._tools.items()}, owner=self.owner,
                       installed=self._installed, reader=self.reader, bank=self.bank, profile=self.profile)

    def with_cache(self, cache: ToolCache | None) -> Toolbox:
        """These tools sharing one question's cache (only the ``cacheable`` ones use it)."""
        return Toolbox({n: t.with_cache(cache) for n, t in self._tools.items()}, owner=self.owner,
                       installed=self._installed, reader=self.reader, bank=self.bank, profile=self.profile)

    def specs(self) -> list[dict[str, Any]]:
        """OpenAI ``tools=[...]`` for every tool in this box."""
        return [t.schema() for t in self._tools.values()]

    async def call(self, name: str, arguments: Any) -> Any:
        """Dispatch a model's function call: JSON in, JSON-ready data out; errors are ToolErrors."""
        if not isinstance(arguments, dict):
            raise ToolError(f"arguments for {name} must be a JSON object, not {type(arguments).__name__}")
        result = await self[name](**arguments)
        if isinstance(result, list):
            return [r.model_dump() if isinstance(r, BaseModel) else r for r in result]
        return result.model_dump() if isinstance(result, BaseModel) else result
