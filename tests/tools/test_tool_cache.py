"""A question's ToolCache: the same KG call twice runs once, every caller gets its own copy, failures
are not kept, and a team starts every question with an empty cache."""

from __future__ import annotations

import asyncio

import pytest

from kgteam.agents.team import TeamRunner
from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.payloads import Answer, Question
from kgteam.protocols.routes import Route
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contract import handles
from kgteam.tools.kg_tools import KGTools, is_kg_tool
from kgteam.tools.tool_cache import ToolCache
from kgteam.tools.toolbox import Toolbox, ToolCall
from kgteam.tools.types import ToolError
from kgteam.tools.web.tool import web_search

QUERY = "SELECT ?p ?o WHERE { <http://example.org/kg/e/Blade_Runner> ?p ?o }"


def _box(tools: KGTools, cache: ToolCache | None) -> tuple[Toolbox, list[ToolCall]]:
    seen: list[ToolCall] = []
    return tools.toolbox().with_hook(seen.append).with_cache(cache), seen


async def test_repeated_call_runs_once_and_returns_the_same_result(embedded_tools: KGTools):
    cache = ToolCache()
    box, seen = _box(embedded_tools, cache)
    first = await box["run_sparql"](QUERY)
    second = await box["run_sparql"](query=QUERY)  # same arguments, given by name: the same call
    fresh = await embedded_tools.run_sparql(QUERY)
    assert second.rows == first.rows == fresh.rows and len(second.rows) > 3
    second.rows.clear()  # a caller editing a reused result must not change what the next caller reads
    third = await box["run_sparql"](QUERY)
    assert third.rows == fresh.rows and third is not first
    assert [c.tool for c in seen] == ["run_sparql"]  # the reused result is no call
    assert (cache.calls, cache.hits) == (1, 2)
    hits = await box["search_entities"]("Blade Runner", k=3)
    again = await box["search_entities"]("Blade Runner", k=3)
    other_k = await box["search_entities"]("Blade Runner", k=2)
    assert again == hits and hits[0].label == "Blade Runner" and len(other_k) <= 2
    assert [c.tool for c in seen] == ["run_sparql", "search_entities", "search_entities"]


async def test_concurrent_identical_calls_share_one_run(embedded_tools: KGTools):
    cache = ToolCache()
    box, seen = _box(embedded_tools, cache)
    results = await asyncio.gather(*(box["labels_for"](["http://example.org/kg/e/Blade_Runner"]) for _ in range(4)))
    assert all(r == {"http://example.org/kg/e/Blade_Runner": "Blade Runner"} for r in results)
    assert len(seen) == 1 and (cache.calls, cache.hits) == (1, 3)


async def test_without_a_cache_every_call_runs(embedded_tools: KGTools):
    box, seen = _box(embedded_tools, None)
    await box["run_sparql"](QUERY)
    await box["run_sparql"](QUERY)
    assert len(seen) == 2


async def test_a_failed_call_is_not_kept(embedded_tools: KGTools):
    cache = ToolCache()
    box, seen = _box(embedded_tools, cache)
    for _ in range(2):
        with pytest.raises(ToolError):
            await box["run_sparql"]("SELECT ?s WHERE { ?s ?p }")  # a syntax error
    assert len(seen) == 2 and all(c.error for c in seen) and len(cache) == 0


def test_only_the_kg_tools_are_cacheable():
    assert is_kg_tool("run_sparql", KGTools.run_sparql) and is_kg_tool("labels_for", KGTools.labels_for)
    assert not is_kg_tool("web_search", web_search)
    assert not is_kg_tool("run_sparql", web_search)  # a plugin registered under a KG tool's name


class Counter:
    """A KG-tools-like resource counting how often it really ran."""

    def __init__(self) -> None:
        self.runs = 0

    async def search_entities(self, text: str, k: int = 10) -> list[str]:
        self.runs += 1
        await asyncio.sleep(0)
        return [f"{text}-{i}" for i in range(k)]


class TwiceAsker(Role):
    name = "twice"
    tools = ("search_entities",)

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Answer]:
        a = await ctx.tools["search_entities"](q.text, k=2)
        b = await ctx.tools["search_entities"](q.text, k=2)
        return [Answer(confidence=1.0, text=" ".join(a + b))]


async def test_a_team_shares_one_cache_per_question():
    counter = Counter()
    box = Toolbox.from_callables({"search_entities": Counter.search_entities}, [counter])
    box = Toolbox({n: t.cached() for n, t in box.items()})
    team = TeamRunner(roles={"twice": TwiceAsker()}, routes=[Route(kind="question", to=["twice"])],
                      model=ScriptedModel([("*", None, "ok")]), tools=box)
    first = await team.ask("film", session_id="a")
    assert first.text == "film-0 film-1 film-0 film-1" and counter.runs == 1
    await team.ask("film", session_id="a")  # the next question starts with an empty cache
    assert counter.runs == 2
