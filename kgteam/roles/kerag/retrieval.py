"""KERAG's retrieval without a model: run the kept paths, join them into readings, walk the evidence.

The retriever role calls ``retrieve`` on the paths the planner and schema filter kept (the shared
hop loop in ``kgteam.roles.semantic.path_planning``), and ``kgteam diagnose`` calls the same
steps, so the ceiling it reports is the playbook's own. Several topic entities are joined by
intersecting (or, for "either ... or", uniting) the answers of one path from each, within one
triple budget for all the readings.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kgteam.protocols.evidence import EvidenceTriple
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
from kgteam.roles.semantic.path_planning import Limits, relation_path, score_paths, with_score
from kgteam.roles.semantic.paths import PLAIN, ChainConvention, PathStep, RelationPath, path_query
from kgteam.roles.semantic.reader import convention_of
from kgteam.roles.semantic.scoring import PathScore, QuestionScorer, lexical_similarity
from kgteam.roles.semantic.text import tokenize
from kgteam.roles.semantic.topics import as_mention
from kgteam.tools.types import ToolError

ANSWER_LIMIT = 1000  # end values fetched per path (answers are compared across paths)
MAX_READINGS = 50  # readings kept per question, best first
CITED_READINGS = 5  # readings walked even when the budget is full (their walks may reuse its triples)


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


# ------------------------------------------------------------------------------ retrieval

async def _answers(tools: Any, path: RelationPath, convention: ChainConvention) -> list[dict[str, Any]]:
    res = await tools["run_sparql"](path_query(path, convention=convention), limit=ANSWER_LIMIT)
    var = f"x{len(path.steps)}"
    return [row[var].model_dump(exclude_none=True) for row in res.rows if var in row]


Step = tuple[str, str, str, bool, str | None]  # subject, predicate, object, object is a literal, its datatype


@dataclass
class _Walks:
    """A path's walks from its entity (the rows of its all-variables query, fetched once), by the
    end value each reaches: a walk is the steps it takes (made evidence triples only when used)."""

    by_end: dict[str, list[list[Step]]]
    truncated: bool


async def _walks(tools: Any, path: RelationPath, cap: int, convention: ChainConvention) -> _Walks:
    res = await tools["run_sparql"](path_query(path, all_vars=True, convention=convention), limit=cap)
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
    convention = convention_of(layer.reader)
    for path, score in scored:
        slot = (path.mention, len(path.steps) if several else 0)
        if runs.get(slot, 0) >= limits.executed:
            continue
        runs[slot] = runs.get(slot, 0) + 1
        rel = relation_path(path)
        try:
            answers = await _answers(tools, rel, convention)
        except ToolError:
            continue
        answers = [a for a in answers if a.get("value") not in named_elsewhere.get(path.mention, set())]
        if answers:
            executed.append((path, score, rel, answers))
    executed.sort(key=lambda e: (-e[1].score, len(e[0].steps), e[0].key))
    ranked: list[RankedPath] = []
    calibration = layer.reader.calibration if layer.reader is not None else None  # the KG's own map
    map_name = layer.reader.map_name if layer.reader is not None else None
    for path, score, rel, answers in executed:
        scored_path = with_score(path, score)
        ranked.append(RankedPath(entity=path.entity, mention=path.mention, steps=scored_path.steps,
                                 score=scored_path.score, support=round(score.support, 4), answers=answers,
                                 sparql=path_query(rel, convention=convention), learned_from=score.learned_from,
                                 calibration=calibration, calibration_name=map_name))
    # a single path leaves the question's other firm topics unexplained: it answers without them
    weight = layer.settings.scoring.unexplained_weight
    firm = sum(1 for t in topics if t.firm)
    readings = [Reading(paths=[i], score=round(p.score - weight * (firm - (1 if by_text[p.mention].firm else 0)), 4),
                        support=p.support, answers=p.answers, calibration=calibration,
                        calibration_name=map_name)
                for i, p in enumerate(ranked)]
    if combine != "single":
        readings += await _joined(layer, question, topics, ranked)
    readings.sort(key=lambda r: (-r.score, len(r.paths), r.key))
    del readings[MAX_READINGS:]  # the rest cannot win: confidence counts only close rivals
    triples, truncated = await _walk_readings(tools, ranked, [e[2] for e in executed], readings, limits.triple_budget,
                                              convention)
    return Subgraph(triples=triples, source="kerag", question=question, paths=ranked, readings=readings,
                    truncated=truncated)


async def _walk_readings(tools: Any, paths: list[RankedPath], relations: list[RelationPath],
                         readings: list[Reading], budget: int,
                         convention: ChainConvention = PLAIN) -> tuple[list[EvidenceTriple], bool]:
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
                    fetched[i] = await _walks(tools, relations[i], cap, convention)
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
        steps = [s for i in (*left, *right) for s in relation_path(_as_planned(paths[i])).steps]
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
            sa, sb = relation_path(_as_planned(pa)).steps, relation_path(_as_planned(pb)).steps
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
                               answers=answers))  # the KG's map was fitted on single paths, not joins
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
