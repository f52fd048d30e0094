"""KERAG's retrieval without a model: topic entities, schema-level hops, filtering, execution, readings.

The planner, schema filter and retriever roles call these steps one message at a time, and
``kgteam diagnose`` calls the same steps, so the ceiling it reports is the playbook's own. Paths
are scored by the semantic layer's scorer (the one Triad's fallback uses); several topic entities
are joined by intersecting (or, for "either ... or", uniting) the answers of one path from each.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kgteam.protocols.evidence import EvidenceTriple, RelationMatch
from kgteam.protocols.payloads import (
    CONFIDENCE_SUPPORT,
    Combine,
    PlannedPath,
    RankedPath,
    Reading,
    Subgraph,
    TopicMention,
)
from kgteam.roles.semantic.layer import SemanticLayer
from kgteam.roles.semantic.mentions import Mention, is_exact_hit, mention_in, spot_mentions
from kgteam.roles.semantic.paths import PathStep, RelationPath, extend, first_hops, path_query
from kgteam.roles.semantic.scoring import PathScore, QuestionScorer, lexical_similarity
from kgteam.roles.semantic.text import WH_WORDS, content_units, tokenize
from kgteam.tools.types import LabelHit, ToolError

ANSWER_LIMIT = 1000  # end values fetched per path (answers are compared across paths)
MAX_READINGS = 50  # readings kept per question, best first
CITED_READINGS = 5  # readings walked even when the budget is full (their walks may reuse its triples)


@dataclass(frozen=True)
class Limits:
    """How wide and how deep the plan grows, and how much of the KG it may fetch."""

    max_entities: int = 3  # KG entities tried per mention
    top_n: int = 10  # paths kept per topic mention at each hop
    executed: int = 6  # best paths per topic mention run against the KG (per path length with several mentions)
    triple_budget: int = 300  # triples fetched as evidence, all paths together


# ------------------------------------------------------------------------------ topic entities

def _name_like(text: str) -> bool:
    """Written as a name (a capital, a digit or an underscore), not as an everyday word."""
    return any(c.isupper() or c.isdigit() or c == "_" for c in text)


async def find_topics(question: str, tools: Any, *, max_mentions: int = 3, exact_only: bool = False
                      ) -> list[TopicMention]:
    """Spans of the question the label index knows (exactly, or up to a typo), with their IRIs.

    The best span is a firm topic, and so is any other written as a name. ``exact_only`` leaves out
    names known only up to a typo (no evidence that the KG knows what the question names). An everyday word that
    happens to be some entity's label ("vellum", a material; "maker", a class) is a loose
    topic: it may be joined as an entity, but it still names relations for the other topics' paths.
    """
    found = [m for m in await spot_mentions(question, tools) if m.exact_iris()
             and (not exact_only or any(is_exact_hit(h, m.text) for h in m.hits))][:max_mentions]
    return [TopicMention(text=m.text, start=m.start, end=m.end, iris=m.exact_iris(), firm=i == 0 or _name_like(m.text))
            for i, m in enumerate(found)]


def as_mention(topic: TopicMention) -> Mention:
    hits = [LabelHit(iri=iri, label=topic.text, matched=topic.text, score=1.0, exact=True) for iri in topic.iris]
    return Mention(topic.text, topic.start, topic.end, hits)


def topic_from_text(question: str, text: str, iris: list[str]) -> TopicMention | None:
    """Place a mention (proposed by a model, linked elsewhere) in the question's tokens, or None."""
    placed = mention_in(question, text, iris)
    if placed.start == placed.end:
        return None
    return TopicMention(text=text, start=placed.start, end=placed.end, iris=iris, firm=_name_like(text))


def combine_of(question: str, topics: Sequence[TopicMention]) -> Combine:
    """"X or Y" between two mentions unites their answers; otherwise they meet ("and"). For a
    question: how its first two firm topics combine ("single" with fewer)."""
    firm = [t for t in topics if t.firm]
    if len(firm) < 2:
        return "single" if len(topics) < 2 else "and"
    return _pair_combine(question, firm[0], firm[1])


def _pair_combine(question: str, a: TopicMention, b: TopicMention) -> Combine:
    first, second = sorted((a, b), key=lambda t: t.start)
    between = [t.lower for t in tokenize(question)][first.end: second.start]
    return "or" if "or" in between else "and"


# ------------------------------------------------------------------------------ schema-level hops

def _relation_path(p: PlannedPath) -> RelationPath:
    steps = tuple(PathStep(s.predicate, s.direction, s.label) for s in p.steps)  # type: ignore[arg-type]
    return RelationPath(p.entity, steps, literal_end=p.literal_end)


def _planned(path: RelationPath, mention: str) -> PlannedPath:
    steps = [RelationMatch(predicate=s.predicate, direction=s.direction, label=s.label) for s in path.steps]
    return PlannedPath(entity=path.entity, mention=mention, steps=steps, count=path.count,
                       literal_end=path.literal_end)


async def expand(tools: Any, topics: Sequence[TopicMention], kept: Sequence[PlannedPath], hop: int,
                 limits: Limits) -> list[PlannedPath]:
    """Hop 1: the predicates in and out of each topic entity (``entity_schema``: counts and value
    types). Later hops: the predicates held by the end nodes of the kept paths one hop shorter."""
    out: dict[str, PlannedPath] = {}
    if hop == 1:
        for topic in topics:
            for iri in topic.iris[: limits.max_entities]:
                try:
                    paths = await first_hops(tools, iri)
                except ToolError:
                    continue
                for p in paths:
                    out.setdefault(_planned(p, topic.text).key, _planned(p, topic.text))
        return list(out.values())
    frontier = [p for p in kept if len(p.steps) == hop - 1 and not p.literal_end]
    grown = await asyncio.gather(*(extend(tools, _relation_path(p)) for p in frontier))
    for prefix, paths in zip(frontier, grown, strict=True):
        for p in paths:
            planned = _planned(p, prefix.mention)
            out.setdefault(planned.key, planned)
    return list(out.values())


async def score_paths(layer: SemanticLayer, question: str, topics: Sequence[TopicMention],
                      paths: Sequence[PlannedPath]) -> list[tuple[PlannedPath, PathScore]]:
    """Each path scored against the question from its own mention (one scorer per mention over
    every label in play), best first."""
    by_topic = {t.text: t for t in topics}
    out: list[tuple[PlannedPath, PathScore]] = []
    for text, group in itertools.groupby(sorted(paths, key=lambda p: p.mention), key=lambda p: p.mention):
        members = list(group)
        topic = by_topic.get(text)
        rel = [_relation_path(p) for p in members]
        # the other firm topics' words name entities, not relations
        others = [(t.start, t.end) for t in topics if t.text != text and t.firm]
        scorer = await layer.scorer(question, as_mention(topic) if topic else None,
                                    [s for r in rel for s in r.steps], exclude=others)
        out += [(p, scorer.score(r.steps, literal_end=r.literal_end)) for p, r in zip(members, rel, strict=True)]
    out.sort(key=lambda ps: (-ps[1].score, len(ps[0].steps), ps[0].key))
    return out


def words_left(question: str, topics: Sequence[TopicMention], path: PlannedPath) -> list[str]:
    """The question's content words (outside every topic, question words aside) that no step of
    ``path`` was named by."""
    used = {w for s in path.steps if s.words for w in s.words.lower().split()}
    _, units = content_units(question, None, [(t.start, t.end) for t in topics])
    return [u.text for u in units if len(u.positions) == 1 and u.text not in WH_WORDS and u.text not in used]


def _with_score(path: PlannedPath, score: PathScore) -> PlannedPath:
    steps = [RelationMatch(predicate=m.step.predicate, direction=m.step.direction, label=m.step.label,
                           words=m.unit.text if m.unit else None, strength=round(m.strength, 4))
             for m in score.matches]
    return path.model_copy(update={"steps": steps, "score": round(score.score, 4),
                                   "unexplained": round(score.unexplained, 4)})


async def filter_hop(layer: SemanticLayer, question: str, topics: Sequence[TopicMention],
                     kept: Sequence[PlannedPath], candidates: Sequence[PlannedPath], limits: Limits
                     ) -> tuple[list[PlannedPath], list[PlannedPath]]:
    """Keep the ``top_n`` candidates per mention that the question's words name best (the paths
    kept earlier are re-scored, never dropped); return (kept, dropped) candidates, best first."""
    scored = await score_paths(layer, question, topics, [*kept, *candidates])
    fresh = {c.key for c in candidates}
    per_topic: dict[str, int] = {}
    keep: list[PlannedPath] = []
    drop: list[PlannedPath] = []
    for path, score in scored:
        if path.key not in fresh:
            continue
        n = per_topic.get(path.mention, 0)
        (keep if n < limits.top_n else drop).append(_with_score(path, score))
        per_topic[path.mention] = n + 1
    return keep, drop


async def plan_paths(layer: SemanticLayer, question: str, topics: Sequence[TopicMention], *, hops: int,
                     limits: Limits, start: Sequence[TopicMention] | None = None) -> list[PlannedPath]:
    """The planner and filter's loop in one call: expand from ``start`` (default every topic) one
    hop at a time up to ``hops``, keeping each hop's ``top_n`` paths; every kept path, best first."""
    kept: list[PlannedPath] = []
    for hop in range(1, hops + 1):
        try:
            candidates = await expand(layer.tools, start if start is not None else topics, kept, hop, limits)
        except ToolError:
            break
        if not candidates:
            break
        keep, _ = await filter_hop(layer, question, topics, kept, candidates, limits)
        kept += keep
    return sorted(kept, key=lambda p: (-p.score, len(p.steps)))


# ------------------------------------------------------------------------------ retrieval

async def _answers(tools: Any, path: RelationPath) -> list[dict[str, Any]]:
    res = await tools["run_sparql"](path_query(path), limit=ANSWER_LIMIT)
    var = f"x{len(path.steps)}"
    return [row[var].model_dump(exclude_none=True) for row in res.rows if var in row]


Step = tuple[str, str, str, bool, str | None]  # subject, predicate, object, object is a literal, its datatype


@dataclass
class _Walks:
    """A path's walks from its entity (the rows of its all-variables query, fetched once), by the
    end value each reaches: a walk is the steps it takes (made evidence triples only when used)."""

    by_end: dict[str, list[list[Step]]]
    truncated: bool


async def _walks(tools: Any, path: RelationPath, cap: int) -> _Walks:
    res = await tools["run_sparql"](path_query(path, all_vars=True), limit=cap)
    by_end: dict[str, list[list[Step]]] = {}
    for row in res.rows:
        walk: list[Step] = []
        prev = path.entity
        for i, step in enumerate(path.steps, start=1):
            term = row.get(f"x{i}")
            if term is None:
                break
            literal = term.type == "literal" and step.direction == "out"
            s, o = (prev, term.value) if step.direction == "out" else (term.value, prev)
            walk.append((s, step.predicate, o, literal, term.datatype if literal else None))
            prev = term.value
        if len(walk) == len(path.steps):
            by_end.setdefault(prev, []).append(walk)
    return _Walks(by_end, bool(getattr(res, "truncated", False)))


class _Evidence:
    """The sub-graph under its triple budget: a triple is paid for once, however many walks use it."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.triples: list[EvidenceTriple] = []
        self.index: dict[tuple[str, str, str], int] = {}
        self.truncated = False

    @property
    def full(self) -> bool:
        return len(self.triples) >= self.budget

    def add(self, walk: list[Step]) -> list[int] | None:
        """The ids of the walk's triples (adding the new ones), or None when they do not fit."""
        new = [step for step in walk if step[:3] not in self.index]
        if len(self.triples) + len(new) > self.budget:
            self.truncated = True
            return None
        for s, p, o, literal, datatype in new:
            self.index[(s, p, o)] = len(self.triples)
            self.triples.append(EvidenceTriple(subject=s, predicate=p, object=o, object_is_literal=literal,
                                               object_datatype=datatype))
        return [self.index[step[:3]] for step in walk]


async def retrieve(layer: SemanticLayer, question: str, topics: Sequence[TopicMention],
                   kept: Sequence[PlannedPath], limits: Limits, combine: Combine = "single") -> Subgraph:
    """Run the best kept paths of each mention, collect their triples within the budget, and list
    the readings (one path, or one path per mention joined), best first."""
    tools = layer.tools
    scored = await score_paths(layer, question, topics, kept)
    runs: dict[tuple[str, int], int] = {}
    # one topic: its best paths; several: the best of each length per topic, since a short path
    # that names one relation is what a join with another topic's path needs
    several = len(topics) > 1
    by_text = {t.text: t for t in topics}
    # an entity the question firmly names is not what it asks for ("which maker at X is a native of
    # Y" is not Y); a loose topic is as likely a relation word, so its entities may still be answers
    named_elsewhere = {t.text: {iri for o in topics if o.text != t.text and o.firm for iri in o.iris} for t in topics}
    executed: list[tuple[PlannedPath, PathScore, RelationPath, list[dict[str, Any]]]] = []
    for path, score in scored:
        slot = (path.mention, len(path.steps) if several else 0)
        if runs.get(slot, 0) >= limits.executed:
            continue
        runs[slot] = runs.get(slot, 0) + 1
        rel = _relation_path(path)
        try:
            answers = await _answers(tools, rel)
        except ToolError:
            continue
        answers = [a for a in answers if a.get("value") not in named_elsewhere.get(path.mention, set())]
        if answers:
            executed.append((path, score, rel, answers))
    executed.sort(key=lambda e: (-e[1].score, len(e[0].steps), e[0].key))
    ranked: list[RankedPath] = []
    for path, score, rel, answers in executed:
        scored_path = _with_score(path, score)
        ranked.append(RankedPath(entity=path.entity, mention=path.mention, steps=scored_path.steps,
                                 score=scored_path.score, support=round(score.support, 4), answers=answers,
                                 sparql=path_query(rel)))
    # a single path leaves the question's other firm topics unexplained: it answers without them
    weight = layer.settings.scoring.unexplained_weight
    firm = sum(1 for t in topics if t.firm)
    readings = [Reading(paths=[i], score=round(p.score - weight * (firm - (1 if by_text[p.mention].firm else 0)), 4),
                        support=p.support, answers=p.answers)
                for i, p in enumerate(ranked)]
    if combine != "single":
        readings += await _joined(layer, question, topics, ranked)
    readings.sort(key=lambda r: (-r.score, len(r.paths), r.key))
    del readings[MAX_READINGS:]  # the rest cannot win: confidence counts only close rivals
    triples, truncated = await _walk_readings(tools, ranked, [e[2] for e in executed], readings, limits.triple_budget)
    return Subgraph(triples=triples, source="kerag", question=question, paths=ranked, readings=readings,
                    truncated=truncated)


async def _walk_readings(tools: Any, paths: list[RankedPath], relations: list[RelationPath],
                         readings: list[Reading], budget: int) -> tuple[list[EvidenceTriple], bool]:
    """Fill the triple budget in the order of the readings, best first: for each reading, one walk
    per answer along each of its paths (a join: only to the answers both paths share), a walk whose
    first steps are already in costing only its new triples. Sets each reading's and each path's
    ``triple_ids``; says whether walks were left out."""
    evidence = _Evidence(budget)
    fetched: dict[int, _Walks] = {}
    on_path: dict[int, set[int]] = {}
    cap = min(20 * budget, 5000)
    for rank, reading in enumerate(readings):
        wanted = list(dict.fromkeys(str(a.get("value")) for a in reading.answers))
        ids: list[int] = []
        for i in reading.paths:
            if i not in fetched and evidence.full and rank >= CITED_READINGS:
                continue  # a full budget: only readings a summary may show fetch their walks
            if i not in fetched:
                try:
                    fetched[i] = await _walks(tools, relations[i], cap)
                except ToolError:
                    fetched[i] = _Walks({}, False)
                evidence.truncated = evidence.truncated or fetched[i].truncated
            mine = on_path.setdefault(i, set(paths[i].triple_ids))
            for end in wanted:
                # one walk per answer: the first of its walks that fits the budget
                got = next((g for walk in fetched[i].by_end.get(end, ()) if (g := evidence.add(walk)) is not None),
                           None)
                if got is None:
                    continue
                ids += got
                for t in got:
                    if t not in mine:
                        mine.add(t)
                        paths[i].triple_ids.append(t)
        reading.triple_ids = list(dict.fromkeys(ids))
    return evidence.triples, evidence.truncated


async def _joined(layer: SemanticLayer, question: str, topics: Sequence[TopicMention], paths: list[RankedPath],
                  ) -> list[Reading]:
    """Pairs of paths from two different mentions whose answers meet ("and") or are united ("or"),
    scored as one reading: both mentions left out of the words, both paths' relations named."""
    out: list[Reading] = []
    for a, b in itertools.combinations(topics, 2):
        if a.start < b.end and b.start < a.end:
            continue  # overlapping spans are two readings of one mention, not two entities
        left = [i for i, p in enumerate(paths) if p.mention == a.text]
        right = [i for i, p in enumerate(paths) if p.mention == b.text]
        if not left or not right:
            continue
        combine = _pair_combine(question, a, b)
        steps = [s for i in (*left, *right) for s in _relation_path(_as_planned(paths[i])).steps]
        from_a = await layer.scorer(question, as_mention(a), steps, exclude=[(b.start, b.end)])
        from_b = await layer.scorer(question, as_mention(b), steps, exclude=[(a.start, a.end)])
        for i, j in itertools.product(left, right):
            pa, pb = paths[i], paths[j]
            values_b = {v.get("value") for v in pb.answers}
            if combine == "and":
                answers = [v for v in pa.answers if v.get("value") in values_b]
            else:
                seen = {v.get("value") for v in pa.answers}
                answers = pa.answers + [v for v in pb.answers if v.get("value") not in seen]
            if not answers:
                continue
            sa, sb = _relation_path(_as_planned(pa)).steps, _relation_path(_as_planned(pb)).steps
            if [s.key for s in sa] == [s.key for s in sb]:
                # the same relation from both entities ("issued by X or by Y"): named once, walked once
                best, scorer = max(((from_a.score(sa), from_a), (from_b.score(sb), from_b)), key=lambda t: t[0].score)
                score = best.score + _co_named(scorer, best, sa)
            else:
                best, scorer = max(((from_a.score((*sa, *sb)), from_a), (from_b.score((*sb, *sa)), from_b)),
                                   key=lambda t: t[0].score)
                # two paths side by side, not one longer path: only the longer one's hops are charged
                score = (best.score + layer.settings.scoring.hop_penalty * min(len(sa), len(sb))
                         + _co_named(scorer, best, [*sa, *sb]))
            # a join counts as named: which relation links an entity the words leave unnamed ("makers
            # at X *from* Y") is decided by the answers meeting, and rival joins still lower the confidence
            out.append(Reading(paths=[i, j], combine=combine, score=round(score, 4), support=CONFIDENCE_SUPPORT,
                               answers=answers))
    return out


def _co_named(scorer: QuestionScorer, score: PathScore, steps: Sequence[PathStep]) -> float:
    """Credit for words a joined reading's relations spell without needing them as namers. In "who
    *works* at the bench X with the partner Y", joined over "works at bench" and "works with
    partner", "bench" and "partner" name the two relations and "works" is in both labels: it
    co-names them, rather than being free to name a third relation on a longer path. Each such
    word adds its best p(label | word)."""
    namers = {p for m in score.matches if m.unit is not None for p in m.unit.positions}
    labels = sorted({s.label for s in steps})
    credit = 0.0
    for j, unit in enumerate(scorer.units):
        if len(unit.positions) != 1 or unit.positions[0] in namers:
            continue
        spelled = [label for label in labels if lexical_similarity(unit.text, label) >= 1.0]
        if spelled:
            credit += scorer.unit_weight(j) * max(scorer.prob[j].get(label, 0.0) for label in spelled)
    return credit


def _as_planned(p: RankedPath) -> PlannedPath:
    return PlannedPath(entity=p.entity, mention=p.mention, steps=p.steps, score=p.score)


def reading_triples(graph: Subgraph, reading: Reading) -> list[int]:
    """The ids of the triples a reading rests on: the walks to its answers (its paths' triples when
    it was not walked)."""
    if reading.triple_ids:
        return reading.triple_ids
    return list(dict.fromkeys(t for i in reading.paths for t in graph.paths[i].triple_ids))
