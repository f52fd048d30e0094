"""Accounting: LLM calls and tool calls land in the trace and the session store; concurrency is safe."""

import asyncio

from agents_playbook import Sleeper, any_reply_model, sleeper_routes

from kgteam.agents.sessions import SqliteSessionStore
from kgteam.agents.team import TeamRunner
from kgteam.protocols.payloads import Answer, Question
from kgteam.protocols.routes import Route
from kgteam.roles.base import ListTrace, Role, RoleContext
from kgteam.roles.contract import handles
from kgteam.tools.toolbox import Toolbox


class Lookup:
    """A stand-in tool object with the KGTools calling convention (async methods)."""

    async def search_entities(self, text: str, k: int = 10) -> list[str]:
        await asyncio.sleep(0)
        return [f"{text}-{i}" for i in range(k)]


class Asker(Role):
    name = "asker"
    tools = ("search_entities",)

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Answer]:
        hits = await ctx.tools["search_entities"](q.text, k=3)
        reply = await ctx.model.chat([{"role": "user", "content": "pick one of " + ", ".join(hits)}],
                                     role=self.name)
        ctx.trace.record("fallback", role=self.name, decision="pick", reason="scripted")
        return [Answer(confidence=1.0, text=reply.text)]


async def test_llm_and_tool_calls_are_traced_and_persisted(tmp_path):
    store = SqliteSessionStore(tmp_path / "a.db")
    mirror = ListTrace()
    team = TeamRunner(roles={"asker": Asker()}, routes=[Route(kind="question", to=["asker"])],
                      model=any_reply_model("Tracker"),
                      tools=Toolbox.from_callables({"search_entities": Lookup.search_entities}, [Lookup()]),
                      session_store=store, trace=mirror)
    answer = await team.ask("tracker", session_id="x")
    assert answer.text == "Tracker" and answer.cost.llm_calls == 1
    assert answer.cost.prompt_tokens > 0 and answer.cost.completion_tokens > 0
    events = store.events("x")
    kinds = [e["event"] for e in events]
    assert kinds == ["tool_call", "llm_call", "fallback"]
    tool, llm = events[0], events[1]
    assert tool["tool"] == "search_entities" and tool["role"] == "asker"
    assert tool["kwargs"] == {"text": "tracker", "k": 3}
    assert tool["result"] == {"type": "list", "len": 3} and tool["seconds"] >= 0
    assert llm["role"] == "asker" and llm["prompt_tokens"] == answer.cost.prompt_tokens
    assert "latency_s" in llm and llm["model"] == "scripted"
    assert [e["event"] for e in mirror.events] == kinds
    # the readable trace (`kgteam trace`, chat's /trace) shows the call's own arguments, not None
    from kgteam.agents.trace import render_text

    line = next(x for x in render_text(store, "x").splitlines() if "tool_call" in x)
    assert "search_entities " in line and "text='tracker'" in line and "k=3" in line
    assert "-> list of 3 " in line and "None" not in line
    answer_env = store.messages("x")[-1]
    assert answer_env.usage.llm_calls == 1  # the step's usage rides on its first output


async def test_concurrent_questions_do_not_mix():
    team = TeamRunner(roles={"sleeper": Sleeper(steps=3, sleep_at=2, sleep_s=0.05)}, routes=sleeper_routes(),
                      model=any_reply_model(), tools=None)
    sessions = [f"s{i}" for i in range(6)]
    answers = await asyncio.gather(*(team.ask(f"slow {s}", session_id=s) for s in sessions))
    assert all(a.status == "answered" and a.text == "done after 3 steps" for a in answers)
    for s in sessions:
        ((question, _),) = team.history(s)
        assert question == f"slow {s}"
