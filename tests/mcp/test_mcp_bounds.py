"""Issue 40 (hardening round five), in process: the SDK's ``Client`` on the server object.

DESCRIBE * said in words, a call bounded end to end (reply included) and never held up by another,
the reply capped in bytes as sent, arguments checked against the schema strictly, and errors that
never echo unbounded input.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import anyio
import pytest
from conftest import ADA, ELM
from mcp import Client

import kgteam.mcp_server as mcp_server
from kgteam.api import Team
from kgteam.mcp_server import build_server


@pytest.fixture(scope="module")
def team(mcp_home) -> Iterator[Team]:
    with Team.default(kg="orchard", model="none", home=mcp_home) as built:
        yield built


def slow_text(monkeypatch: pytest.MonkeyPatch, seconds: float) -> threading.Event:
    """Building a SPARQL reply's text takes ``seconds`` (blocking), as a large reply does under load;
    the event is set (and its ``at`` recorded) when it starts."""
    plain = mcp_server._text_of_sparql
    started = threading.Event()

    def slow(res):
        started.at = time.monotonic()  # type: ignore[attr-defined]
        started.set()
        time.sleep(seconds)
        return plain(res)

    monkeypatch.setattr(mcp_server, "_text_of_sparql", slow)
    return started


async def test_describe_star_is_refused_in_words(team):
    async with Client(build_server(team)) as client:
        star = await client.call_tool("run_sparql", {"query": "DESCRIBE * WHERE { ?s ?p ?o }"})
        named = await client.call_tool("run_sparql", {"query": f"DESCRIBE <{ELM}>"})
    text = star.content[0].text
    assert star.is_error and "DESCRIBE * at line 1, column 1 is not supported" in text
    assert "CONSTRUCT" in text and "TypeError" not in text
    assert not named.is_error, named.content


async def test_the_time_limit_covers_building_the_reply(team, monkeypatch):
    monkeypatch.setattr(team.runner.kg, "default_timeout_s", 1.0)
    slow_text(monkeypatch, 3.0)
    async with Client(build_server(team)) as client:
        started = time.monotonic()
        late = await client.call_tool("run_sparql", {"query": "SELECT * WHERE { ?s ?p ?o } # LIMIT 5"})
        took = time.monotonic() - started
    assert late.is_error and "took longer than 1s" in late.content[0].text, late.content
    assert took < 2.5


async def test_a_slow_reply_does_not_hold_up_another_call(team, monkeypatch):
    building = slow_text(monkeypatch, 2.0)
    async with Client(build_server(team)) as client:

        async def slow() -> None:
            result = await client.call_tool("run_sparql", {"query": "SELECT * WHERE { ?s ?p ?o }"})
            assert not result.is_error, result.content

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow)
            await anyio.to_thread.run_sync(building.wait, 30)  # the slow call is building its reply now
            quick = await client.call_tool("search_entities", {"text": "Ada Quill", "k": 1})
            answered = time.monotonic()
    assert not quick.is_error and quick.structured_content["hits"][0]["iri"] == ADA
    assert answered - building.at < 1.0  # not after the slow reply's 2 s


async def test_the_reply_is_capped_in_bytes_as_sent(team, monkeypatch):
    cap = 50_000
    monkeypatch.setattr(team.runner.kg, "max_result_bytes", cap)
    async with Client(build_server(team)) as client:
        cross = await client.call_tool("run_sparql", {"query": "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"})
        small = await client.call_tool("run_sparql", {"query": f"SELECT ?t WHERE {{ ?t ?p <{ADA}> }}"})
    assert not cross.is_error, cross.content
    sent = len(cross.model_dump_json(by_alias=True, exclude_none=True).encode())
    assert sent <= cap - 200  # and the JSON-RPC envelope around it fits the rest
    data = cross.structured_content
    assert data["truncated"] and data["truncated_by"] == "bytes" and data["rows"]
    assert f"a reply holds at most {cap} bytes" in cross.content[0].text
    assert not small.structured_content["truncated"] and len(small.structured_content["rows"]) == 2


async def test_arguments_are_checked_against_the_schema_strictly(team):
    async with Client(build_server(team)) as client:
        as_bool = await client.call_tool("run_sparql", {"query": "SELECT * WHERE { ?s ?p ?o }", "limit": True})
        k_bool = await client.call_tool("search_entities", {"text": "Ada", "k": False})
        as_text = await client.call_tool("neighbors", {"iri": ELM, "hops": "2"})
        extra = await client.call_tool("search_entities", {"text": "Ada", "kk": 3, "verbose": True})
        whole = await client.call_tool("run_sparql", {"query": "SELECT ?s WHERE { ?s ?p ?o }", "timeout_s": 5,
                                                      "limit": 1})
        listed = await client.call_tool("neighbors", {"iri": ELM, "predicates": '["http://example.org/orchard/tendedBy"]'})
    assert as_bool.is_error and "limit: Input should be a valid integer (got a boolean)" in as_bool.content[0].text
    assert k_bool.is_error and "k:" in k_bool.content[0].text
    assert as_text.is_error and "hops" in as_text.content[0].text and "got a string" in as_text.content[0].text
    assert extra.is_error and "unknown argument(s) 'kk', 'verbose'" in extra.content[0].text
    assert "it takes text, k" in extra.content[0].text
    assert not whole.is_error, whole.content  # an integer is a number (timeout_s)
    assert not listed.is_error, listed.content  # a list sent as a JSON string is still read (Claude Desktop)
    assert [t["object"] for t in listed.structured_content["triples"]] == [ADA]


async def test_errors_never_echo_unbounded_input(team):
    huge = "x" * 10_000_000
    async with Client(build_server(team)) as client:
        no_tool = await client.call_tool(huge, {})
        no_arg = await client.call_tool("search_entities", {"text": "Ada", huge: 1})
        no_entity = await client.call_tool("entity_schema", {"iri": "http://example.org/" + "y" * 1990})
        after = await client.call_tool("search_entities", {"text": "Ada Quill", "k": 1})
    assert no_tool.is_error and no_tool.content[0].text.startswith("unknown tool 'xxxx")
    assert "(10000000 characters)" in no_tool.content[0].text and len(no_tool.content[0].text) < 400
    assert no_arg.is_error and "unknown argument(s) 'xxx" in no_arg.content[0].text
    assert len(no_arg.content[0].text) < 400
    assert no_entity.is_error and len(no_entity.content[0].text) < 600
    assert not after.is_error and after.structured_content["hits"][0]["iri"] == ADA
