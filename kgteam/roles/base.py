"""The role contract: small classes that turn one message into payloads, testable without AutoGen."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import BaseModel

from kgteam.protocols.budgets import Budgets, BudgetUsage
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer, Payload

if TYPE_CHECKING:
    from kgteam.llm.base import ChatModel
    from kgteam.tools.kg_tools import KGTools


class TraceSink(Protocol):
    """Where roles record tool calls, LLM decisions and fallbacks for the session trace."""

    def record(self, event: str, **data: Any) -> None: ...


class ListTrace:
    """In-memory trace sink, for tests and for runs without a session store."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def record(self, event: str, **data: Any) -> None:
        self.events.append({"event": event, **data})


@dataclass
class BudgetView:
    """Read-only view: roles may adapt (e.g. stop retrying) but only the supervisor enforces."""

    limits: Budgets
    used: BudgetUsage

    def remaining(self, name: str) -> float:
        used_field = {"max_depth": "depth", "max_breadth": "breadth", "max_retries": "retries",
                      "max_turns": "turns", "max_llm_calls": "llm_calls", "max_tokens": "tokens",
                      "timeout_s": "seconds"}[name]
        return float(getattr(self.limits, name)) - float(getattr(self.used, used_field))


@dataclass
class RoleContext:
    model: ChatModel  # already wrapped by the runtime for accounting and budget checks
    tools: KGTools
    trace: TraceSink = field(default_factory=ListTrace)
    transcript: list[Envelope] = field(default_factory=list)  # this question's messages so far
    history: list[tuple[str, Answer]] = field(default_factory=list)  # earlier turns of the session
    budgets: BudgetView = field(default_factory=lambda: BudgetView(Budgets(), BudgetUsage()))
    session_id: str = ""


class Role(ABC):
    """Subclasses declare what they consume and produce; the playbook routes by payload kind."""

    name: ClassVar[str]
    consumes: ClassVar[tuple[str, ...]]
    produces: ClassVar[tuple[str, ...]]
    tools: ClassVar[tuple[str, ...]] = ()
    prompts: ClassVar[tuple[str, ...]] = ()
    settings_model: ClassVar[type[BaseModel] | None] = None  # validates the role's YAML settings
    # payload kinds this role emits one level deeper (a hop, a sub-question): the runtime adds 1 to
    # the envelope depth for these and stops the run at ``max_depth``; everything else keeps depth
    deepens: ClassVar[tuple[str, ...]] = ()
    # payload kinds that are alternative branches (candidate answers, paths to explore): several of
    # them from one step each get a branch id and count against ``max_breadth``. Several payloads of
    # another kind from one step are parts of one plan (e.g. one relation-candidate set per hop)
    branches: ClassVar[tuple[str, ...]] = ()

    def __init__(self, settings: BaseModel | None = None, *, instance_name: str | None = None):
        self.settings = settings
        self.instance_name = instance_name or self.name

    @abstractmethod
    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        """React to one message. Must not block the event loop; must honour cancellation."""

    async def finalize(self, ctx: RoleContext, reason: str) -> Answer | None:
        """Best grounded answer so far, asked by the supervisor when a run stops early.

        ``reason`` is the budget name (or "no_answer" when the bus ran dry); ``ctx.transcript``
        holds the question's messages so far. Keep it quick and model-free: budgets may be spent.
        ``None`` means the runtime answers "I don't know".
        """
        return None
