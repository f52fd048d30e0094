"""Cancelling the task that runs ``ask`` from outside (``wait_for``, ``task.cancel()``) ends the whole
run: no bus, AutoGen runtime or role work keeps calling the model in the background."""

import asyncio
import gc
import weakref

import pytest

from kgteam.agents.sessions import SqliteSessionStore
from kgteam.agents.team import TeamRunner
from kgteam.llm.base import ChatReply
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.payloads import MissingInfo, Question
from kgteam.protocols.routes import Route
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contract import handles

FOREVER = Budgets(max_depth=10**6, max_breadth=10, max_retries=10, max_turns=10**6, max_llm_calls=10**6,
                  max_tokens=10**9, timeout_s=60)


class CountingSlowModel:
    """Every call takes ``delay_s``; ``calls`` counts the calls that started."""

    name = "counting-slow"

    def __init__(self, delay_s: float = 0.03):
        self.delay_s = delay_s
        self.calls = 0

    async def chat(self, messages, *, role, json_schema=None, temperature=0.0, max_tokens=None):
        self.calls += 1
        await asyncio.sleep(self.delay_s)
        return ChatReply(text="again", prompt_tokens=1, completion_tokens=1)


class Looper(Role):
    """Never answers: each message costs one model call and asks for one more step."""

    name = "looper"

    @handles
    async def on_step(self, message: Question | MissingInfo, ctx: RoleContext) -> list[MissingInfo]:
        await ctx.model.chat([{"role": "user", "content": "go on"}], role=self.name)
        return [MissingInfo(description="more")]


def looping_team(model, store=None) -> TeamRunner:
    return TeamRunner(roles={"looper": Looper()},
                      routes=[Route(kind="question", to=["looper"]), Route(kind="missing_info", to=["looper"])],
                      model=model, tools=None, budgets=FOREVER, session_store=store)


async def assert_run_is_over(model: CountingSlowModel, before: set[asyncio.Task]) -> None:
    calls = model.calls
    assert calls >= 2  # the run was going when it was cancelled
    await asyncio.sleep(1.0)
    assert model.calls == calls, f"model still called after cancellation: {calls} -> {model.calls}"
    alive = [t for t in asyncio.all_tasks() if t not in before and t is not asyncio.current_task() and not t.done()]
    assert alive == [], f"tasks of the cancelled run still alive: {alive}"


async def test_wait_for_timeout_stops_the_run():
    model = CountingSlowModel()
    team = looping_team(model)
    before = set(asyncio.all_tasks())
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(team.ask("loop"), 0.3)
    await assert_run_is_over(model, before)
    assert team.last_run is not None and team.last_run.stop is not None
    assert team.last_run.stop.reason == "cancelled"


async def test_task_cancel_stops_the_run_and_closes_the_session_turn(tmp_path):
    store = SqliteSessionStore(tmp_path / "s.db")
    model = CountingSlowModel()
    team = looping_team(model, store)
    before = set(asyncio.all_tasks())
    task = asyncio.create_task(team.ask("loop", session_id="s"))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await assert_run_is_over(model, before)
    ((question, answer),) = store.history("s")
    assert question == "loop" and answer.status == "unknown" and answer.stopped_by == "cancelled"
    (info,) = store.list_sessions()
    assert info.incomplete_turns == 0
    # the session goes on: the next turn runs normally (and is cancelled the same way)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(team.ask("again", session_id="s"), 0.2)
    assert [a.stopped_by for _, a in store.history("s")] == ["cancelled", "cancelled"]
    store.close()


async def test_async_listener_tasks_are_kept_alive_until_they_finish():
    """The loop holds tasks weakly: an awaiting listener with no other owner must not be collected."""
    model = CountingSlowModel(delay_s=0.0)
    team = TeamRunner(roles={"looper": Looper()}, routes=[Route(kind="question", to=["looper"])], model=model,
                      tools=None)
    waits: list[weakref.ref] = []
    finished: list[str] = []

    async def listener(envelope):
        future = asyncio.get_running_loop().create_future()  # owned by this frame only
        waits.append(weakref.ref(future))
        await future
        finished.append(envelope.kind)

    answer = await team.ask("one step", on_event=listener)
    assert answer.stopped_by == "done"
    await asyncio.sleep(0)  # the last listener starts
    gc.collect()
    assert len(waits) == 3 and all(ref() is not None for ref in waits)  # question, hop, answer
    for ref in waits:
        ref().set_result(None)
    for _ in range(3):
        await asyncio.sleep(0)
    assert finished == ["question", "missing_info", "answer"]
