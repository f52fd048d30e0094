"""The role contract: small classes that turn one message into payloads, testable without AutoGen.

A role is ``class MyRole(Role[MySettings])`` with a ``name``, typed handlers (``@handles``) from
which its consumed and produced kinds are derived, the extra kinds it ``reads`` from the lineage,
the tools it needs by name and its prompt templates, shipped in a ``prompts/`` folder of its own
package. ``self.settings`` is always a validated ``MySettings``.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from kgteam.prompts import PromptNotFound, PromptTemplate, load_template
from kgteam.protocols.budgets import Budgets, BudgetUsage
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.errors import ContractError
from kgteam.protocols.payloads import Answer, Payload, kind_of
from kgteam.roles.contract import HandlerSpec, collect_handlers, normalise_output
from kgteam.roles.lineage import Lineage, RunView
from kgteam.tools.toolbox import Toolbox

if TYPE_CHECKING:
    from kgteam.llm.base import ChatModel

P = TypeVar("P", bound=Payload)


class TraceSink(Protocol):
    """Where roles record tool calls, LLM decisions and fallbacks for the session trace."""

    def record(self, event: str, **data: Any) -> None: ...


class ListTrace:
    """In-memory trace sink, for tests and for runs without a session store."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def record(self, event: str, **data: Any) -> None:
        self.events.append({"event": event, **data})


USED_FIELD = {"max_depth": "depth", "max_breadth": "breadth", "max_retries": "retries", "max_turns": "turns",
              "max_llm_calls": "llm_calls", "max_tokens": "tokens", "timeout_s": "seconds"}


@dataclass
class BudgetView:
    """Read-only view: roles may adapt (e.g. stop retrying) but only the supervisor enforces.

    ``max_depth`` and ``max_retries`` are per branch: ``depth`` and ``branch_retries`` are those of
    the branch the handled message is on (the run's maxima when not given).
    """

    limits: Budgets
    used: BudgetUsage
    depth: int | None = None
    branch_retries: int | None = None

    def remaining(self, name: str) -> float:
        if name == "max_depth" and self.depth is not None:
            return float(self.limits.max_depth - self.depth)
        if name == "max_retries" and self.branch_retries is not None:
            return float(self.limits.max_retries - self.branch_retries)
        return float(getattr(self.limits, name)) - float(getattr(self.used, USED_FIELD[name]))


@dataclass
class RoleContext:
    """Everything a role gets for one step: model, granted tools, the lineage, budgets, history."""

    model: ChatModel  # already wrapped by the runtime for accounting and budget checks
    tools: Toolbox = field(default_factory=Toolbox)
    trace: TraceSink = field(default_factory=ListTrace)
    lineage: Lineage = field(default_factory=Lineage)
    history: list[tuple[str, Answer]] = field(default_factory=list)  # earlier turns of the session
    budgets: BudgetView = field(default_factory=lambda: BudgetView(Budgets(), BudgetUsage()))
    session_id: str = ""
    message: Envelope | None = None  # the envelope being handled (None in finalize)
    run: RunView = field(default_factory=RunView)  # every branch, filled for finalize only

    def ancestor(self, cls: type[P]) -> P | None:
        return self.lineage.ancestor(cls)

    def ancestors(self, cls: type[P]) -> list[P]:
        return self.lineage.ancestors(cls)


class NoSettings(BaseModel):
    """Settings of a role that takes none (any key in the YAML is an error)."""

    model_config = ConfigDict(extra="forbid")


SettingsT = TypeVar("SettingsT", bound=BaseModel)
_DERIVED = ("consumes", "produces", "handlers", "settings_model")


def _settings_model_of(cls: type) -> type[BaseModel]:
    for base in getattr(cls, "__orig_bases__", ()):
        if typing.get_origin(base) is Role:
            (arg,) = typing.get_args(base)
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                return arg
            raise ContractError(f"{cls.__qualname__}: Role[...] takes a pydantic settings model, got {arg!r}")
    for base in cls.__mro__[1:]:
        model = base.__dict__.get("settings_model")
        if isinstance(model, type) and issubclass(model, BaseModel):
            return model
    return NoSettings


class Role(Generic[SettingsT]):
    """Subclass with ``@handles`` methods; the playbook routes payload kinds to them."""

    name: ClassVar[str]
    reads: ClassVar[tuple[type[Payload], ...]] = ()  # kinds read from the lineage besides the consumed ones
    informs: ClassVar[tuple[type[Payload], ...]] = ()  # outputs for people and the trace: need no route
    tools: ClassVar[tuple[str, ...]] = ()  # tool names the role calls (the team must grant them)
    prompts: ClassVar[tuple[str, ...]] = ()  # templates in <role package>/prompts/<name>.txt
    # kinds emitted one level deeper (a hop, a sub-question): +1 envelope depth, pruned past max_depth
    deepens: ClassVar[tuple[type[Payload], ...]] = ()
    # kinds that are alternatives: each starts a branch; max_breadth keeps the best-scored
    branches: ClassVar[tuple[type[Payload], ...]] = ()

    # derived from the handlers and the generic argument; never written by hand
    handlers: ClassVar[dict[str, HandlerSpec]] = {}
    consumes: ClassVar[tuple[str, ...]] = ()
    produces: ClassVar[tuple[str, ...]] = ()
    settings_model: ClassVar[type[BaseModel]] = NoSettings

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in _DERIVED:
            if name in cls.__dict__:
                raise ContractError(f"{cls.__qualname__} sets {name!r}; it is derived from the typed handlers "
                                    f"(@handles methods) and Role[Settings]: remove it")
        cls.handlers = collect_handlers(cls)
        cls.consumes = tuple(cls.handlers)
        produced: dict[str, None] = {}
        for spec in cls.handlers.values():
            for out in spec.produces:
                produced[kind_of(out)] = None
        cls.produces = tuple(produced)
        cls.settings_model = _settings_model_of(cls)
        for attr in ("reads", "informs", "deepens", "branches"):
            for item in getattr(cls, attr):
                if not (isinstance(item, type) and issubclass(item, Payload)):
                    raise ContractError(f"{cls.__qualname__}.{attr} lists payload classes, got {item!r}")
        for attr in ("informs", "deepens", "branches"):
            stray = [c.__name__ for c in getattr(cls, attr) if kind_of(c) not in produced]
            if stray and cls.handlers:
                raise ContractError(f"{cls.__qualname__}.{attr} names {stray}, which no handler produces")

    def __init__(self, settings: SettingsT | None = None, *, instance_name: str | None = None):
        if settings is None:
            settings = self.settings_model()  # type: ignore[assignment]
        elif not isinstance(settings, self.settings_model):
            settings = self.settings_model.model_validate(settings)  # type: ignore[assignment]
        self.settings: SettingsT = settings  # type: ignore[assignment]
        self.instance_name = instance_name or self.name

    # ------------------------------------------------------------------ contract helpers
    @classmethod
    def consumed_types(cls) -> tuple[type[Payload], ...]:
        return tuple(t for spec in cls.handlers.values() for t in spec.consumes)

    @classmethod
    def produced_types(cls) -> tuple[type[Payload], ...]:
        return tuple(dict.fromkeys(t for spec in cls.handlers.values() for t in spec.produces))

    @classmethod
    def readable_types(cls) -> tuple[type[Payload], ...]:
        """What ``ctx.ancestor`` may look up: the consumed kinds plus ``reads``."""
        return (*cls.consumed_types(), *cls.reads)

    # ------------------------------------------------------------------ running
    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        """Dispatch ``message`` to its typed handler and check the outputs against the declaration."""
        spec = self.handlers.get(message.kind)
        if spec is None:
            raise ContractError(f"role {self.instance_name!r} has no handler for {message.kind!r}; "
                                f"it consumes {list(self.consumes)}")
        where = f"{type(self).__qualname__}.{spec.method}"
        outputs = normalise_output(await getattr(self, spec.method)(message.payload, ctx), where)
        for out in outputs:
            if not isinstance(out, spec.produces):
                declared = ", ".join(c.__name__ for c in spec.produces)
                raise ContractError(f"{where} returned {type(out).__name__}, but declares {declared}")
        return outputs

    async def finalize(self, ctx: RoleContext, reason: str) -> Answer | None:
        """Best grounded answer so far, asked when a run stops early (``ctx.run`` has every branch).

        ``reason`` is the budget name (or "no_answer" when the bus ran dry). Keep it quick and
        model-free: budgets may be spent. ``None`` means the runtime answers "I don't know".
        """
        return None

    @classmethod
    def offers_finalize(cls) -> bool:
        return cls.finalize is not Role.finalize

    # ------------------------------------------------------------------ prompts
    def prompt(self, name: str) -> PromptTemplate:
        """A template shipped beside this role (``<package>/prompts/<name>.txt``), or a base class's."""
        return prompt_for(type(self), name)


@lru_cache(maxsize=256)
def prompt_for(cls: type, name: str) -> PromptTemplate:
    tried = []
    for klass in cls.__mro__:
        module = getattr(klass, "__module__", "")
        if klass is Role or klass is object or not module:
            continue
        package = module if _is_package(module) else module.rpartition(".")[0]
        if not package or package in tried:
            continue
        tried.append(package)
        try:
            return load_template(package, name)
        except (PromptNotFound, ModuleNotFoundError):
            continue
    raise PromptNotFound(f"role {getattr(cls, 'name', cls.__name__)!r}: no prompt {name!r} in "
                         f"{', '.join(p + '/prompts' for p in tried) or '(no package)'}")


def _is_package(module: str) -> bool:
    import sys

    mod = sys.modules.get(module)
    return bool(mod is not None and hasattr(mod, "__path__"))
