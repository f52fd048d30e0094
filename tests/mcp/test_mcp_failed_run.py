"""A team run that fails reaches an MCP client as an error result that still says what happened.

In process (the SDK's ``Client`` connected to the server object): the model is a script with no
rules, so the first model call fails at once, with no server to wait for.
"""

from __future__ import annotations

import json

from conftest import ADA
from mcp import Client

from kgteam.api import Team
from kgteam.mcp_server import build_server


async def test_a_failed_run_is_an_error_result_with_the_answer_fields(mcp_home, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": []}), encoding="utf-8")
    with Team.default(kg="orchard", model=f"scripted:{script}", home=mcp_home) as team:
        async with Client(build_server(team)) as client:
            failed = await client.call_tool("ask", {"question": "who is the gardener of Old Elm"})
            after = await client.call_tool("search_entities", {"text": "Ada Quill", "k": 1})
    assert failed.is_error
    assert failed.structured_content["status"] == "error"
    assert "no scripted rule matches" in failed.structured_content["error"]
    assert failed.content[0].text.startswith("Sorry, the run failed")
    assert not after.is_error and after.structured_content["hits"][0]["iri"] == ADA
