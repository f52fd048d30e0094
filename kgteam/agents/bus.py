"""The conversation bus on AutoGen AgentChat 0.7.5 — the only module that knows AutoGen's API.

* every role runs as a :class:`RoleAgent` (a ``BaseChatAgent``) that emits
  :class:`EnvelopeMessage` (``StructuredMessage[Envelope]``), one per payload the role returns,
  and closes its turn with a :class:`StepMessage`;
* :class:`BusTeam` subclasses ``BaseGroupChat`` with :class:`RouterManager` (a
  ``BaseGroupChatManager``) whose ``select_speaker`` asks the supervisor
  (:class:`~kgteam.agents.supervisor.Supervisor`) for the next *round* of deliveries and hands
  each to its role as a :class:`DeliveryMessage` on the role's own topic. Several speakers may be
  selected at once (AutoGen runs them concurrently and waits for all); a role given several
  deliveries in one round handles them concurrently too;
* budgets are a ``TerminationCondition`` (:class:`SupervisorTermination`) reading the same state.

Each question gets a fresh team (and AutoGen runtime): no state leaks between questions and a
cancelled run cannot leave a shared runtime inconsistent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response, TaskResult, TerminationCondition
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, StopMessage, StructuredMessage
from autogen_agentchat.teams import BaseGroupChat
from autogen_agentchat.teams._group_chat._base_group_chat_manager import BaseGroupChatManager
from autogen_agentchat.teams._group_chat._events import GroupChatStart
from autogen_core import EVENT_LOGGER_NAME, CancellationToken, DefaultTopicId, SingleThreadedAgentRuntime
from pydantic import BaseModel

from kgteam.agents.supervisor import Delivery, Supervisor
from kgteam.llm.base import ModelError
from kgteam.protocols.budgets import BudgetExhausted
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.evidence import Usage
from kgteam.protocols.payloads import Answer, Payload
from kgteam.roles.base import Role, RoleContext

ContextFactory = Callable[[Delivery], RoleContext]


async def tag_answers(payloads: Sequence[Any], tagger: Callable[[Any], Any]) -> None:
    """Answers' evidence triples say which KG states them (a failed lookup leaves them untagged)."""
    for payload in payloads:
        if isinstance(payload, Answer) and payload.evidence.triples:
            try:
                payload.evidence = await tagger(payload.evidence)
            except Exception as exc:  # provenance is extra: never the reason a run fails
                logging.getLogger(__name__).warning("evidence tagging failed: %s", exc)


class DeliveryNote(BaseModel):
    """Which role handles which envelope in which step (what the manager hands an agent)."""

    to: str
    step: str
    envelope: Envelope


class StepReport(BaseModel):
    role: str
    outputs: int = 0
    outcome: str = "ok"  # ok | budget | cancelled | error | skipped | idle
    error: str | None = None


class EnvelopeMessage(StructuredMessage[Envelope]):
    """An envelope on the AutoGen bus (what gets streamed and persisted)."""

    def __repr__(self) -> str:  # AutoGen formats every published message eagerly: keep it O(1)
        return f"EnvelopeMessage({self.content.kind} {self.content.id} from {self.content.sender})"


class DeliveryMessage(StructuredMessage[DeliveryNote]):
    """Supervisor -> role: handle this envelope now."""

    def __repr__(self) -> str:
        return f"DeliveryMessage({self.content.envelope.kind} {self.content.envelope.id} to {self.content.to})"


class StepMessage(StructuredMessage[StepReport]):
    """Closes a role's turn (AutoGen needs one chat message per response, even with no output)."""

    def __repr__(self) -> str:
        return f"StepMessage({self.content.role} {self.content.outcome} {self.content.outputs})"


BUS_MESSAGE_TYPES: list[type[BaseAgentEvent | BaseChatMessage]] = [EnvelopeMessage, DeliveryMessage, StepMessage]


def agent_name_for(role_name: str, index: int) -> str:
    """AutoGen agent names must be identifiers; YAML role names may not be."""
    if role_name.isidentifier():
        return role_name
    safe = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in role_name)
    return f"r{index}_{safe}"


class RoleAgent(BaseChatAgent):
    """Runs one :class:`Role` inside AutoGen: handles the deliveries addressed to it, nothing else."""

    def __init__(self, agent_name: str, role_name: str, role: Role, state: Supervisor, contexts: ContextFactory):
        super().__init__(agent_name, description=f"kgteam role {role_name}")
        self._role_name = role_name
        self._role = role
        self._state = state
        self._contexts = contexts

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return (EnvelopeMessage, StepMessage)

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        return None

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken
                          ) -> Response:
        notes = [m.content for m in messages if isinstance(m, DeliveryMessage) and m.content.to == self._role_name]
        if not notes:  # asked to speak without a delivery: nothing to do
            return Response(chat_message=self._report(StepReport(role=self._role_name, outcome="idle")))
        deliveries = [Delivery(n.envelope, n.to, n.step) for n in notes]
        results = await asyncio.gather(*(self._step(d, cancellation_token) for d in deliveries))
        inner: list[BaseAgentEvent | BaseChatMessage] = []
        reports = []
        for envelopes, report in results:
            inner += [EnvelopeMessage(content=envelope, source=self.name) for envelope in envelopes]
            reports.append(report)
        worst = next((r for r in reports if r.outcome != "ok"), reports[0])
        summary = StepReport(role=self._role_name, outputs=sum(r.outputs for r in reports), outcome=worst.outcome,
                             error=worst.error)
        return Response(chat_message=self._report(summary), inner_messages=inner)

    def _report(self, report: StepReport) -> StepMessage:
        return StepMessage(content=report, source=self.name)

    async def _step(self, delivery: Delivery, token: CancellationToken) -> tuple[list[Envelope], StepReport]:
        envelopes: list[Envelope] = []
        try:
            envelopes, report = await self._run(delivery, token)
            return envelopes, report
        finally:
            self._state.collect(delivery, envelopes)

    async def _run(self, delivery: Delivery, token: CancellationToken) -> tuple[list[Envelope], StepReport]:
        state, name = self._state, self._role_name
        if state.stop is not None:  # stopped between dispatch and start: do not start new work
            return [], StepReport(role=name, outcome="skipped")
        state.metrics.steps += 1
        context = self._contexts(delivery)
        before = state.usage
        t0 = time.perf_counter()
        task: asyncio.Future[list[Payload]] = asyncio.ensure_future(self._role.handle(delivery.envelope, context))
        token.link_future(task)  # AutoGen's token reaches the model/tool awaits inside the role
        state.inflight.add(task)
        report = StepReport(role=name)
        payloads: list[Payload] = []
        try:
            payloads = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the bus itself is being torn down
            state.request_stop("cancelled")
            report.outcome = "cancelled"
        except BudgetExhausted as exc:
            state.budget_stop(exc.budget, exc.used)
            report.outcome, report.error = "budget", str(exc)
        except ModelError as exc:
            message = f"model error in role {name!r}: {exc}"
            state.request_stop("error", error=message)
            report.outcome, report.error = "error", message
        except Exception as exc:  # a role bug ends the run cleanly, never the process
            message = f"role {name!r} failed: {type(exc).__name__}: {exc}"
            state.request_stop("error", error=message)
            report.outcome, report.error = "error", message
        finally:
            state.inflight.discard(task)
            elapsed = time.perf_counter() - t0
            state.metrics.role_s += elapsed
        if report.outcome != "ok":
            return [], report
        step_usage = _usage_delta(state.usage, before, elapsed)
        if state.evidence_tagger is not None:
            await tag_answers(payloads, state.evidence_tagger)
        envelopes = state.make_envelopes(delivery, name, payloads, step_usage)
        report.outputs = len(envelopes)
        return envelopes, report


def _usage_delta(after: Usage, before: Usage, seconds: float) -> Usage:
    return Usage(
        llm_calls=after.llm_calls - before.llm_calls,
        prompt_tokens=after.prompt_tokens - before.prompt_tokens,
        completion_tokens=after.completion_tokens - before.completion_tokens,
        seconds=round(seconds, 6),
    )


class SupervisorTermination(TerminationCondition):
    """Budgets as an AutoGen termination condition: stops when the supervisor says the run is over."""

    def __init__(self, state: Supervisor):
        self._state = state
        self._terminated = False

    @property
    def terminated(self) -> bool:
        return self._terminated

    async def __call__(self, messages: Sequence[BaseAgentEvent | BaseChatMessage]) -> StopMessage | None:
        state = self._state
        if state.stop is None:
            state.check_clock()
        if state.stop is None and not state.has_work():
            state.request_stop("no_answer")
        if state.stop is not None:
            self._terminated = True
            return StopMessage(content=state.stop.reason, source="supervisor")
        return None

    async def reset(self) -> None:
        self._terminated = False


class RouterManager(BaseGroupChatManager):
    """Speaker selection = the supervisor's next round of deliveries (filled by the pure ``route``)."""

    def __init__(self, *args: Any, state: Supervisor, name_map: dict[str, str], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._state = state
        self._name_map = name_map  # role name -> agent name
        self._started = False

    async def validate_group_state(self, messages: list[BaseChatMessage] | None) -> None:
        if not messages or not isinstance(messages[0], EnvelopeMessage):
            raise ValueError("a kgteam run starts with one EnvelopeMessage carrying the question")

    async def reset(self) -> None:
        self._message_thread.clear()
        self._current_turn = 0
        self._started = False
        if self._termination_condition is not None:
            await self._termination_condition.reset()

    async def update_message_thread(self, messages: Sequence[BaseAgentEvent | BaseChatMessage]) -> None:
        if not self._started:
            self._started = True
            for m in messages:
                if isinstance(m, EnvelopeMessage):
                    self._state.start(m.content)
        # role outputs reach the supervisor through Supervisor.collect; the thread stays small
        self._message_thread.extend(m for m in messages if isinstance(m, StepMessage))

    async def select_speaker(self, thread: Sequence[BaseAgentEvent | BaseChatMessage]) -> list[str] | str:
        t0 = time.perf_counter()
        batch = self._state.next_round()
        speakers: list[str] = []
        for delivery in batch:
            agent = self._name_map[delivery.to]
            note = DeliveryNote(to=delivery.to, step=delivery.step, envelope=delivery.envelope)
            await self.publish_message(
                GroupChatStart(messages=[DeliveryMessage(content=note, source="supervisor")]),
                topic_id=DefaultTopicId(type=self._participant_name_to_topic_type[agent]),
            )
            if agent not in speakers:
                speakers.append(agent)
        self._state.metrics.runtime_s += time.perf_counter() - t0
        return speakers


_event_logger = logging.getLogger(EVENT_LOGGER_NAME)


class _NoSpans:
    """Stands in for AutoGen's TraceHelper: no OpenTelemetry spans per message."""

    def trace_block(self, *args: Any, **kwargs: Any) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()


class QuietRuntime(SingleThreadedAgentRuntime):
    """AutoGen's runtime JSON-encodes every message for its event log even when nobody listens,
    and opens OpenTelemetry spans per message; together they were most of the bus overhead.
    Serialisation is skipped unless the event logger is enabled; spans unless ``KGTEAM_OTEL=1``.
    (Overrides private hooks of the pinned autogen-core 0.7.5.)"""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._spans = os.environ.get("KGTEAM_OTEL") == "1"
        if not self._spans:
            self._tracer_helper = _NoSpans()  # type: ignore[assignment]

    def _try_serialize(self, message: Any) -> str:
        if _event_logger.isEnabledFor(logging.INFO):
            return super()._try_serialize(message)
        return ""

    async def _create_otel_attributes(self, *args: Any, **kwargs: Any) -> Any:
        if self._spans:
            return await super()._create_otel_attributes(*args, **kwargs)
        return {}


class BusTeam(BaseGroupChat):
    """One question's team: the role agents, the router manager and the supervisor termination."""

    def __init__(self, agents: list[RoleAgent], state: Supervisor, name_map: dict[str, str]):
        self._state = state
        self._name_map = name_map
        super().__init__(
            name="kgteam",
            description="kgteam conversation bus",
            participants=list(agents),
            group_chat_manager_name="supervisor",
            group_chat_manager_class=RouterManager,
            termination_condition=SupervisorTermination(state),
            max_turns=None,  # kgteam's max_turns is enforced by the supervisor
            custom_message_types=list(BUS_MESSAGE_TYPES),
        )
        # keep AutoGen's embedded-runtime lifecycle (start/stop per run) with the quieter runtime;
        # private attribute of the pinned 0.7.5 BaseGroupChat
        self._runtime = QuietRuntime(ignore_unhandled_exceptions=False)

    def _create_group_chat_manager_factory(self, name: str, group_topic_type: str, output_topic_type: str,
                                           participant_topic_types: list[str], participant_names: list[str],
                                           participant_descriptions: list[str], output_message_queue: Any,
                                           termination_condition: TerminationCondition | None,
                                           max_turns: int | None, message_factory: Any,
                                           ) -> Callable[[], RouterManager]:
        def factory() -> RouterManager:
            return RouterManager(
                name, group_topic_type, output_topic_type, participant_topic_types, participant_names,
                participant_descriptions, output_message_queue, termination_condition, max_turns,
                message_factory, False, state=self._state, name_map=self._name_map,
            )

        return factory


async def run_bus(team: BusTeam, question: Envelope, token: CancellationToken) -> AsyncIterator[Envelope]:
    """Run the team on one question; yields every envelope (question first) as AutoGen streams it."""
    async for item in team.run_stream(task=EnvelopeMessage(content=question, source="user"),
                                      cancellation_token=token):
        if isinstance(item, EnvelopeMessage):
            yield item.content
        elif isinstance(item, TaskResult):
            return
