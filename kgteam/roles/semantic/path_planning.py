"""Relation paths planned at the schema level, one hop at a time: expand, score, keep the best.

This is the hop loop every playbook shares: KERAG's planner and schema filter run it one step per
message, R3's rules and the adaptive router's signals run it whole (``plan_paths``), and
``kgteam diagnose`` calls the same steps. Paths are scored by the semantic layer's scorer (the one
Triad's fallback uses). Running the kept paths against the KG is each playbook's own business.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kgteam.protocols.evidence import RelationMatch
from kgteam.protocols.payloads import PlannedPath, TopicMention
from kgteam.roles.semantic.layer import SemanticLayer
from kgteam.roles.semantic.paths import PathStep, RelationPath, extend, first_hops
from kgteam.roles.semantic.scoring import PathScore
from kgteam.roles.semantic.text import WH_WORDS, content_units
from kgteam.roles.semantic.topics import as_mention
from kgteam.tools.types import ToolError


@dataclass(frozen=True)
class Limits:
    """How wide and how deep the plan grows, and how much of the KG it may fetch (``executed`` and
    ``triple_budget`` bound whoever runs the kept paths: KERAG's retriever)."""

    max_entities: int = 3  # KG entities tried per mention
    top_n: int = 10  # paths kept per topic mention at each hop
    executed: int = 6  # best paths per topic mention run against the KG (per path length with several mentions)
    triple_budget: int = 300  # triples fetched as evidence, all paths together


def relation_path(p: PlannedPath) -> RelationPath:
    """The planned path (a payload) as the semantic layer's path, to score, extend or query."""
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
    grown = await asyncio.gather(*(extend(tools, relation_path(p)) for p in frontier))
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
        rel = [relation_path(p) for p in members]
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


def with_score(path: PlannedPath, score: PathScore) -> PlannedPath:
    """The path with its score, and each step with the question words that named it."""
    steps = [RelationMatch(predicate=m.step.predicate, direction=m.step.direction, label=m.step.label,
                           words=m.unit.text if m.unit else None, strength=round(m.strength, 4),
                           learned_from=score.learned_from)
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
        (keep if n < limits.top_n else drop).append(with_score(path, score))
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

