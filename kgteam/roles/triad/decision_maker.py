"""Decision maker: link the question to the KG and build the query, from the semantic layer's paths.

1. entity candidates: the KG entities of the layer's ranked paths (or, for a mention the model
   wrote, ``search_entities`` for it, and the layer ranks paths from those);
2. relation candidates per placeholder: the relations of the ranked paths of the template's
   length, with their path scores (and which words of the question named them);
3. fill the template with the best paths (bounded), execute each, drop the empty ones;
4. pick one: the best-scored non-empty filling, or the model's valid vote combined with it
   through :func:`kgteam.roles.choice.choose`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz

from kgteam.prompts import fence
from kgteam.protocols.graph_template import GraphTemplate
from kgteam.protocols.payloads import (
    Candidate,
    CandidateQuery,
    EntityCandidates,
    GraphReading,
    QueryCandidates,
    QueryResult,
    Question,
    RankedPath,
    RelationCandidates,
    RelationPaths,
    RetryHint,
    RetrySignal,
    SparqlTemplate,
    TriplePatterns,
)
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, choose
from kgteam.roles.contract import handles
from kgteam.roles.semantic import SemanticLayer, SemanticSettings, spot_mentions
from kgteam.roles.semantic.mentions import mention_in
from kgteam.roles.semantic.paths import ChainConvention
from kgteam.roles.semantic.reader import chain_convention
from kgteam.roles.semantic.reading_answer import run_reading
from kgteam.roles.semantic.shape import read_shape
from kgteam.roles.semantic.shaped import ShapedReader, literal_relations, mask_mentions, not_shape_words
from kgteam.roles.semantic.similarity import team_similarity
from kgteam.roles.semantic.text import normalise
from kgteam.roles.triad.graph_filling import fill
from kgteam.roles.triad.templates import (
    Binding,
    Chain,
    TemplateError,
    build_query,
    chain_template,
    parse_chain,
    relation_bindings,
)
from kgteam.tools.types import RDFTerm, SparqlResult, ToolError


class DecisionMakerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = True
    k_entities: int = Field(2, ge=1, le=10)
    entity_search_k: int = Field(10, ge=1, le=50)
    max_queries: int = Field(8, ge=1, le=64, description="template fillings executed per attempt")
    query_limit: int = Field(1000, ge=1)
    llm_weight: float = Field(0.3, ge=0.0, description="how much a valid model vote adds to a normalised score")
    max_repairs: int = Field(1, ge=0, le=3)
    max_offered: int = Field(6, ge=2, le=20)
    semantic: SemanticSettings = Field(default_factory=SemanticSettings)
    near_exact: float = Field(0.92, ge=0, le=1, description="fuzzy names kept beside an exact match")
    min_similarity: float = Field(0.7, ge=0, le=1, description="fuzzy names kept when nothing matches exactly")


@dataclass
class Filled:
    entity: str
    path: RankedPath
    sparql: str
    score: float
    key: str
    rows: int = 0
    error: str | None = None
    result: Any = None


Linking = list[EntityCandidates | RelationCandidates | QueryCandidates | QueryResult]


class DecisionMaker(Role[DecisionMakerSettings]):
    name: ClassVar[str] = "decision_maker"
    reads = (Question, TriplePatterns, RelationPaths)
    informs = (EntityCandidates, RelationCandidates, QueryCandidates)
    tools: ClassVar[tuple[str, ...]] = ("search_entities", "entity_schema", "run_sparql", "labels_for",
                                        "relation_names")
    prompts: ClassVar[tuple[str, ...]] = ("decision_entities", "decision_query")

    # ------------------------------------------------------------------ entry
    @handles
    async def on_template(self, template: SparqlTemplate, ctx: RoleContext) -> Linking:
        return await self._link(template, RetryHint(), ctx)

    @handles
    async def on_retry(self, retry: RetrySignal, ctx: RoleContext) -> Linking:
        return await self._link(ctx.ancestor(SparqlTemplate), retry.hint, ctx)

    async def _link(self, template: SparqlTemplate | None, hint: RetryHint, ctx: RoleContext) -> Linking:
        asked = ctx.ancestor(Question)
        question = asked.text if asked else ""
        if template is not None and template.graph is not None and template.graph.shape != "chain":
            filled = await self._fill_graph(template.graph, question, ctx)
            if filled is not None:
                return await self._run_reading(filled, ctx)
        if template is not None and template.reading is not None:
            return await self._run_reading(template.reading, ctx)
        patterns = ctx.ancestor(TriplePatterns)
        try:
            chain = parse_chain(template.template if template else "")
        except TemplateError:
            chain = parse_chain(chain_template(max(1, len(template.relation_placeholders)) if template else 1))
        paths = ctx.ancestor(RelationPaths)
        mention = self._mention(patterns) or (paths.mention if paths else None)
        if mention is None:
            spotted = await spot_mentions(question, ctx.tools)
            mention = spotted[0].text if spotted else None
        out: Linking = []
        if not mention:
            out.append(QueryResult(sparql="", outcome="no_entity", error="no entity of the question was found"))
            return out
        k_ent = max(self.settings.k_entities, hint.k or 0)
        linked = [p for p in paths.paths if normalise(p.mention) == normalise(mention)] if paths else []
        if not linked or hint.k is not None:
            # a mention the layer did not read (the model's, or a widened retry): search it, rank from there
            entities = await self._entities(ctx, question, mention, k_ent, widened=hint.k is not None)
            out.append(EntityCandidates(mention=mention, placeholder="E0", candidates=[
                Candidate(iri=o.key, label=o.label, score=round(o.score, 4), source="search") for o in entities]))
            if not entities:
                out.append(QueryResult(sparql="", outcome="no_entity", error=f"no KG entity matches {mention!r}"))
                return out
            layer = SemanticLayer(ctx.tools, team_similarity(ctx.tools), self.settings.semantic)
            found = mention_in(question, mention, [o.key for o in entities])
            ranked = await layer.rank(question, [found])
            linked = ranked.paths
        else:
            seen: dict[str, RankedPath] = {}
            for p in linked:
                seen.setdefault(p.entity, p)
            out.append(EntityCandidates(mention=mention, placeholder="E0", candidates=[
                Candidate(iri=iri, label=p.mention, score=round(p.score, 4), source="paths")
                for iri, p in list(seen.items())[:k_ent]]))
        fitting = [p for p in linked if p.hops == chain.hops]
        for i, step in enumerate(chain.steps):
            best: dict[str, tuple[float, str]] = {}
            for p in fitting:
                s = p.steps[i]
                key = f"{s.direction}|{s.predicate}"
                if key not in best or best[key][0] < p.score:
                    best[key] = (p.score, f"{s.label} ({s.direction})" + (f' ~ "{s.words}"' if s.words else ""))
            out.append(RelationCandidates(phrase=self._phrase(patterns, step.relation), placeholder=step.relation,
                                          candidates=[Candidate(iri=k.split("|", 1)[1], label=lab, score=round(sc, 4),
                                                                source=f"paths:{k.split('|', 1)[0]}")
                                                      for k, (sc, lab) in list(best.items())[: self.settings.max_offered]]))

        filled = self._fill(chain, fitting, set(hint.exclude), chain_convention(ctx.tools))
        await self._execute(ctx, filled, chain)
        nonempty = [f for f in filled if f.rows > 0]
        selected = await self._pick(ctx, question, chain, nonempty) if nonempty else None
        queries = [CandidateQuery(sparql=f.sparql, key=f.key, entity=f.entity,
                                  relations=relation_bindings(chain, _bindings(f.path)),
                                  score=round(f.score, 4), row_count=f.rows, error=f.error) for f in filled]
        sel_index = filled.index(selected) if selected is not None else None
        out.append(QueryCandidates(queries=queries, selected=sel_index))
        if selected is None:
            best_f = filled[0] if filled else None
            out.append(QueryResult(sparql=best_f.sparql if best_f else "", outcome="empty_result",
                                   error="every filling of the template returned nothing" if filled
                                   else f"no relation path of {chain.hops} hop(s) fits the question"))
        else:
            res = selected.result
            out.append(QueryResult(sparql=selected.sparql, variables=list(res.variables),
                                   rows=[{k: v.model_dump(exclude_none=True) for k, v in row.items()}
                                         for row in res.rows]))
        return out

    async def _fill_graph(self, template: GraphTemplate, question: str, ctx: RoleContext) -> GraphReading | None:
        """The model's query-graph template filled by the shape reader from the layer's ranked
        relations (None: the KG gives no reading of that shape; the deterministic one stands)."""
        paths = ctx.ancestor(RelationPaths)
        if paths is None or not question.strip():
            return None
        mentions = not_shape_words(await spot_mentions(question, ctx.tools), read_shape(question))
        seen = read_shape(mask_mentions(question, mentions), literal_relations(paths))
        reader = ShapedReader(ctx.tools, team_similarity(ctx.tools))
        filled = await fill(reader, question, template, paths, mentions, seen, ctx.trace, self.instance_name)
        ctx.trace.record("template_fill", role=self.instance_name, shape=template.shape, filled=filled is not None,
                         reading=filled.explanation if filled else None,
                         confidence=filled.confidence if filled else None)
        return filled

    async def _run_reading(self, reading: GraphReading, ctx: RoleContext) -> Linking:
        """A query graph reading is already linked: compile it through the one builder and run it."""
        if reading.guess_only and not reading.graph.where.triples and not reading.graph.where.not_exists:
            return [QueryCandidates(queries=[], selected=None),
                    QueryResult(sparql="", outcome="empty_result", error=reading.explanation, reading=reading)]
        try:
            ran = await run_reading(ctx.tools, reading, self.settings.query_limit)
        except ToolError as exc:
            return [QueryCandidates(queries=[], selected=None),
                    QueryResult(sparql="", outcome="query_error", error=str(exc), reading=reading)]
        sparql, variables, rows = ran.sparql, ran.variables, ran.rows
        ctx.trace.record("queries", role=self.instance_name, executed=1, nonempty=int(bool(rows)),
                         shape=reading.graph.shape)
        query = CandidateQuery(sparql=sparql, key=reading.key, entity=(reading.graph.topics or [None])[0],
                               score=reading.confidence, confidence=reading.confidence, row_count=len(rows))
        return [QueryCandidates(queries=[query], selected=0 if rows else None),
                QueryResult(sparql=sparql, variables=variables, rows=rows, reading=reading)]

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

    def _fill(self, chain: Chain, paths: list[RankedPath], exclude: set[str],
              convention: ChainConvention) -> list[Filled]:
        out: list[Filled] = []
        for p in paths:
            if p.key in exclude:
                continue
            sparql = build_query(chain, p.entity, _bindings(p), convention=convention)
            out.append(Filled(p.entity, p, sparql, p.score, p.key))
            if len(out) >= self.settings.max_queries:
                break
        return out

    async def _execute(self, ctx: RoleContext, filled: list[Filled], chain: Chain) -> None:
        var = chain.answer.lstrip("?")
        for f in filled:
            if f.path.answers:  # the layer already ran this path: its end values are this filling's rows
                f.result = SparqlResult(query=f.sparql, variables=[var],
                                        rows=[{var: RDFTerm.model_validate(a)} for a in f.path.answers])
                f.rows = len(f.result.rows)
                continue
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
        if not self.settings.use_model:
            return nonempty[0]
        var = chain.answer.lstrip("?")
        sample_iris = [r[var].value for f in nonempty for r in f.result.rows[:3] if var in r and r[var].type == "uri"]
        labels = await ctx.tools["labels_for"](sample_iris) if sample_iris else {}
        opts = []
        for i, f in enumerate(nonempty):
            sample = [labels.get(r[var].value, r[var].value) for r in f.result.rows[:3] if var in r]
            path = f"{f.path.mention}: " + " then ".join(
                f"{'' if s.direction == 'out' else 'inverse of '}{s.label}" for s in f.path.steps)
            opts.append(Option(str(i), path, f.score, detail=f"{f.rows} result(s), e.g. {', '.join(sample)}"))
        res = await choose(ctx, role=self.instance_name, decision="query", prompt=self.prompt("decision_query"),
                           options=opts, k=1, values={"question": fence(question, tag="question")},
                           llm_weight=self.settings.llm_weight, max_repairs=self.settings.max_repairs,
                           max_offered=self.settings.max_offered)
        return nonempty[int(res.chosen[0].key)]


def _bindings(path: RankedPath) -> list[Binding]:
    return [Binding(s.predicate, s.direction) for s in path.steps]
