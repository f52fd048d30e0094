"""Decision maker: link entities and relations with the KG as memory, then build the query.

1. entity candidates from ``search_entities`` for the mention -> keep top-K;
2. relation candidates by one-hop traversal from the kept entities (both directions; for a
   second hop, from the set of first-hop neighbours) -> keep top-K per relation placeholder;
3. fill the template with every combination (bounded), execute each, drop the empty ones;
4. pick one.
Each choice is offered to the model through :func:`kgteam.roles.choice.choose`, whose output is
validated against the offered options and combined with a deterministic score (label match,
relation cues, chain coherence, non-empty result); invalid output falls back to that score.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz

from kgteam.prompts import fence
from kgteam.protocols.payloads import (
    Candidate,
    CandidateQuery,
    EntityCandidates,
    QueryCandidates,
    QueryResult,
    Question,
    RelationCandidates,
    RetryHint,
    RetrySignal,
    SparqlTemplate,
    TriplePatterns,
)
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, choose
from kgteam.roles.contract import handles
from kgteam.roles.triad.parsing import normalise, spot_mentions
from kgteam.roles.triad.relscore import QuestionView, hop1_score, pair_score
from kgteam.roles.triad.templates import (
    Binding,
    Chain,
    TemplateError,
    build_query,
    chain_template,
    parse_chain,
    relation_bindings,
)
from kgteam.tools.sparql_guard import sparql_iri
from kgteam.tools.types import ToolError

SKIP_PREDICATES = frozenset({
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://www.w3.org/2004/02/skos/core#altLabel",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
    "http://www.w3.org/2002/07/owl#sameAs",
    "http://schema.org/name",
})


class DecisionMakerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = True
    k_entities: int = Field(2, ge=1, le=10)
    k_relations: int = Field(2, ge=1, le=10)
    entity_search_k: int = Field(10, ge=1, le=50)
    max_queries: int = Field(8, ge=1, le=64, description="template fillings executed per attempt")
    query_limit: int = Field(1000, ge=1)
    llm_weight: float = Field(0.3, ge=0.0, description="how much a valid model vote adds to a normalised score")
    max_repairs: int = Field(1, ge=0, le=3)
    max_offered: int = Field(6, ge=2, le=20)
    near_exact: float = Field(0.92, ge=0, le=1, description="fuzzy names kept beside an exact match")
    min_similarity: float = Field(0.7, ge=0, le=1, description="fuzzy names kept when nothing matches exactly")


@dataclass
class RelOption:
    key: str  # "out|iri" / "in|iri"
    iri: str
    direction: str
    label: str
    names: list[str]
    score: float = 0.0
    parents: set[str] = field(default_factory=set)  # keys of hop-1 relations it was reached from
    sources: list[str] = field(default_factory=list)  # labels of the entities it was found at

    @property
    def binding(self) -> Binding:
        return Binding(self.iri, self.direction)


@dataclass
class Filled:
    entity: str
    relations: list[RelOption]
    sparql: str
    score: float
    key: str
    rows: int = 0
    error: str | None = None
    result: Any = None


def _rel_display(label: str, direction: str, src: str) -> str:
    return f"{src} --{label}--> ?" if direction == "out" else f"? --{label}--> {src}"


Linking = list[EntityCandidates | RelationCandidates | QueryCandidates | QueryResult]


class DecisionMaker(Role[DecisionMakerSettings]):
    name: ClassVar[str] = "decision_maker"
    reads = (Question, TriplePatterns)
    informs = (EntityCandidates, RelationCandidates, QueryCandidates)
    tools: ClassVar[tuple[str, ...]] = ("search_entities", "entity_schema", "run_sparql", "labels_for")
    prompts: ClassVar[tuple[str, ...]] = ("decision_entities", "decision_relations", "decision_query")

    # ------------------------------------------------------------------ entry
    @handles
    async def on_template(self, template: SparqlTemplate, ctx: RoleContext) -> Linking:
        return await self._link(template, RetryHint(), ctx)

    @handles
    async def on_retry(self, retry: RetrySignal, ctx: RoleContext) -> Linking:
        return await self._link(ctx.ancestor(SparqlTemplate), retry.hint, ctx)

    async def _link(self, template: SparqlTemplate | None, hint: RetryHint, ctx: RoleContext) -> Linking:
        patterns = ctx.ancestor(TriplePatterns)
        asked = ctx.ancestor(Question)
        question = asked.text if asked else ""
        try:
            chain = parse_chain(template.template if template else "")
        except TemplateError:
            chain = parse_chain(chain_template(max(1, len(template.relation_placeholders)) if template else 1))
        mention = self._mention(patterns)
        if mention is None:
            spotted = await spot_mentions(question, ctx.tools)
            mention = spotted[0].text if spotted else None
        out: Linking = []
        if not mention:
            out.append(QueryResult(sparql="", outcome="no_entity", error="no entity of the question was found"))
            return out
        k_ent = max(self.settings.k_entities, hint.k or 0)
        k_rel = max(self.settings.k_relations, hint.k or 0)
        qv = QuestionView.build(question, mention)

        entities = await self._entities(ctx, question, mention, k_ent, widened=hint.k is not None)
        out.append(EntityCandidates(mention=mention, placeholder="E0", candidates=[
            Candidate(iri=o.key, label=o.label, score=round(o.score, 4), source="search") for o in entities]))
        if not entities:
            out.append(QueryResult(sparql="", outcome="no_entity", error=f"no KG entity matches {mention!r}"))
            return out

        hop_options: list[list[RelOption]] = []
        r0_all = await self._hop1_candidates(ctx, [e.key for e in entities], qv)
        r0 = await self._keep_relations(ctx, question, mention, r0_all, k_rel, chain.steps[0].relation, 0)
        hop_options.append(r0)
        if chain.hops >= 2:
            r1_all = await self._hop2_candidates(ctx, [e.key for e in entities], r0, qv)
            r1 = await self._keep_relations(ctx, question, mention, r1_all, k_rel, chain.steps[1].relation, 1)
            hop_options.append(r1)
        for step, opts in zip(chain.steps, hop_options, strict=False):
            out.append(RelationCandidates(phrase=self._phrase(patterns, step.relation), placeholder=step.relation,
                                          candidates=[Candidate(iri=o.iri, label=f"{o.label} ({o.direction})",
                                                                score=round(o.score, 4), source=f"traversal:{o.direction}")
                                                      for o in opts]))

        filled = self._fill(chain, entities, hop_options, qv, set(hint.exclude))
        await self._execute(ctx, filled)
        nonempty = [f for f in filled if f.rows > 0]
        selected = await self._pick(ctx, question, chain, nonempty) if nonempty else None
        queries = [CandidateQuery(sparql=f.sparql, key=f.key, entity=f.entity,
                                  relations=relation_bindings(chain, [r.binding for r in f.relations]),
                                  row_count=f.rows, error=f.error) for f in filled]
        sel_index = filled.index(selected) if selected is not None else None
        out.append(QueryCandidates(queries=queries, selected=sel_index))
        if selected is None:
            best = filled[0] if filled else None
            out.append(QueryResult(sparql=best.sparql if best else "", outcome="empty_result",
                                   error="every filling of the template returned nothing"))
        else:
            res = selected.result
            out.append(QueryResult(sparql=selected.sparql, variables=list(res.variables),
                                   rows=[{k: v.model_dump(exclude_none=True) for k, v in row.items()}
                                         for row in res.rows]))
        return out

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _mention(patterns: TriplePatterns | None) -> str | None:
        if patterns is None:
            return None
        for p in patterns.patterns:
            for term in (p.subject, p.object):
                if term and not term.startswith("?"):
                    return term
        return None

    @staticmethod
    def _phrase(patterns: TriplePatterns | None, placeholder: str) -> str:
        idx = int(placeholder[1:]) if placeholder[1:].isdigit() else 0
        if patterns and idx < len(patterns.patterns):
            return patterns.patterns[idx].predicate
        return placeholder

    async def _entities(self, ctx: RoleContext, question: str, mention: str, k: int, *,
                        widened: bool = False) -> list[Option]:
        hits = await ctx.tools["search_entities"](mention, k=self.settings.entity_search_k)
        if not hits:
            return []
        scored = []
        for h in hits:
            exact = h.exact or normalise(h.matched) == normalise(mention) or normalise(h.label) == normalise(mention)
            sim = 1.0 if exact else fuzz.WRatio(normalise(mention), normalise(h.matched or h.label)) / 100.0
            scored.append((h, exact, sim))
        # with an exact match present only near-identical names stay; otherwise the closest names
        threshold = self.settings.near_exact if any(e for _, e, _ in scored) else self.settings.min_similarity
        if widened:  # a retry asked for more candidates: accept looser names too
            threshold = min(threshold, self.settings.min_similarity) - 0.15
        opts: dict[str, Option] = {}
        for h, exact, sim in scored:
            if not exact and sim < threshold:
                continue
            score = 1.0 if exact else 0.9 * sim
            if exact and (h.label == mention or h.matched == mention):
                score += 0.05
            if h.iri not in opts or opts[h.iri].score < score:
                opts[h.iri] = Option(h.iri, h.label, score, detail="exact label" if exact else f"matched {h.matched!r}")
        ranked = sorted(opts.values(), key=lambda o: o.score, reverse=True)
        if not self.settings.use_model:
            return ranked[:k]
        res = await choose(ctx, role=self.instance_name, decision="entities", prompt=self.prompt("decision_entities"),
                           options=ranked, k=k, values={"question": fence(question, tag="question"),
                                                        "mention": fence(mention, tag="mention")},
                           llm_weight=self.settings.llm_weight, max_repairs=self.settings.max_repairs,
                           max_offered=self.settings.max_offered)
        return res.chosen

    async def _hop1_candidates(self, ctx: RoleContext, entities: list[str], qv: QuestionView) -> list[RelOption]:
        found: dict[str, RelOption] = {}
        for iri in entities:
            schema = await ctx.tools["entity_schema"](iri)
            for stat in [*schema.outgoing, *schema.incoming]:
                if stat.predicate in SKIP_PREDICATES:
                    continue
                key = f"{stat.direction}|{stat.predicate}"
                if key not in found:
                    names = [stat.predicate, stat.label]
                    found[key] = RelOption(key, stat.predicate, stat.direction, stat.label, names,
                                           hop1_score(qv, names))
                found[key].sources.append(schema.label or iri)
        return sorted(found.values(), key=lambda o: (-o.score, o.key))

    async def _hop2_candidates(self, ctx: RoleContext, entities: list[str], r0: list[RelOption],
                               qv: QuestionView) -> list[RelOption]:
        """Predicates around the *set* of first-hop neighbours, in both directions (one query each)."""
        found: dict[str, RelOption] = {}
        for ent, rel in itertools.product(entities, r0):
            first = (f"{sparql_iri(ent)} {sparql_iri(rel.iri)} ?m ." if rel.direction == "out"
                     else f"?m {sparql_iri(rel.iri)} {sparql_iri(ent)} .")
            for direction, pattern in (("out", "?m ?p ?v ."), ("in", "?v ?p ?m .")):
                q = (f"SELECT ?p (COUNT(?v) AS ?n) WHERE {{ {first} {pattern} }} "
                     f"GROUP BY ?p ORDER BY DESC(?n) LIMIT 50")
                try:
                    res = await ctx.tools["run_sparql"](q)
                except ToolError as exc:
                    ctx.trace.record("tool_error", role=self.instance_name, tool="run_sparql", error=str(exc))
                    continue
                for row in res.rows:
                    p = row.get("p")
                    if p is None or p.value in SKIP_PREDICATES:
                        continue
                    key = f"{direction}|{p.value}"
                    if key not in found:
                        found[key] = RelOption(key, p.value, direction, p.value, [p.value])
                    found[key].parents.add(rel.key)
        if found:
            labels = await ctx.tools["labels_for"]([o.iri for o in found.values()])
            for o in found.values():
                o.label = labels.get(o.iri, o.label)
                o.names = [o.iri, o.label]
                o.score = max(pair_score(qv, r.names, o.names, same_relation=(r.iri == o.iri))
                              for r in r0 if r.key in o.parents)
        return sorted(found.values(), key=lambda o: (-o.score, o.key))

    async def _keep_relations(self, ctx: RoleContext, question: str, mention: str, options: list[RelOption],
                              k: int, placeholder: str, hop: int) -> list[RelOption]:
        if not options:
            return []
        by_key = {o.key: o for o in options}
        opts = [Option(o.key, _rel_display(o.label, o.direction,
                                           (o.sources[0] if o.sources else mention) if hop == 0 else "(step 1 result)"),
                       o.score) for o in options]
        if not self.settings.use_model:
            return options[:k]
        res = await choose(ctx, role=self.instance_name, decision=f"relations.{placeholder}",
                           prompt=self.prompt("decision_relations"), options=opts, k=k,
                           values={"question": fence(question, tag="question"), "hop": hop + 1},
                           llm_weight=self.settings.llm_weight, max_repairs=self.settings.max_repairs,
                           max_offered=self.settings.max_offered)
        return [by_key[o.key] for o in res.chosen]

    def _fill(self, chain: Chain, entities: list[Option], hops: list[list[RelOption]], qv: QuestionView,
              exclude: set[str]) -> list[Filled]:
        if len(hops) < chain.hops or any(not h for h in hops):
            return []
        out: list[Filled] = []
        for ent in entities:
            for combo in itertools.product(*hops):
                if chain.hops >= 2 and combo[0].key not in combo[1].parents:
                    continue
                key = "|".join([ent.key, *(r.key for r in combo)])
                if key in exclude:
                    continue
                if chain.hops == 1:
                    rel_score = combo[0].score
                else:
                    rel_score = pair_score(qv, combo[0].names, combo[1].names,
                                           same_relation=combo[0].iri == combo[1].iri)
                sparql = build_query(chain, ent.key, [r.binding for r in combo])
                out.append(Filled(ent.key, list(combo), sparql, ent.score + rel_score, key))
        out.sort(key=lambda f: -f.score)
        return out[: self.settings.max_queries]

    async def _execute(self, ctx: RoleContext, filled: list[Filled]) -> None:
        for f in filled:
            try:
                res = await ctx.tools["run_sparql"](f.sparql, limit=self.settings.query_limit)
            except ToolError as exc:
                f.error = str(exc)
                continue
            f.result = res
            f.rows = len(res.rows)
        ctx.trace.record("queries", role=self.instance_name, executed=len(filled),
                         nonempty=sum(1 for f in filled if f.rows))

    async def _pick(self, ctx: RoleContext, question: str, chain: Chain, nonempty: list[Filled]) -> Filled:
        sample_iris: list[str] = []
        for f in nonempty:
            var = chain.answer.lstrip("?")
            sample_iris += [r[var].value for r in f.result.rows[:3] if var in r and r[var].type == "uri"]
        sample_iris += [f.entity for f in nonempty]
        labels = await ctx.tools["labels_for"](sample_iris) if sample_iris else {}
        opts = []
        for i, f in enumerate(nonempty):
            var = chain.answer.lstrip("?")
            sample = [labels.get(r[var].value, r[var].value) for r in f.result.rows[:3] if var in r]
            path = " then ".join(_rel_display(r.label, r.direction, labels.get(f.entity, f.entity) if j == 0 else "?")
                                 for j, r in enumerate(f.relations))
            opts.append(Option(str(i), path, f.score, detail=f"{f.rows} result(s), e.g. {', '.join(sample)}"))
        if not self.settings.use_model:
            return nonempty[0]
        res = await choose(ctx, role=self.instance_name, decision="query", prompt=self.prompt("decision_query"),
                           options=opts, k=1, values={"question": fence(question, tag="question")},
                           llm_weight=self.settings.llm_weight, max_repairs=self.settings.max_repairs,
                           max_offered=self.settings.max_offered)
        return nonempty[int(res.chosen[0].key)]
