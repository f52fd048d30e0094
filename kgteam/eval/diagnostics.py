"""Retrieval diagnostics without any LLM: where does a pipeline's answer ceiling lie on this KG?

Per question: (a) rank of the gold topic entity in ``search_entities``; (b) whether the gold
answers lie in the h-hop neighbourhood of the gold entity (h = 1..max_hops) and how many
triples that holds; (c) the same for the sub-graph the KERAG playbook's own planner, schema filter and retriever
fetch (``kgteam.roles.semantic.path_planning`` and ``kgteam.roles.kerag.retrieval``), within its
triple budget;
(d) whether the gold SPARQL / gold path executes to the gold answers on this KG.

All queries go through ``KGTools.run_sparql`` with IRIs built by ``sparql_iri``.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from kgteam.eval.datasets import DatasetItem, GoldPath
from kgteam.eval.metrics import normalize
from kgteam.protocols.payloads import PlannedPath, TopicMention
from kgteam.roles.kerag.retrieval import combine_of, retrieve
from kgteam.roles.semantic.layer import SemanticLayer
from kgteam.roles.semantic.path_planning import Limits, expand, filter_hop
from kgteam.roles.semantic.similarity import embedder_similarity
from kgteam.roles.semantic.topics import topic_from_text
from kgteam.tools.naming import DEFAULT_NAMING

if TYPE_CHECKING:
    from kgteam.tools.kg_tools import KGTools

LABEL_PREDICATES = DEFAULT_NAMING.all_predicates  # naming triples are not paths
Direction = Literal["out", "in"]


# ------------------------------------------------------------------------------------ topics

def gold_topics(item: DatasetItem) -> list[TopicMention]:
    """The item's gold topic entities, placed in the question where their label occurs."""
    out: list[TopicMention] = []
    for t in item.topic_entities:
        if not t.iri:
            continue
        placed = None
        for text in dict.fromkeys([t.label, t.label.replace("_", " ")]):
            placed = topic_from_text(item.question.replace("[", " ").replace("]", " "), text, [t.iri])
            placed = placed.model_copy(update={"firm": True}) if placed else None  # a gold topic is a topic
            if placed:
                break
        out.append(placed or TopicMention(text=t.label, start=10_000 + len(out), end=10_001 + len(out), iris=[t.iri]))
    return out


# ------------------------------------------------------------------------------------ results

class HopStat(BaseModel):
    hops: int
    triples: int
    answer_recall: float  # share of gold answers among the neighbourhood's nodes
    all_answers: bool
    truncated: bool = False  # the triple cap stopped the expansion: counts are lower bounds
    kept_predicates: list[str] = Field(default_factory=list)  # filtered only: the paths kept at this hop
    # ("p / ^q": a step followed backwards is marked "^")


class QueryCheck(BaseModel):
    kind: Literal["sparql", "path"]
    executed: bool
    rows: int = 0
    recall: float = 0.0
    exact: bool = False
    error: str | None = None


class ItemDiagnostics(BaseModel):
    id: str
    tags: dict[str, Any] = Field(default_factory=dict)
    gold_hops: int | None = None
    linking_rank: int | None = None  # 1-based rank of the gold topic IRI; None = not in top k
    linking_k: int = 0
    neighbourhood: list[HopStat] = Field(default_factory=list)
    filtered: list[HopStat] = Field(default_factory=list)
    gold_query: QueryCheck | None = None
    error: str | None = None


@dataclass
class DiagnosticsConfig:
    max_hops: int = 3
    link_k: int = 10
    top_n: int = 10  # relation paths kept per topic and hop (the KERAG playbook's schema filter default)
    executed: int = 6  # kept paths run per topic (the KERAG retriever's default)
    triple_budget: int = 300  # triples the filtered sub-graph may hold
    max_triples: int = 5_000  # unfiltered neighbourhood cap (lower bounds beyond it)
    unfiltered: bool = True  # also measure the unfiltered neighbourhood (the costly part)
    chunk: int = 200  # IRIs per VALUES block
    timeout_s: float = 30.0


# --------------------------------------------------------------------------------- traversal

def _iri(value: str) -> str:
    from kgteam.tools.sparql_guard import sparql_iri

    return sparql_iri(value)


_NOT_LABEL = "FILTER(?p NOT IN ({}))".format(", ".join(f"<{p}>" for p in LABEL_PREDICATES))


@dataclass(frozen=True)
class _Triple:
    s: str
    p: str
    o: str  # IRI, or "\x00lit:" + normalised literal value


def _node_key(term: Any) -> str | None:
    if term is None:
        return None
    if term.type == "uri":
        return term.value
    if term.type == "literal":
        return "\x00lit:" + normalize(term.value)
    return None


def _chunks(values: Sequence[str], n: int) -> list[Sequence[str]]:
    return [values[i:i + n] for i in range(0, len(values), n)]


async def _edges(tools: KGTools, nodes: Sequence[str], cfg: DiagnosticsConfig,
                 keep: set[tuple[str, Direction]] | None, limit: int) -> tuple[set[_Triple], bool]:
    """Triples touching ``nodes`` (both directions), optionally only predicates in ``keep``."""
    out: set[_Triple] = set()
    iris = [n for n in nodes if not n.startswith("\x00")]
    for direction in ("out", "in"):
        preds = None if keep is None else [p for p, d in keep if d == direction]
        if preds is not None and not preds:
            continue
        pfilter = _NOT_LABEL if preds is None else "VALUES ?p { " + " ".join(_iri(p) for p in preds) + " }"
        for chunk in _chunks(iris, cfg.chunk):
            values = " ".join(_iri(n) for n in chunk)
            var = "?s" if direction == "out" else "?o"
            query = f"SELECT ?s ?p ?o WHERE {{ VALUES {var} {{ {values} }} {pfilter} ?s ?p ?o . }}"
            res = await tools.run_sparql(query, limit=limit - len(out) + 1, timeout_s=cfg.timeout_s)
            for row in res.rows:
                s, p, o = _node_key(row.get("s")), row["p"].value, _node_key(row.get("o"))
                if s is None or o is None:
                    continue
                out.add(_Triple(s, p, o))
            if len(out) > limit or res.truncated:
                return out, True
    return out, False


def _gold_keys(item: DatasetItem) -> list[set[str]]:
    """Each gold answer as the node keys that would count as finding it (IRI or literal value)."""
    keys = []
    for g in item.answers:
        k = set()
        if g.iri:
            k.add(g.iri)
        if g.label:
            k.add("\x00lit:" + normalize(g.label))
        keys.append(k)
    return keys


def _recall(nodes: set[str], gold: list[set[str]]) -> tuple[float, bool]:
    if not gold:
        return 0.0, False
    hits = [bool(k & nodes) for k in gold]
    return sum(hits) / len(hits), all(hits)


async def neighbourhood(tools: KGTools, item: DatasetItem, cfg: DiagnosticsConfig) -> list[HopStat]:
    starts = [t.iri for t in item.topic_entities if t.iri]
    nodes, frontier, triples = set(starts), list(starts), set()
    gold = _gold_keys(item)
    stats: list[HopStat] = []
    truncated = False
    for h in range(1, cfg.max_hops + 1):
        if not truncated and frontier:
            new, truncated = await _edges(tools, frontier, cfg, None, cfg.max_triples - len(triples))
            triples |= new
            reached = {t.s for t in new} | {t.o for t in new}
            frontier = sorted(reached - nodes)
            nodes |= reached
        recall, all_in = _recall(nodes, gold)
        stats.append(HopStat(hops=h, triples=len(triples), answer_recall=recall, all_answers=all_in, truncated=truncated))
    return stats


async def filtered_neighbourhood(layer: SemanticLayer, item: DatasetItem, cfg: DiagnosticsConfig) -> list[HopStat]:
    """KERAG's own plan, hop by hop (the playbook's planner, filter and retriever code): at each hop
    the relations around the kept paths are listed at the schema level, the question's words keep
    the best ``top_n`` per topic, and the kept paths are run within the triple budget. The recall
    is that of the retrieved sub-graph, so this is the ceiling the playbook itself works under."""
    topics = gold_topics(item)
    question = item.question.replace("[", " ").replace("]", " ")
    limits = Limits(top_n=cfg.top_n, executed=cfg.executed, triple_budget=cfg.triple_budget)
    gold = _gold_keys(item)
    kept: list[PlannedPath] = []
    stats: list[HopStat] = []
    for h in range(1, cfg.max_hops + 1):
        candidates = await expand(layer.tools, topics, kept, h, limits)
        keep, _ = await filter_hop(layer, question, topics, kept, candidates, limits)
        kept += keep
        graph = await retrieve(layer, question, topics, kept, limits, combine_of(question, topics))
        nodes = {t.subject for t in graph.triples} | {
            "\x00lit:" + normalize(t.object) if t.object_is_literal else t.object for t in graph.triples}
        recall, all_in = _recall(nodes, gold)
        stats.append(HopStat(hops=h, triples=len(graph.triples), answer_recall=recall, all_answers=all_in,
                             truncated=graph.truncated, kept_predicates=[p.explain() for p in keep]))
    return stats


def path_query(paths: Sequence[GoldPath]) -> str:
    """SPARQL for one or more gold paths that end in the same answer variable (conjunctions)."""
    patterns = []
    for i, path in enumerate(paths):
        if not path.start.iri or len(path.relation_iris) != len(path.relations):
            raise ValueError("gold path without IRIs")
        prev = f"?s{i}"
        patterns.append(f"VALUES ?s{i} {{ {_iri(path.start.iri)} }}")
        for j, (rel, direction) in enumerate(zip(path.relation_iris, path.directions or ["out"] * len(path.relations),
                                                 strict=True)):
            nxt = "?answer" if j == len(path.relations) - 1 else f"?v{i}_{j}"
            if direction == "out":
                patterns.append(f"{prev} {_iri(rel)} {nxt} .")
            else:
                patterns.append(f"{nxt} {_iri(rel)} {prev} .")
            prev = nxt
    return "SELECT DISTINCT ?answer WHERE { " + " ".join(patterns) + " }"


async def check_gold_query(tools: KGTools, item: DatasetItem, cfg: DiagnosticsConfig) -> QueryCheck | None:
    if item.gold_query:
        kind: Literal["sparql", "path"] = "sparql"
        query = item.gold_query
    elif item.gold_paths:
        kind, query = "path", path_query(item.gold_paths)
    else:
        return None
    try:
        res = await tools.run_sparql(query, limit=100_000, timeout_s=cfg.timeout_s)
    except Exception as exc:  # noqa: BLE001 - a failing gold query is a finding, not a crash
        return QueryCheck(kind=kind, executed=False, error=f"{type(exc).__name__}: {exc}"[:300])
    if res.boolean is not None:
        ok = bool(item.answers) and normalize(item.answers[0].label or "") == str(res.boolean).lower()
        return QueryCheck(kind=kind, executed=True, rows=1, recall=float(ok), exact=ok)
    var = res.variables[0] if res.variables else None
    found = {k for row in res.rows if var and (k := _node_key(row.get(var)))}
    gold = _gold_keys(item)
    recall, _ = _recall(found, gold)
    exact = bool(gold) and recall == 1.0 and all(any(f in k for k in gold) for f in found)
    return QueryCheck(kind=kind, executed=True, rows=len(res.rows), recall=recall, exact=exact)


async def linking_rank(tools: KGTools, item: DatasetItem, cfg: DiagnosticsConfig) -> int | None:
    topic = item.topic_entity
    if topic is None or not topic.iri:
        return None
    hits = await tools.search_entities(topic.label, k=cfg.link_k)
    for rank, hit in enumerate(hits, start=1):
        if hit.iri == topic.iri:
            return rank
    return None


async def diagnose_item(tools: KGTools, item: DatasetItem, cfg: DiagnosticsConfig,
                        layer: SemanticLayer | None = None) -> ItemDiagnostics:
    out = ItemDiagnostics(id=item.id, tags=dict(item.tags), gold_hops=item.hops, linking_k=cfg.link_k)
    try:
        out.linking_rank = await linking_rank(tools, item, cfg)
        if any(t.iri for t in item.topic_entities):
            if cfg.unfiltered:
                out.neighbourhood = await neighbourhood(tools, item, cfg)
            out.filtered = await filtered_neighbourhood(layer or _layer(tools), item, cfg)
        out.gold_query = await check_gold_query(tools, item, cfg)
    except Exception as exc:  # noqa: BLE001 - record and go on
        out.error = f"{type(exc).__name__}: {exc}"[:500]
    return out


def _layer(tools: KGTools) -> SemanticLayer:
    """The semantic layer the KERAG roles use, over these tools and the KG's embedder."""
    return SemanticLayer(tools.toolbox(), embedder_similarity(getattr(tools, "embedder", None)))


async def diagnose(tools: KGTools, items: Sequence[DatasetItem], cfg: DiagnosticsConfig | None = None, *,
                   concurrency: int = 2, on_item: Callable[[ItemDiagnostics], None] | None = None) -> list[ItemDiagnostics]:
    cfg = cfg or DiagnosticsConfig()
    layer = _layer(tools)
    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(it: DatasetItem) -> ItemDiagnostics:
        async with sem:
            res = await diagnose_item(tools, it, cfg, layer)
        if on_item:
            on_item(res)
        return res

    return list(await asyncio.gather(*(one(it) for it in items)))


# ------------------------------------------------------------------------------------ summary

def _at(stats: list[HopStat], h: int | None) -> HopStat | None:
    if h is None:
        return None
    return next((s for s in stats if s.hops == h), None)


def summarize_diagnostics(results: Sequence[ItemDiagnostics], budget: int = 300) -> dict[str, Any]:
    """Aggregates, with "right hop" = the item's gold hop count (capped at max_hops)."""
    res = [r for r in results if r.error is None]
    out: dict[str, Any] = {"n": len(results), "errors": len(results) - len(res)}
    ranked = [r for r in res if r.linking_k]
    with_topic = [r for r in ranked if r.neighbourhood or r.linking_rank is not None]
    if with_topic:
        out["linking_hit@1"] = statistics.fmean(r.linking_rank == 1 for r in with_topic)
        out["linking_hit@k"] = statistics.fmean(r.linking_rank is not None for r in with_topic)
        out["linking_mrr"] = statistics.fmean(1 / r.linking_rank if r.linking_rank else 0.0 for r in with_topic)
    max_h = max((max(len(r.neighbourhood), len(r.filtered)) for r in res), default=0)
    for name in ("neighbourhood", "filtered"):
        per_h = {}
        for h in range(1, max_h + 1):
            stats = [s for r in res if (s := _at(getattr(r, name), h))]
            if stats:
                per_h[str(h)] = {
                    "answer_recall": statistics.fmean(s.answer_recall for s in stats),
                    "all_answers": statistics.fmean(s.all_answers for s in stats),
                    "triples_mean": statistics.fmean(s.triples for s in stats),
                    "triples_median": statistics.median(s.triples for s in stats),
                    "triples_max": max(s.triples for s in stats),
                    "truncated": statistics.fmean(s.truncated for s in stats),
                }
        out[name] = per_h
        right = [s for r in res if (s := _at(getattr(r, name), min(r.gold_hops or 0, max_h) or None))]
        if right:
            out[f"{name}_right_hop"] = {
                "answer_recall": statistics.fmean(s.answer_recall for s in right),
                "all_answers": statistics.fmean(s.all_answers for s in right),
                "triples_mean": statistics.fmean(s.triples for s in right),
                "triples_max": max(s.triples for s in right),
                f"within_{budget}": statistics.fmean(s.triples <= budget for s in right),
            }
    checks = [r.gold_query for r in res if r.gold_query is not None]
    if checks:
        out["gold_query"] = {
            "executed": statistics.fmean(c.executed for c in checks),
            "recall": statistics.fmean(c.recall for c in checks),
            "exact": statistics.fmean(c.exact for c in checks),
        }
    return out
