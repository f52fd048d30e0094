"""``kgteam mcp`` over stdio, as a desktop client starts it: the SDK's stdio client spawns the server.

One process for the module (a spawn imports kgteam and builds the team): one session walks through
the tool list, a KG tool, a guard refusal and ``ask`` on the deterministic floor.
"""

from __future__ import annotations

from conftest import ADA, ELM, KG_TOOLS, server_command, server_env
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def test_a_stdio_client_lists_the_tools_calls_them_and_asks(mcp_home, tmp_path):
    command = server_command(mcp_home)
    params = StdioServerParameters(command=command[0], args=command[1:], env=server_env(mcp_home), cwd=tmp_path)
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            assert {t.name for t in listed.tools} == KG_TOOLS | {"ask"}

            found = await session.call_tool("search_entities", {"text": "Old Elm", "k": 3})
            assert not found.is_error
            assert found.structured_content["hits"][0]["iri"] == ELM
            assert found.content[0].text.startswith(f"Old Elm <{ELM}>")

            refused = await session.call_tool("run_sparql", {"query": "DELETE WHERE { ?s ?p ?o }"})
            assert refused.is_error and "read-only" in refused.content[0].text

            answered = await session.call_tool("ask", {"question": "who is the gardener of Old Elm"})
            assert not answered.is_error, answered.content
            data = answered.structured_content
            assert data["answer"] == "Ada Quill" and data["values"][0]["iri"] == ADA
            assert data["model"] == "none" and data["cost"]["llm_calls"] == 0
    log = (tmp_path / "stderr.log").read_text()
    assert "over stdio" in log and "Traceback" not in log
