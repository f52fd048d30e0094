"""``kgteam mcp --transport http``: one real server process for the module, on a free 127.0.0.1 port,
driven by the SDK's streamable HTTP client. Every KG tool, the guard, bad input and ``ask``."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from conftest import ADA, ELM, KG_TOOLS, TENDED_BY, server_command, server_env
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


@dataclass
class Served:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(mcp_home, tmp_path_factory) -> Iterator[Served]:
    port = _free_port()
    log = tmp_path_factory.mktemp("mcp-http") / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(server_command(mcp_home, "--transport", "http", "--port", str(port)),
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=server_env(mcp_home), cwd=mcp_home)
    deadline = time.monotonic() + 120
    while "kgteam mcp:" not in log.read_text():  # said once the team is built, just before serving
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"kgteam mcp did not come up: {log.read_text()}")
        time.sleep(0.1)
    yield Served(f"http://127.0.0.1:{port}/mcp", proc, log)
    proc.send_signal(signal.SIGTERM)  # stopped by its own PID
    assert proc.wait(timeout=30) == 0, log.read_text()


@asynccontextmanager
async def connect(served: Served) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(served.url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def test_the_server_lists_typed_tools(served):
    async with connect(served) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == KG_TOOLS | {"ask"}
    for tool in tools.values():
        assert tool.description and tool.output_schema is not None
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    assert tools["neighbors"].input_schema["properties"]["hops"]["maximum"] == 3
    assert tools["run_sparql"].input_schema["required"] == ["query"]
    assert all(tools[name].annotations.read_only_hint for name in KG_TOOLS)
    assert {"answer", "evidence", "confidence", "stopped_by", "cost"} <= set(tools["ask"].output_schema["properties"])


async def test_each_kg_tool_answers_with_structured_content_and_text(served):
    async with connect(served) as session:
        hits = await session.call_tool("search_entities", {"text": "old elm"})
        neighbors = await session.call_tool("neighbors", {"iri": ELM, "direction": "out"})
        schema = await session.call_tool("entity_schema", {"iri": ELM})
        rows = await session.call_tool("run_sparql", {
            "query": f"SELECT ?tree WHERE {{ ?tree <{TENDED_BY}> <{ADA}> }} ORDER BY ?tree", "limit": 5})
        similar = await session.call_tool("similar_triples", {"text": "who tends the old elm", "k": 3})
    for result in (hits, neighbors, schema, rows, similar):
        assert not result.is_error, result.content
        assert result.content[0].text.strip()

    top = hits.structured_content["hits"][0]
    assert (top["iri"], top["label"], top["exact"]) == (ELM, "Old Elm", True)
    out = {(t["predicate_label"], t["object_label"]) for t in neighbors.structured_content["triples"]}
    assert ("tended by", "Ada Quill") in out and all(t["direction"] == "out"
                                                    for t in neighbors.structured_content["triples"])
    assert "(Old Elm, tended by, Ada Quill)" in neighbors.content[0].text
    stats = {s["predicate"]: s["count"] for s in schema.structured_content["outgoing"]}
    assert stats[TENDED_BY] == 1 and schema.structured_content["label"] == "Old Elm"
    trees = [r["tree"]["value"] for r in rows.structured_content["rows"]]
    assert trees == ["http://example.org/orchard/Ash", ELM]
    assert "LIMIT" in rows.structured_content["query"]  # the guard's text, not the caller's, was run
    triples = [(t["subject"], t["predicate"], t["object"]) for t in similar.structured_content["triples"]]
    assert (ELM, TENDED_BY, ADA) in triples


async def test_the_guard_and_the_caps_apply(served):
    async with connect(served) as session:
        update = await session.call_tool("run_sparql", {"query": "DELETE WHERE { ?s ?p ?o }"})
        remote = await session.call_tool("run_sparql", {
            "query": "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"})
        capped = await session.call_tool("run_sparql", {"query": "SELECT ?s WHERE { ?s ?p ?o }", "limit": 2})
    assert update.is_error and "read-only" in update.content[0].text
    assert remote.is_error and "SERVICE" in remote.content[0].text
    assert not capped.is_error
    assert len(capped.structured_content["rows"]) == 2 and capped.structured_content["truncated"]


async def test_bad_input_is_a_tool_error_and_the_server_keeps_serving(served):
    async with connect(served) as session:
        unknown = await session.call_tool("entity_schema", {"iri": "http://example.org/orchard/Nobody"})
        not_iri = await session.call_tool("neighbors", {"iri": "not an iri"})
        too_far = await session.call_tool("neighbors", {"iri": ELM, "hops": 9})
        missing = await session.call_tool("search_entities", {})
        no_tool = await session.call_tool("delete_everything", {})
        after = await session.call_tool("search_entities", {"text": "Ada Quill", "k": 1})
    assert unknown.is_error and "no entity <http://example.org/orchard/Nobody>" in unknown.content[0].text
    assert "search_entities" in unknown.content[0].text  # says what to do instead
    assert not_iri.is_error and "invalid IRI" in not_iri.content[0].text
    assert too_far.is_error and "hops" in too_far.content[0].text
    assert missing.is_error and "text" in missing.content[0].text
    assert no_tool.is_error and "delete_everything" in no_tool.content[0].text
    assert not after.is_error and after.structured_content["hits"][0]["iri"] == ADA
    assert served.proc.poll() is None and "Traceback" not in served.log.read_text()


async def test_ask_runs_the_team_on_the_floor_and_returns_answer_evidence_and_cost(served):
    async with connect(served) as session:
        first = await session.call_tool("ask", {"question": "who is the gardener of Old Elm"})
        blank = await session.call_tool("ask", {"question": ""})
    assert not first.is_error, first.content
    data = first.structured_content
    assert data["answer"] == "Ada Quill" and data["status"] == "answered" and data["grounded"]
    assert data["values"] == [{"label": "Ada Quill", "iri": ADA}]
    assert 0 < data["confidence"] <= 1 and data["stopped_by"] == "done"
    assert (ELM, TENDED_BY, ADA) in {(t["subject"], t["predicate"], t["object"]) for t in data["evidence"]["triples"]}
    assert data["model"] == "none" and data["cost"]["llm_calls"] == 0 and data["cost"]["total_tokens"] == 0
    assert data["session"]
    assert first.content[0].text.startswith("Ada Quill\n[answered, grounded")
    assert blank.is_error and "question" in blank.content[0].text


def test_http_refuses_a_foreign_host_header(served):
    """DNS rebinding: a page on another site cannot reach the localhost server through its own name."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    r = httpx.post(served.url, json=body, headers={"Host": "evil.example", "Accept": "application/json, "
                                                   "text/event-stream"}, timeout=10)
    assert r.status_code == 421
