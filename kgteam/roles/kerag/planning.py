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
from kgteam.roles.semantic.mentions import Mention, spot_mentions
from kgteam.roles.semantic.paths import PathStep, RelationPath, extend, first_hops, path_query
from kgteam.roles.semantic.scoring import PathScore, QuestionScorer, lexical_similarity
from kgteam.roles.semantic.text import tokenize
from kgteam.tools.types import LabelHit, ToolError

ANSWER_LIMIT = 1000  # end values fetched per path (answers are compared across paths)


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


async def find_topics(question: str, tools: Any, *, max_mentions: int = 3) -> list[TopicMention]:
    """Spans of the question the label index knows (exactly, or up to a typo), with their IRIs.

    The best span is a firm topic, and so is any other written as a name. An everyday word that
    happens to be some entity's label ("star", a film's title; "vellum", a material) is a loose
    topic: it may be joined as an entity, but it still names relations for the other topics' paths.
    """
    found = [m for m in await spot_mentions(question, tools) if m.exact_iris()][:max_mentions]
    return [TopicMention(text=m.text, start=m.start, end=m.end, iris=m.exact_iris(), firm=i == 0 or _name_like(m.text))
            for i, m in enumerate(found)]


def as_mention(topic: TopicMention) -> Mention:
    hits = [LabelHit(iri=iri, label=topic.text, matched=topic.text, score=1.0, exact=True) for iri in topic.iris]
    return Mention(topic.text, topic.start, topic.end, hits)


def topic_from_text(question: str, text: str, iris: list[str]) -> TopicMention | None:
    """Place a mention (proposed by a model, linked elsewhere) in the question's tokens, or None."""
    words = [t.lower for t in tokenize(text)]
    tokens = [t.lower for t in tokenize(question)]
    for i in range(len(tokens) - len(words) + 1):
        if words and tokens[i: i + len(words)] == words:
            return TopicMention(text=text, start=i, end=i + len(words), iris=iris)
    return None


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


def _with_score(path: PlannedPath, score: PathScore) -> PlannedPath:
    steps = [RelationMatch(predicate=m.step.predicate, direction=m.step.direction, label=m.step.label,
                           words=m.unit.text if m.unit else None, strength=round(m.strength, 4))
             for m in score.matches]
    return path.model_copy(update={"steps": steps, "score": round(score.score, 4)})


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


# ------------------------------------------------------------------------------ retrieval

async def _answers(tools: Any, path: RelationPath) -> list[dict[str, Any]]:
    res = await tools["run_sparql"](path_query(path), limit=ANSWER_LIMIT)
    var = f"x{len(path.steps)}"
    return [row[var].model_dump(exclude_none=True) for row in res.rows if var in row]


async def _path_triples(tools: Any, path: RelationPath, limit: int, ends_wanted: set[str] | None = None
                        ) -> tuple[list[EvidenceTriple], bool]:
    """The triples that walk ``path`` from its entity, at most ``limit``: one walk per end value
    (only to ``ends_wanted`` when given), a walk whose earlier steps are already in costing only
    its new triples, so the budget covers as many answers as it can. Also says whether walks
    were left out."""
    if limit <= 0:
        return [], True
    res = await tools["run_sparql"](path_query(path, all_vars=True), limit=min(20 * limit, 5000))
    out: list[EvidenceTriple] = []
    seen: set[tuple[str, str, str]] = set()
    ends: set[str] = set()
    left_out = bool(getattr(res, "truncated", False))
    for row in res.rows:
        walk: list[EvidenceTriple] = []
        prev = path.entity
        for i, step in enumerate(path.steps, start=1):
            term = row.get(f"x{i}")
            if term is None:
                break
            literal = term.type == "literal"
            s, o = (prev, term.value) if step.direction == "out" else (term.value, prev)
            walk.append(EvidenceTriple(subject=s, predicate=step.predicate, object=o,
                                       object_is_literal=literal and step.direction == "out",
                                       object_datatype=term.datatype if literal else None))
            prev = term.value
        if prev in ends or (ends_wanted is not None and prev not in ends_wanted):
            continue  # this end value already has its walk, or is not one the reading answers
        new = [t for t in walk if (t.subject, t.predicate, t.object) not in seen]
        if len(out) + len(new) > limit:
            left_out = True
            continue
        ends.add(prev)
        for t in new:
            seen.add((t.subject, t.predicate, t.object))
            out.append(t)
    return out, left_out


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
    # an entity the question names is not what it asks for ("which player of X is from Y" is not Y)
    named_elsewhere = {t.text: {iri for o in topics if o.text != t.text for iri in o.iris} for t in topics}
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
    triples, truncated = await _walk_readings(tools, ranked, [e[2] for e in executed], readings, limits.triple_budget)
    return Subgraph(triples=triples, source="kerag", question=question, paths=ranked, readings=readings,
                    truncated=truncated)


async def _walk_readings(tools: Any, paths: list[RankedPath], relations: list[RelationPath], readings: list[Reading],
                         budget: int) -> tuple[list[EvidenceTriple], bool]:
    """Fill the triple budget in the order of the readings, best first: each path is walked once,
    for a join only towards the answers both paths share. Sets each path's ``triple_ids``."""
    triples: list[EvidenceTriple] = []
    index: dict[tuple[str, str, str], int] = {}
    walked_paths: set[int] = set()
    truncated = False
    for reading in readings:
        ends = {str(a.get("value")) for a in reading.answers} if reading.combine == "and" else None
        for i in reading.paths:
            if i in walked_paths:
                continue
            walked_paths.add(i)
            try:
                walked, left_out = await _path_triples(tools, relations[i], budget - len(triples), ends)
            except ToolError:
                walked, left_out = [], False
            truncated = truncated or left_out
            for t in walked:
                key = (t.subject, t.predicate, t.object)
                if key not in index:
                    index[key] = len(triples)
                    triples.append(t)
                paths[i].triple_ids.append(index[key])
    return triples, truncated


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
            best, scorer = max(((from_a.score((*sa, *sb)), from_a), (from_b.score((*sb, *sa)), from_b)),
                               key=lambda t: t[0].score)
            # two paths side by side, not one longer path: only the longer one's hops are charged
            score = (best.score + layer.settings.scoring.hop_penalty * min(len(sa), len(sb))
                     + _co_named(scorer, best, [*sa, *sb]))
            out.append(Reading(paths=[i, j], combine=combine, score=round(score, 4),
                               support=round(_joint_support(best, len(sa) if best.matches[0].step == sa[0] else len(sb)), 4),
                               answers=answers))
    return out


def _co_named(scorer: QuestionScorer, score: PathScore, steps: Sequence[PathStep]) -> float:
    """Credit for words a joined reading's relations spell without needing them as namers: in "who
    *plays* at position X for country Y", "position" names "plays position" and "country" names
    "plays for country"; "plays" is in both labels, so it co-names them rather than being free to
    name a third relation on a longer path. Each such word adds its best p(label | word)."""
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


def _joint_support(score: PathScore, first_len: int) -> float:
    """How well a joined reading is named: its better-named path's weakest step. A path to the
    second entity may go unnamed ("players at X *from* Y"): which relation joins is then decided
    by the answers meeting, and rival joins with other answers still lower the confidence. So a
    join counts as named: only its rivals can make it unsure."""
    parts = (score.matches[:first_len], score.matches[first_len:])
    named = [min((m.strength for m in part if not m.shared), default=0.0) for part in parts]
    return max(max(named), CONFIDENCE_SUPPORT)


def _as_planned(p: RankedPath) -> PlannedPath:
    return PlannedPath(entity=p.entity, mention=p.mention, steps=p.steps, score=p.score)


def reading_triples(graph: Subgraph, reading: Reading) -> list[int]:
    """The ids of the triples a reading rests on: its paths' triples, for a join only those on the
    way to the answers both paths share."""
    ids: list[int] = []
    for i in reading.paths:
        ids += graph.paths[i].triple_ids
    if reading.combine != "and":
        return list(dict.fromkeys(ids))
    wanted = {a.get("value") for a in reading.answers}
    ends = [t for t in dict.fromkeys(ids) if graph.triples[t].subject in wanted or graph.triples[t].object in wanted]
    return ends or list(dict.fromkeys(ids))
