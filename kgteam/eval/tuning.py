"""Learn a KG's relation lexicon from example question/answer pairs (``kgteam tune``).

For each example the layer ranks its relation paths as it would at run time; the best path whose
answers hold a gold answer is the reading the question meant. When exactly one step of that
reading is named by no word well enough, the words the reading left free name it ("heir" for ``children``,
"other half" for ``spouse``). A phrase becomes a lexicon entry when it named the same predicate
in at least ``min_count`` examples and at least ``min_precision`` of the times it named any predicate
or stood idle (a word that also names other relations, such as "place" in "place of birth", or
that is usually left over, such as "bridge" in "which bridge did X build", is not learned). The result is data in the KG folder (``lexicon.json``), not code; the KG is not changed.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from kgteam.eval.datasets import DatasetItem
from kgteam.eval.tune_cache import TuneMemo
from kgteam.roles.semantic.layer import SemanticLayer
from kgteam.roles.semantic.paths import RelationPath, walked_back
from kgteam.roles.semantic.scoring import PathScore
from kgteam.roles.semantic.text import WH_WORDS, content_units
from kgteam.tools.example_bank import BANK_CANDIDATES
from kgteam.tools.lexicon import Lexicon
from kgteam.tools.types import ToolError


class LearnedPhrase(BaseModel):
    phrase: str
    predicate: str
    label: str
    count: int
    precision: float


class TuneReport(BaseModel):
    examples: int = 0
    linked: int = 0  # a mention of the question was found in the KG
    reached: int = 0  # some ranked path reaches a gold answer
    best_was_right: int = 0  # ... and it was the layer's best path already
    failed: int = 0  # a query of the example failed
    learned: list[LearnedPhrase] = Field(default_factory=list)


@dataclass
class Evidence:
    """What one example says about naming relations: its gold reading (``rank``: its place among the
    layer's readings; None when none reaches the answers), the words that reading left free, the
    words that named its steps, and its steps no word named. Plain data, so examples read anywhere
    (concurrently, or in a second process) are counted in their order by :func:`learned_lexicon`."""

    linked: bool = False  # a mention of the question was found in the KG
    failed: bool = False  # a query of the example failed
    rank: int | None = None
    free: list[str] = field(default_factory=list)  # the question's words the reading left free, in order
    strong: list[tuple[str, str]] = field(default_factory=list)  # (words, predicate) named well
    weak: list[tuple[str, str]] = field(default_factory=list)  # (predicate, label): steps no word named well
    paired: list[tuple[str, str]] = field(default_factory=list)  # several weak steps: (word, predicate)


async def lexicon_evidence(layer: SemanticLayer, items: Sequence[DatasetItem], *, weak: float = 0.5,
                           candidates: int = BANK_CANDIDATES, progress: Callable[[int, int], Any] | None = None,
                           concurrency: int = 4, memo: TuneMemo | None = None) -> list[Evidence]:
    """Each example's :class:`Evidence`, in the items' order, the examples read ``concurrency`` at a
    time (their queries wait on the store, not on Python); ``memo`` keeps what they ask alike
    (answers, labels, matches, mentions, readings) for the whole tune run."""
    memo = memo if memo is not None else TuneMemo()
    gate = asyncio.Semaphore(max(1, concurrency))
    done = 0

    async def one(item: DatasetItem) -> Evidence:
        nonlocal done
        async with gate:
            out = Evidence()
            try:
                mentions = await memo.mentions(layer.tools, item.question)
                if not mentions or not item.answers:
                    return out
                out.linked = True
                found = await _gold_reading(layer, item, mentions, candidates, memo)
            except ToolError:  # this example's queries failed (a timeout): it teaches nothing
                out.failed = True
                return out
            finally:
                done += 1
                if progress:
                    progress(done, len(items))
            if found is not None:
                _weigh(out, item, *found, weak=weak)
            return out

    return list(await asyncio.gather(*(one(item) for item in items)))


def _weigh(out: Evidence, item: DatasetItem, path: RelationPath, score: PathScore, mention: Any, rank: int, *,
           weak: float) -> None:
    """Fill ``out`` from the example's gold reading."""
    out.rank = rank
    used = {p for m in score.matches if m.unit is not None and m.strength >= weak for p in m.unit.positions}
    _, units = content_units(item.question, mention.span)
    out.free = [u.text for u in units if not set(u.positions) & used and u.text not in WH_WORDS]
    out.strong = [(m.unit.text, m.step.predicate) for m in score.matches if m.unit is not None and m.strength >= weak]
    # a relation said again in the same direction ("X's heir's child": children, children) is a
    # step of its own that needs its own word; only a walk back may go unnamed
    back = set(walked_back([(m.step.predicate, m.step.direction) for m in score.matches]))
    weak_steps = [m.step for n, m in enumerate(score.matches, start=1)
                  if (not m.shared or n not in back) and (m.unit is None or m.strength < weak)]
    out.weak = [(step.predicate, step.label) for step in weak_steps]
    # several unnamed steps: as many free words as steps, in walking order, pair up one to one
    words = sorted((u for u in units if len(u.positions) == 1 and u.text in out.free), key=lambda u: u.order)
    if len(weak_steps) > 1 and len(words) == len(weak_steps):
        out.paired = [(u.text, step.predicate) for u, step in zip(words, weak_steps, strict=True)]


def learned_lexicon(evidence: Sequence[Evidence], *, min_count: int = 3,
                    min_precision: float = 0.75) -> tuple[Lexicon, TuneReport]:
    """The phrases the examples' evidence (in the examples' order) says name predicates (see the
    module docstring), and what was seen."""
    report = TuneReport(examples=len(evidence))
    named: Counter[tuple[str, str]] = Counter()
    elsewhere: Counter[tuple[str, str]] = Counter()  # phrase named another predicate well
    idle: Counter[str] = Counter()  # phrase was left over by a reading that needed no more words
    labels: dict[str, str] = {}
    for ev in evidence:
        report.linked += ev.linked
        report.failed += ev.failed
        if ev.rank is None:
            continue
        report.reached += 1
        report.best_was_right += ev.rank == 0
        for pair in ev.strong:
            elsewhere[pair] += 1
        if not ev.weak:  # every step named: the free words named nothing here
            idle.update(set(ev.free))
        for predicate, label in ev.weak:
            labels[predicate] = label
        if len(ev.weak) == 1:
            for phrase in set(ev.free):
                named[(phrase, ev.weak[0][0])] += 1
            continue
        for pair in ev.paired:
            named[pair] += 1
    relations: dict[str, list[str]] = {}
    taken: set[str] = set()
    for (phrase, predicate), count in named.most_common():
        against = sum(c for (ph, pr), c in [*named.items(), *elsewhere.items()] if ph == phrase and pr != predicate)
        precision = count / (count + against + idle[phrase])
        if phrase not in taken and count >= min_count and precision >= min_precision:
            taken.add(phrase)  # one predicate per phrase: the one it named most often
            relations.setdefault(predicate, []).append(phrase)
            report.learned.append(LearnedPhrase(phrase=phrase, predicate=predicate, label=labels[predicate],
                                                count=count, precision=round(precision, 3)))
    stats = {"examples": report.examples, "reached": report.reached, "best_was_right": report.best_was_right}
    return Lexicon(relations=relations, stats=stats), report


async def derive_lexicon(layer: SemanticLayer, items: Sequence[DatasetItem], *, min_count: int = 3,
                         min_precision: float = 0.75, weak: float = 0.5, candidates: int = BANK_CANDIDATES,
                         progress: Callable[[int, int], Any] | None = None, concurrency: int = 4,
                         memo: TuneMemo | None = None) -> tuple[Lexicon, TuneReport]:
    """The phrases that name predicates in ``items`` (see the module docstring) and what was seen:
    :func:`lexicon_evidence`, then :func:`learned_lexicon`."""
    evidence = await lexicon_evidence(layer, items, weak=weak, candidates=candidates, progress=progress,
                                      concurrency=concurrency, memo=memo)
    return learned_lexicon(evidence, min_count=min_count, min_precision=min_precision)




async def _gold_reading(layer: SemanticLayer, item: DatasetItem, mentions: list[Any], candidates: int,
                        memo: TuneMemo | None = None) -> tuple[RelationPath, PathScore, Any, int] | None:
    """The best-ranked path whose answers hold a gold answer, with its rank (None: no path does)."""
    memo = memo if memo is not None else TuneMemo()
    scored: list[tuple[RelationPath, PathScore, Any]] = []
    for mention in mentions[: layer.settings.max_mentions]:
        scored += [(p, s, mention) for p, s in (await memo.readings(layer, item.question, mention, keep=candidates))]
    scored.sort(key=lambda t: (-t[1].score, len(t[0].steps), t[0].key))
    for rank, (path, score, mention) in enumerate(scored[:candidates]):
        terms = await memo.terms(layer.tools, path)
        if terms is None:
            continue
        iris = [t.value for t in terms if t.type == "uri"]
        names = await memo.names(layer.tools, iris) if iris else {}
        for t in terms:
            if memo.matches_any(names.get(t.value, t.value), t.value if t.type == "uri" else None, item.answers):
                return path, score, mention, rank
    return None
