"""Retry loop, failures, cancellation and streaming of a TeamRunner."""

import asyncio
import contextlib
import time

from agents_playbook import (
    Checker,
    Exploder,
    Querier,
    Sleeper,
    any_reply_model,
    retry_routes,
    sleeper_routes,
)

from kgteam.agents.team import TeamRunner
from kgteam.llm.base import ModelError
from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.routes import Route
from kgteam.roles.base import ListTrace

EMPTY_Q = "SELECT ?x WHERE { :film :directed_by ?x }"
GOOD_Q = "SELECT ?x WHERE { ?x :directed :film }"


def retry_team(model, max_retries=3):
    return TeamRunner(roles={"querier": Querier(), "checker": Checker()}, routes=retry_routes(), model=model,
                      tools=None, budgets=Budgets(max_retries=max_retries), answer_role="checker")


async def test_empty_result_gives_retry_with_hint_and_a_different_query():
    model = ScriptedModel()
    model.add("querier", "previous attempt failed", GOOD_Q)  # the hint reaches the prompt
    model.add("querier", "write a query", EMPTY_Q)
    team = retry_team(model)
    events = []
    answer = await team.ask("who directed the film?", on_event=events.append)
    assert [e.kind for e in events] == ["question", "query_result", "retry_signal", "query_result", "answer"]
    retry = events[2].payload
    assert retry.reason == "empty_result" and EMPTY_Q in retry.hint.note and retry.attempt == 1
    assert events[2].attempt == 1 and events[3].attempt == 1
    queries = [e.payload.sparql for e in events if e.kind == "query_result"]
    assert queries == [EMPTY_Q, GOOD_Q]
    assert EMPTY_Q in model.calls_for("querier")[1].messages[-1]["content"]
    assert answer.status == "answered" and answer.stopped_by == "done" and answer.text == "Joel Zwick"
    assert answer.grounded and answer.evidence.queries[0].sparql == GOOD_Q


async def test_retries_stop_at_max_retries():
    model = any_reply_model(EMPTY_Q)  # never finds anything
    team = retry_team(model, max_retries=2)
    events = []
    answer = await team.ask("who directed the film?", on_event=events.append)
    retries = [e for e in events if e.kind == "retry_signal"]
    assert len(retries) == 3  # 2 honoured, the 3rd refused
    assert len(model.calls) == 3  # 1 + 2 retries delivered to the querier
    assert events[-2].kind == "budget_exceeded" and events[-2].payload.budget == "max_retries"
    assert answer.stopped_by == "max_retries" and answer.status == "unknown" and answer.text == "I don't know."
    assert not answer.grounded


async def test_role_exception_ends_with_status_error():
    team = TeamRunner(roles={"exploder": Exploder()}, routes=[Route(kind="question", to=["exploder"])],
                      model=any_reply_model(), tools=None)
    events = []
    answer = await team.ask("boom?", on_event=events.append)
    assert answer.status == "error" and answer.stopped_by == "error"
    assert "exploder" in answer.error and "ValueError" in answer.error and "kaboom" in answer.error
    assert events[-1].payload == answer


class FailingModel:
    name = "failing"

    async def chat(self, messages, *, role, json_schema=None, temperature=0.0, max_tokens=None):
        raise ModelError("HTTP 401 invalid api key", permanent=True, status=401)


async def test_model_error_ends_with_status_error_and_clear_message():
    trace = ListTrace()
    team = retry_team(FailingModel())
    team.trace = trace
    answer = await team.ask("q")
    assert answer.status == "error" and answer.stopped_by == "error"
    assert "model error" in answer.error and "401" in answer.error and "querier" in answer.error
    assert any(e["event"] == "llm_error" for e in trace.events)


class SlowModel:
    """Stands for a model call in flight; records whether it was cancelled."""

    name = "slow"

    def __init__(self):
        self.cancelled = False

    async def chat(self, messages, *, role, json_schema=None, temperature=0.0, max_tokens=None):
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled = True
            raise


async def test_cancel_stops_in_flight_model_call_promptly():
    model = SlowModel()
    team = retry_team(model)
    cancel = asyncio.Event()
    asyncio.get_running_loop().call_later(0.2, cancel.set)
    t0 = time.monotonic()
    events = []
    answer = await team.ask("q", cancel=cancel, on_event=events.append)
    assert time.monotonic() - t0 < 1.0
    assert model.cancelled
    assert answer.stopped_by == "cancelled" and answer.status == "unknown"
    assert events[-1].payload == answer and not any(e.kind == "budget_exceeded" for e in events)


async def test_stream_yields_every_message_in_order_question_first_answer_last():
    team = TeamRunner(roles={"sleeper": Sleeper(steps=4)}, routes=sleeper_routes(), model=any_reply_model(),
                      tools=None)
    seen = []
    callbacks = []
    async for envelope in team.stream("q", session_id="s1"):
        seen.append(envelope)
    await team.ask("q", session_id="s1", on_event=callbacks.append)
    assert [e.kind for e in seen] == ["question", "missing_info", "missing_info", "missing_info", "answer"]
    assert [e.kind for e in seen] == [e.kind for e in callbacks]
    assert [e.payload.description for e in seen[1:4]] == ["step 1", "step 2", "step 3"]
    for parent, child in zip(seen, seen[1:], strict=False):  # each message names its parent
        assert child.parents == [parent.id]
    assert {e.turn for e in seen} == {0} and {e.turn for e in callbacks} == {1}
    assert [q for q, _ in team.history("s1")] == ["q", "q"]


async def test_stream_is_live_not_buffered():
    team = TeamRunner(roles={"sleeper": Sleeper(steps=3, sleep_at=2, sleep_s=0.3)}, routes=sleeper_routes(),
                      model=any_reply_model(), tools=None)
    stamps = []
    async for envelope in team.stream("slow q"):
        stamps.append((envelope.kind, time.monotonic()))
    # the first hop arrived before the slow step finished
    assert stamps[-1][1] - stamps[1][1] >= 0.25


async def test_leaving_the_stream_early_cancels_the_run():
    team = TeamRunner(roles={"sleeper": Sleeper(steps=5, sleep_at=2)}, routes=sleeper_routes(),
                      model=any_reply_model(), tools=None)
    t0 = time.monotonic()
    async with contextlib.aclosing(team.stream("slow q", session_id="s")) as stream:
        async for envelope in stream:
            if envelope.kind == "missing_info":
                break
    assert time.monotonic() - t0 < 1.5
    (question, answer), = team.history("s")
    assert answer.stopped_by == "cancelled"


class BrokenFinalizer(Checker):
    async def finalize(self, ctx, reason):
        raise RuntimeError("finalize broke")


async def test_finalize_failure_falls_back_to_i_dont_know():
    trace = ListTrace()
    team = TeamRunner(roles={"querier": Querier(), "checker": BrokenFinalizer()}, routes=retry_routes(),
                      model=any_reply_model(EMPTY_Q), tools=None, budgets=Budgets(max_retries=0),
                      answer_role="checker", trace=trace)
    answer = await team.ask("q")
    assert answer.stopped_by == "max_retries" and answer.status == "unknown" and answer.text == "I don't know."
    assert any(e["event"] == "finalize_failed" and "finalize broke" in e["error"] for e in trace.events)


async def test_bus_running_dry_asks_finalize_and_reports_done():
    from agents_playbook import Brancher, Diver

    # the diver's hops are routed nowhere: after one hop nothing is pending and nobody answered
    team = TeamRunner(roles={"brancher": Brancher(n=1), "diver": Diver()},
                      routes=[Route(kind="question", to=["brancher"]), Route(kind="axiom", to=["diver"])],
                      model=any_reply_model(), tools=None, answer_role="diver")
    answer = await team.ask("q")
    assert answer.stopped_by == "done"
    assert answer.text == "partial: reached depth 1" and answer.status == "answered"  # the hop went deeper
