"""Fixtures for the eval tests: the shared data folder (skip cleanly when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_paths import SHARED_DATA


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = SHARED_DATA
    if not (path / "metaqa").is_dir():
        pytest.skip(f"shared data not found at {path}")
    return path


@pytest.fixture(scope="session")
def need():
    """``need(path)`` skips the test when an internal-only data file is absent."""

    def check(path: Path) -> Path:
        if not path.exists():
            pytest.skip(f"{path} not available (internal-only data)")
        return path

    return check


# ------------------------------------------------------------------ a small team of our own
# Two roles over a real KG with real KG tools and a scripted model: enough to drive `kgteam eval`
# end to end without depending on Triad's prompts.

import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import types  # noqa: E402

from pydantic import BaseModel  # noqa: E402

from kgteam.config import registry  # noqa: E402
from kgteam.protocols.evidence import Evidence, EvidenceQuery, EvidenceTriple  # noqa: E402
from kgteam.protocols.payloads import Answer, AnswerValue, Candidate, EntityCandidates, Question  # noqa: E402
from kgteam.roles.base import Role, RoleContext  # noqa: E402
from kgteam.roles.contract import handles  # noqa: E402
from kgteam.tools.sparql_guard import sparql_iri  # noqa: E402

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
METAQA_R = "http://example.org/metaqa/r/"


class Mention(BaseModel):
    mention: str


class RelationChoice(BaseModel):
    relation: str  # a MetaQA relation name, or "none"
    direction: str = "out"


class EvalLinker(Role):
    name = "ev_linker"
    tools = ("search_entities",)

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[EntityCandidates]:
        reply = await ctx.model.chat([{"role": "user", "content": f"Which entity is this about? {q.text}"}],
                                     role=self.name, json_schema=Mention.model_json_schema())
        mention = Mention.model_validate_json(reply.text).mention
        hits = await ctx.tools["search_entities"](mention, k=3)
        return [EntityCandidates(mention=q.text, candidates=[
            Candidate(iri=h.iri, label=h.label, score=h.score, source="search") for h in hits])]


class EvalLookup(Role):
    name = "ev_lookup"
    tools = ("run_sparql",)

    @handles
    async def on_candidates(self, cands: EntityCandidates, ctx: RoleContext) -> list[Answer]:
        reply = await ctx.model.chat([{"role": "user", "content": f"Which relation answers: {cands.mention}"}],
                                     role=self.name, json_schema=RelationChoice.model_json_schema())
        choice = RelationChoice.model_validate_json(reply.text)
        if choice.relation == "none" or not cands.candidates:
            return [Answer(text="I don't know.", status="unknown")]
        e, r = sparql_iri(cands.candidates[0].iri), sparql_iri(METAQA_R + choice.relation)
        pattern = f"{e} {r} ?x" if choice.direction == "out" else f"?x {r} {e}"
        result = await ctx.tools["run_sparql"](f"SELECT ?x ?l WHERE {{ {pattern} . ?x <{RDFS_LABEL}> ?l }}")
        values = sorted({(row["x"].value, row["l"].value) for row in result.rows}, key=lambda v: v[1])
        triples = [EvidenceTriple(subject=cands.candidates[0].iri if choice.direction == "out" else iri,
                                  predicate=METAQA_R + choice.relation,
                                  object=iri if choice.direction == "out" else cands.candidates[0].iri,
                                  subject_label=cands.candidates[0].label if choice.direction == "out" else label,
                                  object_label=label if choice.direction == "out" else cands.candidates[0].label)
                   for iri, label in values]
        return [Answer(confidence=1.0, text=", ".join(label for _, label in values) or "I don't know.",
                       values=[AnswerValue(iri=i, label=lab) for i, lab in values], grounded=bool(values),
                       status="answered" if values else "unknown",
                       evidence=Evidence(triples=triples, queries=[EvidenceQuery(sparql=result.query,
                                                                                 row_count=len(result.rows))]))]


@pytest.fixture
def eval_roles(monkeypatch: pytest.MonkeyPatch):
    module = types.ModuleType("kgteam_eval_test_roles")
    module.EvalLinker, module.EvalLookup = EvalLinker, EvalLookup
    monkeypatch.setitem(sys.modules, module.__name__, module)
    registry.refresh()
    for name, target in (("ev_linker", "EvalLinker"), ("ev_lookup", "EvalLookup")):
        monkeypatch.setitem(registry.entry_table("roles"), name,
                            registry.Entry("roles", name, f"{module.__name__}:{target}", "tests"))
    yield
    monkeypatch.undo()
    registry.refresh()


EVAL_TEAM = """\
name: eval-mini
description: linker + relation lookup (scripted model) for the eval tests
model:
  provider: scripted
  script: script.json
kg:
  backend: oxigraph
  name: evalmeta
roles: [ev_linker, ev_lookup]
routes:
  - {kind: question, sender: user, to: ev_linker}
  - {kind: entity_candidates, to: ev_lookup}
budgets:
  max_llm_calls: 5
  timeout_s: 30
"""

_GOLD_REL = re.compile(r"\?x(\d) <http://example.org/metaqa/r/([^>]+)> \?x(\d)")


@pytest.fixture(scope="session")
def metaqa_sample(data_dir):
    """20 seeded 1-hop questions and a KG of every KB triple touching their topic entities."""
    from kgteam.eval.datasets import load_dataset, sample

    items = sample(load_dataset("metaqa-consistent:1-hop", data_dir), 20, seed=3)
    topics = {it.topic_entity.label for it in items}
    lines = [ln for ln in (data_dir / "metaqa" / "kb.txt").read_text(encoding="utf-8").splitlines()
             if (parts := ln.split("|")) and (parts[0] in topics or parts[-1] in topics)]
    return items, lines


@pytest.fixture(scope="session")
def eval_kg_built(tmp_path_factory, metaqa_sample):
    """KG ``evalmeta`` (the sample's neighbourhoods) in its own KGTEAM home, built once."""
    from kgteam.tools.loading import build_kg

    _, lines = metaqa_sample
    home = tmp_path_factory.mktemp("evalhome")
    kb = home / "kb.txt"
    kb.write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_kg([kb], "evalmeta", home=home, format="metaqa", progress=False)
    return home


@pytest.fixture
def eval_kg_home(eval_kg_built, monkeypatch):
    monkeypatch.setenv("KGTEAM_HOME", str(eval_kg_built))
    return eval_kg_built


@pytest.fixture
def eval_team_file(tmp_path_factory, metaqa_sample, eval_roles, eval_kg_home):
    """Team YAML + script: 14 questions scripted right, 3 with a wrong relation, 3 abstaining."""
    items, _ = metaqa_sample
    rules = []
    for i, it in enumerate(items):
        m = _GOLD_REL.search(it.gold_query)
        relation, direction = m.group(2), "out" if m.group(1) == "0" else "in"
        if i % 7 == 3:
            relation = "release_year" if relation != "release_year" else "in_language"
        if i % 7 == 5:
            relation = "none"
        rules.append({"role": "ev_linker", "match": it.question, "reply": {"mention": it.topic_entity.label}})
        rules.append({"role": "ev_lookup", "match": it.question, "reply": {"relation": relation,
                                                                           "direction": direction}})
    folder = tmp_path_factory.mktemp("team")
    (folder / "script.json").write_text(json.dumps({"rules": rules}), encoding="utf-8")
    path = folder / "team.yaml"
    path.write_text(EVAL_TEAM, encoding="utf-8")
    return path


TRIAD_TEAM = """\
name: triad-fallback
description: the built-in Triad playbook; every model reply is non-JSON, so each decision takes its fallback
model:
  provider: scripted
  script: script.json
kg:
  backend: oxigraph
  name: evalmeta
playbook: triad
budgets:
  max_retries: 2
  max_llm_calls: 20
  timeout_s: 60
"""


@pytest.fixture
def triad_team_file(tmp_path_factory, eval_kg_home):
    folder = tmp_path_factory.mktemp("triad")
    script = {"rules": [{"role": "*", "reply": "Sorry, no JSON from me."}]}
    (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
    path = folder / "team.yaml"
    path.write_text(TRIAD_TEAM, encoding="utf-8")
    return path


# ------------------------------------------------------------------ KGs for claims and R3 data
# Session-scoped and built without vectors: the claim generator and the fact checks need only the store.

def _open_tools(name: str, home):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    return KGTools.from_kg(open_kg(name, home=home), embedder=None)


@pytest.fixture(scope="session")
def metaqa_demo(tmp_path_factory):
    """(home, tools) of the bundled MetaQA demo KG (the whole MetaQA KB; a few seconds to build)."""
    from kgteam.tools.kg import install_demo_kg

    home = tmp_path_factory.mktemp("r3_demo_home")
    install_demo_kg(home, embed=False)
    tools = _open_tools("metaqa", home)
    yield home, tools
    tools.close()


@pytest.fixture(scope="session")
def atelier_kg(atelier_home):
    """(home, tools) of the atelier test KG (tests/data/kgs/atelier; built once, tests/conftest.py)."""
    tools = _open_tools("atelier", atelier_home)
    yield atelier_home, tools
    tools.close()


@pytest.fixture(scope="session")
def wc2014_kg(tmp_path_factory):
    """(home, tools) of WC2014 built from the shared data (internal-only: skipped when absent)."""
    from kgteam.eval.datasets import WC2014_BASE
    from kgteam.tools.loading import build_kg

    kb = SHARED_DATA / "wc2014" / "WC2014.txt"
    if not kb.exists():
        pytest.skip(f"{kb} not available (internal-only data)")
    home = tmp_path_factory.mktemp("r3_wc2014_home")
    build_kg([kb], "wc2014", home=home, format="tsv", base_iri=WC2014_BASE, progress=False)
    tools = _open_tools("wc2014", home)
    yield home, tools
    tools.close()
