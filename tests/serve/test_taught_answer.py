"""A served answer says when the KG's trained reader chose its reading, and which bank examples taught it
(issue 23): the web chat shows it from the answer JSON, as ``kgteam ask`` does."""

from __future__ import annotations

import shutil

import pytest
from served import app_client, parse_sse

from kgteam.eval.datasets import DatasetItem, GoldAnswer

A = "http://example.org/atelier/"
MISREAD = "Who made the Heron Vase?"  # the hand scorer reads "made" as "made from"


def _made(thing: str, iri: str, maker: str) -> DatasetItem:
    return DatasetItem(id=f"made-{iri}", question=f"Who made the {thing}?", answers=[GoldAnswer(label=maker)],
                       gold_query=f"SELECT ?answer WHERE {{ <{A}{iri}> <{A}craftedBy> ?answer }}")


EXAMPLES = [_made("Ember Bowl", "EmberBowl", "Caspar Wren"), _made("Tide Tapestry", "TideTapestry", "Sabine Rook"),
            _made("North Wind Rug", "NorthWindRug", "Teodor Vance")]


@pytest.fixture
async def taught_home(atelier_home, tmp_path):
    """A copy of atelier whose folder holds a bank of three examples and the reader trained on it."""
    from kgteam.cli.tune_cmd import save_reader
    from kgteam.eval.teaching import record_bank
    from kgteam.roles.semantic import SemanticLayer
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    home = tmp_path / "taught"
    shutil.copytree(atelier_home / "kgs" / "atelier", home / "kgs" / "atelier")
    tools = KGTools.from_kg(open_kg("atelier", home=home), embedder=None, reader=None)
    try:
        bank = await record_bank(SemanticLayer(tools.toolbox(), reader=None), EXAMPLES)
    finally:
        tools.close()
    save_reader(bank, home / "kgs" / "atelier")
    return home


async def test_the_answer_json_names_the_trained_reader_and_its_examples(taught_home):
    from kgteam.api import Team
    from kgteam.serve import TeamService

    with Team.default(kg="atelier", model="none", home=taught_home, sessions=taught_home / "s.sqlite") as team:
        assert team._runner.tools.bank is not None  # the served team's roles see the KG's bank
        async with app_client(TeamService(team, home=taught_home), rate_per_minute=0) as client:
            sid = (await client.post("/v1/sessions", json={})).json()["id"]
            response = await client.post(f"/v1/sessions/{sid}/questions", json={"question": MISREAD})
            assert response.status_code == 200, response.text
            [answer] = [e["data"] for e in parse_sse(response.text) if e["event"] == "answer"]
            saved = (await client.get(f"/v1/sessions/{sid}")).json()["turns"][0]["answer"]
    assert "Odile Strand" in answer["text"]
    matches = answer["evidence"]["matches"]
    assert [m["label"] for m in matches] == ["crafted by"]
    taught = matches[0]["learned_from"]
    assert taught and set(taught) <= {e.id for e in EXAMPLES}
    assert saved["evidence"]["matches"] == matches  # the session keeps it for the chat's history too
