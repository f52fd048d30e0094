"""Test roles for ``kgteam serve``: a two-role team over a MetaQA-format KG with a scripted model
(real model calls, real KG tools), plus questions that take their time (to cancel and to kill).

* "… Kismet …": ``s_entry`` asks the model for the name, links it with ``search_entities``;
  ``s_answerer`` answers with one SPARQL query over ``directed_by`` (evidence: triples, query);
* "sleep …": ``s_entry`` waits ``SLEEP_S`` before answering (to cancel mid-run);
* "slow N …": ``s_entry`` writes N ``missing_info`` steps, ``STEP_S`` apart (to kill mid-answer);
* "recall": ``s_entry`` answers with the session's earlier questions (what the history holds).
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from pydantic import BaseModel

from kgteam.config import registry
from kgteam.protocols.evidence import Evidence, EvidenceQuery, EvidenceTriple
from kgteam.protocols.payloads import Answer, AnswerValue, Candidate, EntityCandidates, MissingInfo, Question
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contract import handles
from kgteam.tools.sparql_guard import sparql_iri

REL = "http://example.org/metaqa/r/directed_by"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SLEEP_S = 30.0
STEP_S = 0.02

KB = """\
My Big Fat Greek Wedding|directed_by|Joel Zwick
My Big Fat Greek Wedding|in_language|Greek
Fat Albert|directed_by|Joel Zwick
Fat Albert|release_year|2004
Kismet|directed_by|William Dieterle
Kismet|release_year|1944
"""

TEAM = """\
name: mini-serve
description: entry + answerer over a small MetaQA KG, scripted model
model: {{provider: scripted, script: {script}}}
kg: {{backend: oxigraph, name: {kg}}}
roles: [s_entry, s_answerer]
routes:
  - {{kind: question, sender: user, to: s_entry}}
  - {{kind: missing_info, to: s_entry}}
  - {{kind: entity_candidates, to: s_answerer}}
budgets: {{max_turns: 1000, max_llm_calls: 5, timeout_s: 60}}
"""


def script_for(names: list[str]) -> dict:
    """A scripted-model rule per name: the entry role's question names it."""
    return {"rules": [{"role": "s_entry", "match": name, "reply": {"mention": name}} for name in names]}


class Mention(BaseModel):
    mention: str


class Entry(Role):
    name = "s_entry"
    reads = (Question, MissingInfo)
    tools = ("search_entities",)

    @handles
    async def on_step(self, msg: Question | MissingInfo, ctx: RoleContext
                      ) -> list[EntityCandidates | MissingInfo | Answer]:
        asked = msg if isinstance(msg, Question) else ctx.ancestor(Question)
        text = asked.text if asked is not None else ""
        if text == "recall":
            return [Answer(confidence=1.0, text=" | ".join(q for q, _ in ctx.history) or "(no history)")]
        if text.startswith("sleep"):
            await asyncio.sleep(SLEEP_S)
            return [Answer(confidence=1.0, text="slept")]
        slow = re.match(r"slow (\d+)", text)
        if slow:
            step = 1 + len(ctx.ancestors(MissingInfo))
            if step > int(slow.group(1)):
                return [Answer(confidence=1.0, text=f"done after {step - 1} steps")]
            await asyncio.sleep(STEP_S)
            return [MissingInfo(description=f"step {step}")]
        reply = await ctx.model.chat([{"role": "user", "content": f"Name the film or person in: {text}"}],
                                     role=self.name, json_schema=Mention.model_json_schema())
        mention = Mention.model_validate_json(reply.text).mention
        hits = await ctx.tools["search_entities"](mention, k=3)
        return [EntityCandidates(mention=mention, candidates=[Candidate(iri=h.iri, label=h.label, score=h.score,
                                                                        source="search") for h in hits])]


class Answerer(Role):
    name = "s_answerer"
    tools = ("run_sparql",)

    @handles
    async def on_candidates(self, cands: EntityCandidates, ctx: RoleContext) -> list[Answer]:
        if not cands.candidates:
            return [Answer(text="I don't know.", status="unknown")]
        top = cands.candidates[0]
        e = sparql_iri(top.iri)
        query = (f"SELECT ?s ?o ?sl ?ol WHERE {{ ?s <{REL}> ?o . FILTER(?s = {e} || ?o = {e}) "
                 f"?s <{LABEL}> ?sl . ?o <{LABEL}> ?ol }}")
        result = await ctx.tools["run_sparql"](query)
        triples, values = [], []
        for row in result.rows:
            s, o = row["s"].value, row["o"].value
            triples.append(EvidenceTriple(subject=s, predicate=REL, object=o, subject_label=row["sl"].value,
                                          predicate_label="directed by", object_label=row["ol"].value))
            other = (o, row["ol"].value) if s == top.iri else (s, row["sl"].value)
            values.append(AnswerValue(iri=other[0], label=other[1]))
        values.sort(key=lambda v: v.label)
        return [Answer(confidence=1.0, text=", ".join(v.label for v in values) or "I don't know.", values=values,
                       grounded=bool(triples), status="answered" if values else "unknown",
                       evidence=Evidence(triples=triples,
                                         queries=[EvidenceQuery(sparql=result.query, row_count=len(result.rows))]))]


def register() -> None:
    """Make the roles known to the registry (a plugin would use entry points)."""
    for name, target in (("s_entry", "Entry"), ("s_answerer", "Answerer")):
        registry.entry_table("roles")[name] = registry.Entry("roles", name, f"serve_roles:{target}", "tests")


def write_team(folder: Path, kg: str = "mini", names: tuple[str, ...] = ("Kismet", "Joel Zwick", "Fat Albert")
               ) -> Path:
    import json

    (folder / "script.json").write_text(json.dumps(script_for(list(names))), encoding="utf-8")
    path = folder / "team.yaml"
    path.write_text(TEAM.format(script="script.json", kg=kg), encoding="utf-8")
    return path


if __name__ == "__main__":  # `python serve_roles.py serve --team ...`: kgteam with these roles
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # the registry imports them as serve_roles
    register()
    from kgteam.cli.app import app

    app(prog_name="kgteam", args=sys.argv[1:])
