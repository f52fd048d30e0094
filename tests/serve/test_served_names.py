"""The web chat's payloads (the HTTP stream and the stored session) show a schema:name KG's names (issue 28)."""

from __future__ import annotations

from pathlib import Path

from served import app_client, parse_sse

DATA = Path(__file__).resolve().parents[1] / "data" / "names"
NAMES = ["Hana Bellweather", "Jonah Pettifer"]


async def test_the_web_chat_payloads_show_the_kgs_names(tmp_path):
    from kgteam import Team
    from kgteam.serve import TeamService
    from kgteam.tools.loading import build_kg

    build_kg([DATA / "schema_name.ttl"], "campus", home=tmp_path, progress=False, embed=False)
    with Team.default(kg="campus", model="none", home=tmp_path, sessions=tmp_path / "s.sqlite") as team:
        async with app_client(TeamService(team, home=tmp_path), rate_per_minute=0) as client:
            sid = (await client.post("/v1/sessions", json={})).json()["id"]
            response = await client.post(f"/v1/sessions/{sid}/questions",
                                         json={"question": "Which students does Marisol Achterburg advise?"})
            events = parse_sse(response.text)
            answer = next(e["data"] for e in events if e["event"] == "answer")
            assert sorted(v["label"] for v in answer["values"]) == NAMES and answer["confidence"] is not None
            shown = {(t["s_label"], t["o_label"]) for t in answer["evidence"]["triples"]}
            assert {("Marisol Achterburg", n) for n in NAMES} <= shown
            detail = (await client.get(f"/v1/sessions/{sid}")).json()
            assert detail["turns"][0]["answer"] == answer  # read back from the store, the same names
