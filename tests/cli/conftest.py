"""A tiny MetaQA-format KG and a two-role team (real model calls through a script, real KG tools),
so the CLI can be driven end to end without depending on Triad's prompts."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from pydantic import BaseModel

from kgteam.config import registry
from kgteam.protocols.evidence import Evidence, EvidenceQuery, EvidenceTriple
from kgteam.protocols.payloads import Answer, AnswerValue, Candidate, EntityCandidates, Question
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contract import handles
from kgteam.tools.sparql_guard import sparql_iri

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mini_team import MINI_GRAPH  # noqa: E402

KB = """\
My Big Fat Greek Wedding|directed_by|Joel Zwick
My Big Fat Greek Wedding|in_language|Greek
Fat Albert|directed_by|Joel Zwick
Fat Albert|release_year|2004
Kismet|directed_by|William Dieterle
Kismet|release_year|1944
"""
REL = "http://example.org/metaqa/r/directed_by"


class Mention(BaseModel):
    mention: str


class Linker(Role):
    """Asks the model which name the question is about, then links it with label search."""

    name = "t_linker"
    tools = ("search_entities",)

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[EntityCandidates]:
        reply = await ctx.model.chat([{"role": "user", "content": f"Name the film or person in: {q.text}"}],
                                     role=self.name, json_schema=Mention.model_json_schema())
        mention = Mention.model_validate_json(reply.text).mention
        hits = await ctx.tools["search_entities"](mention, k=3)
        return [EntityCandidates(mention=mention, candidates=[Candidate(iri=h.iri, label=h.label, score=h.score,
                                                                        source="search") for h in hits])]


class Answerer(Role):
    """Answers 'who directed X' / 'what did X direct' with one SPARQL query over directed_by."""

    name = "t_answerer"
    tools = ("run_sparql",)

    @handles
    async def on_candidates(self, cands: EntityCandidates, ctx: RoleContext) -> list[Answer]:
        if not cands.candidates:
            return [Answer(text="I don't know.", status="unknown")]
        top = cands.candidates[0]
        e = sparql_iri(top.iri)
        query = (f"SELECT ?s ?o ?sl ?ol WHERE {{ ?s <{REL}> ?o . FILTER(?s = {e} || ?o = {e}) "
                 "?s <http://www.w3.org/2000/01/rdf-schema#label> ?sl . "
                 "?o <http://www.w3.org/2000/01/rdf-schema#label> ?ol }")
        result = await ctx.tools["run_sparql"](query)
        triples, values = [], []
        for row in result.rows:
            s, o = row["s"].value, row["o"].value
            triples.append(EvidenceTriple(subject=s, predicate=REL, object=o, subject_label=row["sl"].value,
                                          predicate_label="directed by", object_label=row["ol"].value))
            other = (o, row["ol"].value) if s == top.iri else (s, row["sl"].value)
            values.append(AnswerValue(iri=other[0], label=other[1]))
        values.sort(key=lambda v: v.label)
        text = ", ".join(v.label for v in values) or "I don't know."
        return [Answer(confidence=1.0, text=text, values=values, grounded=bool(triples),
                       status="answered" if values else "unknown",
                       evidence=Evidence(triples=triples, queries=[EvidenceQuery(sparql=result.query,
                                                                                 row_count=len(result.rows))]))]


@pytest.fixture(autouse=True)
def cli_test_roles(monkeypatch: pytest.MonkeyPatch):
    module = types.ModuleType("kgteam_cli_test_roles")
    module.Linker, module.Answerer = Linker, Answerer
    monkeypatch.setitem(sys.modules, module.__name__, module)
    registry.refresh()
    for name, target in (("t_linker", "Linker"), ("t_answerer", "Answerer")):
        monkeypatch.setitem(registry.entry_table("roles"), name,
                            registry.Entry("roles", name, f"{module.__name__}:{target}", "tests"))
    yield
    monkeypatch.undo()
    registry.refresh()


@pytest.fixture(scope="session")
def kg_home(tmp_path_factory) -> Path:
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("kghome")
    kb = home / "mini_kb.txt"
    kb.write_text(KB, encoding="utf-8")
    build_kg([kb], "mini", home=home, format="metaqa", progress=False)
    return home


SCRIPT = {"rules": [
    {"role": "t_linker", "match": "Kismet", "reply": {"mention": "Kismet"}},
    {"role": "t_linker", "match": "Zwick", "reply": {"mention": "Joel Zwick"}},
]}

TEAM = """\
name: mini
description: linker + answerer over a six-triple KG
model:
  provider: scripted
  script: script.json
""" + MINI_GRAPH + """\
budgets:
  max_llm_calls: 5
  timeout_s: 30
"""


@pytest.fixture
def team_file(tmp_path, kg_home, monkeypatch) -> Path:
    monkeypatch.setenv("KGTEAM_HOME", str(kg_home))
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    path = tmp_path / "team.yaml"
    path.write_text(TEAM, encoding="utf-8")
    return path
