"""Smoke (real): one question through the Triad team and the real llama.cpp server with SmolLM2.

Checks the protocol path end to end (real server, grammar-constrained output, real KG, runtime)
and that the run ends well-formed — not that the tiny model answers well.
"""

from __future__ import annotations

import pytest

from kgteam.llm.local_server import LocalModelServer, llama_cpp_available
from kgteam.llm.openai_model import OpenAIChatModel
from kgteam.protocols.budgets import Budgets
from kgteam.roles.base import ListTrace
from kgteam.team_builder import playbook_runner

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.skipif(not llama_cpp_available(), reason="llama-cpp-python[server] is not installed")
async def test_one_question_through_triad_and_the_real_local_model(demo_tools, tmp_path):
    trace = ListTrace()
    with LocalModelServer(log_path=tmp_path / "llama.log") as server:
        model = OpenAIChatModel.for_local_server(server)
        team = playbook_runner("triad", model, demo_tools, budgets=Budgets(timeout_s=600, max_llm_calls=12),
                               trace=trace)
        try:
            answer = await team.ask("what movies did Temuera Morrison act in")
        finally:
            await model.aclose()
    assert answer.status in ("answered", "unknown"), answer.error
    assert answer.stopped_by in ("done", *Budgets.model_fields)
    assert answer.error is None
    assert 0 < answer.cost.llm_calls <= 12 and answer.cost.prompt_tokens > 0
    llm_calls = [e for e in trace.events if e["event"] == "llm_call"]
    assert llm_calls and all(e.get("role") for e in llm_calls)  # every real call is accounted to a role
    if answer.status == "answered":
        assert answer.evidence.triples and answer.evidence.queries  # an answer always shows its evidence
