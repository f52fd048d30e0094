"""PG&AKV on a KG behind a SPARQL endpoint (a real oxigraph server): no vector index there, so the
verifier embeds the linked entity's neighbourhood on the fly, within the supervisor's budget."""

from __future__ import annotations

import pytest

from kgteam.llm.no_model import NoModel
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.payloads import Answer
from kgteam.roles.base import ListTrace
from kgteam.team_builder import playbook_runner
from kgteam.tools.kg_tools import KGTools

pytestmark = pytest.mark.integration


async def _run(tools, question):
    runner = playbook_runner("pgakv", NoModel(), tools.toolbox(), trace=ListTrace(),
                             budgets=Budgets(max_embed_triples=50, embed_timeout_s=10.0))
    seen = [e async for e in runner.stream(question, session_id="endpoint")]
    assert isinstance(seen[-1].payload, Answer)
    return seen[-1].payload, next(e.payload for e in seen if e.payload.kind == "verified_graph")


async def test_the_verifier_embeds_the_endpoints_neighbourhood_within_the_cap(oxigraph_server, label_index):
    tools = KGTools(oxigraph_server.endpoint_store(timeout_s=30), label_index)
    answer, verified = await _run(tools, "who directed Blade Runner")  # a linked belief: one ASK
    assert [v.label for v in answer.values] == ["Ridley Scott"] and answer.grounded, answer.text
    answer, verified = await _run(tools, "Tell me about Blade Runner")  # open beliefs: retrieval
    assert verified.on_the_fly and 0 < verified.embedded <= 50  # the per-question cap holds
    assert answer.status == "answered" and "Ridley Scott" in answer.text, answer.text
