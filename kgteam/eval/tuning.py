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
import contextlib
import copy
import os
import re
import subprocess
import sys
import tempfile
import types
import typing
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kgteam.eval.datasets import DatasetItem, GoldAnswer
from kgteam.eval.metrics import (
    Predicted,
    datatype_kind,
    literal_text,
    match_item,
    normalize,
    parse_date,
    parse_number,
)
from kgteam.roles.semantic.layer import SemanticLayer
from kgteam.roles.semantic.mentions import Mention, spot_mentions
from kgteam.roles.semantic.paths import PLAIN, ChainConvention, RelationPath, path_query, walked_back
from kgteam.roles.semantic.scoring import PathScore, phrase_key
from kgteam.roles.semantic.text import WH_WORDS, content_units
from kgteam.tools.example_bank import BANK_CANDIDATES
from kgteam.tools.lexicon import Lexicon
from kgteam.tools.tool_cache import call_key
from kgteam.tools.toolbox import Tool, Toolbox
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


class TuneMemo:
    """What reading the examples asks again and again, kept for one ``kgteam tune`` run (its lexicon
    pass and its bank pass read the same KG).

    Examples about the same entity run the same path queries and name the same answers, and every
    answer of every candidate reading is compared with every gold answer; in a profile of GeoQuery's
    526 examples (no IRIs nor gold queries, so answers are compared by label) those comparisons were
    most of the time. Kept here: each path query's answers (``path_terms``; a failed query is not
    kept), each IRI's name (``labels_for`` names each IRI on its own, so a name found once is the name
    found again) and each (answer, gold) comparison (``match_item`` is a pure function of the two).
    Bounded: past ``max_items`` entries a table is emptied and fills again.

    The bank pass reads each question again, with the lexicon the first pass learned. Kept so that it
    need not: each question's mentions (``spot_mentions`` reads the KG alone) and, where the new
    phrases cannot change them, each mention's best readings (:meth:`readings`; ``max_readings``
    mentions' worth)."""

    def __init__(self, max_items: int = 200_000, max_terms: int = 500_000, max_readings: int = 20_000) -> None:
        self.max_items = max_items
        self.max_terms = max_terms  # answers kept in all (the oldest queries' go first)
        self.max_readings = max_readings
        self._terms: OrderedDict[tuple[str, tuple[tuple[str, str], ...], ChainConvention], list[Any]] = OrderedDict()
        self._held = 0
        self._names: dict[str, str] = {}
        self._matches: dict[tuple[str, str | None, str | None, str | None, str | None], bool] = {}
        self._plain: dict[tuple[str | None, str | None, str | None], str | None] = {}
        self._normal: dict[str, str] = {}
        self._mentions: dict[str, list[Mention]] = {}
        self._readings: dict[tuple[Any, ...], tuple[int, list[tuple[RelationPath, PathScore]]]] = {}
        self._changed: set[str] | None = None  # phrase keys the lexicon gained or lost; None: read afresh
        self.queries = self.reused = 0
        self.reread = self.kept = 0  # readings of the bank pass read afresh, and kept from the first pass

    async def mentions(self, tools: Any, question: str) -> list[Mention]:
        """:func:`spot_mentions` of ``question``, found once for the run."""
        found = self._mentions.get(question)
        if found is None:
            found = await spot_mentions(question, tools)
            if len(self._mentions) >= self.max_items:
                self._mentions.clear()
            self._mentions[question] = found
        return found

    async def readings(self, layer: SemanticLayer, question: str, mention: Mention,
                       exclude: Sequence[tuple[int, int]] = (), *, keep: int = BANK_CANDIDATES,
                       ) -> list[tuple[RelationPath, PathScore]]:
        """The best ``keep`` of ``layer.candidate_paths`` (what tune reads of them: the best
        readings over all mentions are among each mention's best, in the same order).

        Read once for both passes when the lexicon cannot have changed them. The layer's scorer
        reads a lexicon phrase only where a word group of the question *is* that phrase (by
        ``phrase_key``: ``SemanticLayer.scorer`` sets the similarity to 1, ``QuestionScorer`` counts
        the phrase as the label spelled); every other input is the KG's. So a mention whose word
        groups (``content_units``) meet no phrase the lexicon gained or lost since the first pass
        (:meth:`lexicon_changed`) reads the same, and its first-pass readings are used again. On
        GeoQuery that is two examples in three; ``tests/eval/test_tune_speed.py`` checks a re-read
        bank is the same."""
        key = (question, mention.span, tuple(mention.exact_iris()), tuple(exclude))
        kept = self._readings.get(key)
        if kept is not None and kept[0] >= keep and self._changed is not None:
            _, units = content_units(question, mention.span, exclude)
            if not any(phrase_key(u.text) in self._changed for u in units):
                self.kept += 1
                return kept[1][:keep]
        if self._changed is not None:
            self.reread += 1
        found = (await layer.candidate_paths(question, mention, exclude))[:keep]
        if self._changed is None:  # the first pass: kept for the second
            if len(self._readings) >= self.max_readings:
                self._readings.clear()
            self._readings[key] = (keep, found)
        return found

    def lexicon_changed(self, before: Lexicon | None, after: Lexicon | None) -> None:
        """The first pass read with ``before``, the next reads with ``after`` (None: no lexicon):
        readings whose words meet no phrase that differs between them are used again (:meth:`readings`)."""
        def keyed(lexicon: Lexicon | None) -> set[tuple[str, str]]:
            relations = lexicon.relations if lexicon is not None else {}
            return {(p, phrase_key(ph)) for p, phrases in relations.items() for ph in phrases}

        self._changed = {k for _, k in keyed(before) ^ keyed(after)}

    async def terms(self, tools: Any, path: RelationPath, convention: ChainConvention = PLAIN) -> list[Any] | None:
        """:func:`path_terms`, each query run once (the same list is handed out again: read it, never
        change it). Kept by what the query is built from (entity, steps, convention): building the
        query text each time cost as much as looking it up."""
        key = (path.entity, tuple((s.predicate, s.direction) for s in path.steps), convention)
        got = self._terms.get(key)
        if got is not None:
            self.reused += 1
            self._terms.move_to_end(key)
            return got
        self.queries += 1
        got = await path_terms(tools, path, convention)
        if got is not None and key not in self._terms:
            self._terms[key] = got
            self._held += len(got) + 1
            while self._held > self.max_terms and len(self._terms) > 1:
                self._held -= len(self._terms.popitem(last=False)[1]) + 1
        return got

    async def names(self, tools: Any, iris: list[str]) -> dict[str, str]:
        """``labels_for``, each IRI asked once."""
        missing = sorted({i for i in iris if i not in self._names})
        known = {i: self._names[i] for i in iris if i in self._names}
        if missing:
            found = await tools["labels_for"](missing)
            known.update(found)
            if len(self._names) + len(found) > self.max_items:
                self._names.clear()
            self._names.update(found)
        return known

    def match(self, label: str, iri: str | None, gold: GoldAnswer) -> bool:
        """Whether the answer (``label``, ``iri``) matches ``gold`` (:func:`match_item`), each pair compared once."""
        key = (label, iri, gold.label, gold.iri, gold.datatype)
        hit = self._matches.get(key)
        if hit is None:
            if len(self._matches) >= self.max_items:
                self._matches.clear()
            hit = self._matches[key] = match_item(Predicted(label=label, iri=iri), gold) is not None
        return hit

    def plain(self, gold: GoldAnswer) -> str | None:
        """The normalised label of a gold answer only an IRI or a string can match, else None.

        Most gold answers are names. Of :func:`match_item`'s rules, a gold label that reads as no
        boolean, date or number (and has no datatype saying it is one) leaves only two: the same
        IRI, or the same non-empty normalised label. Those are set look-ups, where comparing every
        answer with every gold by ``match_item`` cost more than all else ``tune`` does (GeoQuery:
        4 million comparisons); ``tests/eval/test_tune_speed.py`` checks both agree."""
        key = (gold.label, gold.iri, gold.datatype)
        if key not in self._plain:
            out: str | None = None
            if gold.label is not None:
                text, typed = literal_text(gold.label)
                norm = normalize(text)
                if (datatype_kind(gold.datatype or typed) is None and norm not in ("true", "false")
                        and parse_date(text) is None and parse_number(text) is None):
                    out = norm
            self._plain[key] = out
        return self._plain[key]

    def normal(self, label: str) -> str:
        """An answer label as a plain gold's is compared (:func:`match_item`: literal notation dropped, normalised)."""
        out = self._normal.get(label)
        if out is None:
            if len(self._normal) >= self.max_items:
                self._normal.clear()
            out = self._normal[label] = normalize(literal_text(label)[0])
        return out

    def matches_any(self, label: str, iri: str | None, golds: Sequence[GoldAnswer]) -> bool:
        """Whether the answer matches any of ``golds`` (:func:`match_item`)."""
        for gold in golds:
            plain = self.plain(gold)
            if plain is None:
                if self.match(label, iri, gold):
                    return True
            elif (iri and gold.iri and iri == gold.iri) or (plain and self.normal(label) == plain):
                return True
        return False

    def overlap(self, answers: Sequence[tuple[str, str | None]], golds: Sequence[GoldAnswer]) -> tuple[int, int]:
        """How many of ``answers`` (label, IRI) match some gold answer, and how many gold answers some answer matches."""
        plain = [(g, self.plain(g)) for g in golds]
        names = {p for _, p in plain if p}
        iris = {g.iri for g, p in plain if p is not None and g.iri}
        others = [g for g, p in plain if p is None]
        normal = [self.normal(label) for label, _ in answers]
        hits = sum(1 for (label, iri), norm in zip(answers, normal, strict=True)
                   if (iri and iri in iris) or (norm and norm in names)
                   or any(self.match(label, iri, g) for g in others))
        said, linked = set(normal), {iri for _, iri in answers if iri}
        found = sum(1 for g, p in plain if p is not None and ((p and p in said) or (g.iri and g.iri in linked)))
        found += sum(1 for g in others if any(self.match(label, iri, g) for label, iri in answers))
        return hits, found


# tools whose results depend on more than the KG: ``relation_names`` adds the lexicon's phrases,
# which the lexicon pass is learning and the bank pass reads
_NOT_SHARED = frozenset({"relation_names"})


class KGReadCache:
    """One tune run's memory of its read-only KG tool calls, shared by both passes and every example.

    The examples of a KG ask about the same entities again and again (GeoQuery's 526 questions name
    about 120 states and cities), and the bank pass asks what the lexicon pass asked: the same
    entity schemas, path extensions and label searches. A question's :class:`ToolCache` lives for
    one question and one event loop; this one lives for the run and keeps results, not futures, so
    the second pass (its own event loop) reuses the first's. Same contract: only the KG's read-only
    tools use it (never ``relation_names``), a failed call is not kept, and a caller gets a copy it
    may change (the cache keeps its own, see :func:`_fresh`). Bounded: past ``max_size`` rows and
    items in all, the least recently used results go."""

    def __init__(self, max_size: int = 500_000) -> None:
        self.max_size = max_size
        self._done: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._running: dict[str, asyncio.Future[Any]] = {}
        self._held = 0
        self.calls = self.hits = 0

    async def run(self, key: str, call: Callable[[], Awaitable[Any]]) -> Any:
        kept = self._done.get(key)
        if kept is not None:
            self._done.move_to_end(key)
            self.hits += 1
            return _fresh(kept[0])
        pending = self._running.get(key)
        if pending is not None and pending.get_loop() is asyncio.get_running_loop():
            try:
                result = await asyncio.shield(pending)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not pending.cancelled() or (task is not None and task.cancelling()):
                    raise
                return await self.run(key, call)  # the first caller was cancelled: ask again ourselves
            self.hits += 1
            return _fresh(result)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._running[key] = future
        self.calls += 1
        try:
            result = await call()
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # retrieved: no "never retrieved" warning when nobody waited
            raise
        finally:
            if self._running.get(key) is future:
                del self._running[key]
        future.set_result(result)
        size = _size(result)
        self._done[key] = (_fresh(result), size)
        self._held += size
        while self._held > self.max_size and len(self._done) > 1:
            self._held -= self._done.popitem(last=False)[1][1]
        return result

    def recall(self, key: str) -> Any:
        """A copy of the result kept for ``key``, else :data:`_MISSING`."""
        kept = self._done.get(key)
        if kept is None:
            return _MISSING
        self._done.move_to_end(key)
        self.hits += 1
        return _fresh(kept[0])

    def toolbox(self, box: Toolbox) -> Toolbox:
        """``box`` with its cacheable tools (all but ``relation_names``) sharing this cache."""
        return Toolbox({name: tool if name in _NOT_SHARED else _Remembered(
                            tool.name, tool.description, tool.fn, tool.arguments, tool.hook, tool.cacheable, self)
                        for name, tool in box.items()},
                       owner=box.owner, reader=box.reader, bank=box.bank, profile=box.profile)


_MISSING: Any = object()


@dataclass(frozen=True)
class _Remembered(Tool):
    """A tool of a :class:`KGReadCache` that knows its calls by their arguments as given.

    ``Tool.__call__`` validates the arguments (pydantic) and writes them as JSON to key the cache
    before it can look; a tune run calls the same few tools with the same arguments a hundred
    thousand times, and that cost more than the look-up. Plain arguments (strings, numbers,
    booleans, lists of them) seen before go straight to the result; validation of the same
    arguments always gives the same call, so the result is the one the validated call would get."""

    known: dict[Any, str] = field(default_factory=dict, compare=False, hash=False, repr=False)

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        cache = self.cache
        if not isinstance(cache, KGReadCache) or not self.cacheable:
            return await super().__call__(*args, **kwargs)
        try:
            given: Any = (_given(args), tuple((k, _given(v)) for k, v in sorted(kwargs.items())))
        except TypeError:
            given = None
        if given is not None and given in self.known:
            hit = cache.recall(self.known[given])
            if hit is not _MISSING:
                return hit
        arguments = self.validate(args, kwargs)
        key = call_key(self.name, arguments)
        if given is not None:
            if len(self.known) >= 100_000:
                self.known.clear()
            self.known[given] = key
        return await cache.run(key, lambda: self._invoke(arguments))


def _given(value: Any) -> Any:
    """A plain argument as a key that tells its type (``True`` is not ``1``); TypeError for others."""
    kind = type(value)
    if kind in _ATOM_TYPES:
        return (kind, value)
    if kind is list or kind is tuple:
        return (kind, tuple(_given(v) for v in value))
    raise TypeError(kind)


_ATOMS = (str, int, float, bool, type(None))
_ATOM_TYPES = frozenset(_ATOMS)
_PLAIN: dict[type, bool] = {}  # model class -> whether every field of it holds a plain value


def _plain_model(cls: type[BaseModel]) -> bool:
    plain = _PLAIN.get(cls)
    if plain is None:
        plain = _PLAIN[cls] = all(_plain_annotation(f.annotation) for f in cls.model_fields.values())
    return plain


def _plain_annotation(annotation: Any) -> bool:
    """Whether a field so annotated holds a string, number, boolean or None (and nothing else)."""
    if annotation in _ATOM_TYPES:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return all(isinstance(a, _ATOMS) for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return all(_plain_annotation(a) for a in typing.get_args(annotation))
    return False


def _fresh(value: Any) -> Any:
    """A copy of a tool result that its holder may change without changing the cache's: every list,
    dict and model holding one is new. A model whose fields are plain values only (an ``RDFTerm``, a
    ``LabelHit``) is shared: no code assigns to a tool result's fields (they are built, read, or
    copied with ``model_copy``), and copying each term of each row, as ``copy.deepcopy`` does, cost
    more than the queries the cache saved."""
    kind = type(value)
    if kind in _ATOM_TYPES:
        return value
    if kind is list:
        return [_fresh(v) for v in value]
    if kind is dict:
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, BaseModel):
        if _plain_model(kind) and not value.__pydantic_extra__:
            return value
        new = value.__copy__()
        new.__dict__.update({k: _fresh(v) for k, v in value.__dict__.items() if type(v) not in _ATOM_TYPES})
        return new
    if isinstance(value, _ATOMS):  # a subclass: a str enum, say
        return value
    return copy.deepcopy(value)


def _size(result: Any) -> int:
    """About how much a tool result holds: rows, items or predicates (1 for a small value)."""
    for attr in ("rows", "outgoing"):
        if hasattr(result, attr):
            return 1 + len(getattr(result, attr)) + len(getattr(result, "incoming", ()))
    return 1 + len(result) if isinstance(result, list | dict) else 1


async def path_terms(tools: Any, path: RelationPath, convention: ChainConvention = PLAIN) -> list[Any] | None:
    """The terms a relation path answers (its last variable), or None when its query fails."""
    try:
        res = await tools["run_sparql"](path_query(path, convention=convention), limit=1000)
    except ToolError:
        return None
    var = f"x{len(path.steps)}"
    return [row[var] for row in res.rows if var in row]


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


# ------------------------------------------------------------------------ a second reading process

SPLIT_AT = 64  # examples from which a second process reads half of them (on a second core)


def shares(items: Sequence[DatasetItem]) -> tuple[list[int], list[int]]:
    """The examples in two shares of about one size, those likely about the same entity in one share.

    Each process pays for the first question about an entity (its schema, paths, answers), so
    examples about one entity belong together: split by turns, each process asked about nearly
    every entity, and GeoQuery's lexicon pass took 17 s in two processes instead of 14 s. The
    entity is guessed without the KG, as the question's rarest word that another question also
    uses ("nebraska", not "biggest"); questions with none are shared out like the rest. Which
    process reads an example never changes what is learned."""
    words = [set(re.findall(r"\w+", item.question.lower())) for item in items]
    used = Counter(w for ws in words for w in ws)
    groups: dict[str, list[int]] = {}
    for i, ws in enumerate(words):
        shared_words = [w for w in ws if used[w] > 1]
        groups.setdefault(min(shared_words, key=lambda w: (used[w], w)) if shared_words else f"#{i}", []).append(i)
    mine: list[int] = []
    theirs: list[int] = []
    for _, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        (mine if len(mine) <= len(theirs) else theirs).extend(members)
    return sorted(mine), sorted(theirs)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class SecondReader:
    """A second process that reads a share of the examples (:func:`shares`) while this one reads the rest.

    Reading examples is Python: one process keeps one core busy, whatever it awaits. On GeoQuery's
    526 examples, on a shared two-core machine, both passes took about 34 s in one process and
    25-29 s in two (each pays its own cache misses, see :func:`shares`). The second process opens
    the same KG read-only, keeps its own caches and reads the same examples in both passes, so its
    bank pass reuses its first pass's readings. What each reads is plain data (:class:`Evidence`,
    ``Example``) put back in the examples' order, so the result is what one process would have
    learned. A second process that cannot start, fails or dies leaves its share to this one: the
    same result, slower. A plain subprocess (``python -m kgteam.eval.tuning``) talking over two pipes, as the
    query workers do: multiprocessing's spawn would re-import the parent's ``__main__``.
    """

    def __init__(self, kg_name: str, home: Path | None, items: Sequence[DatasetItem], lexicon: Lexicon) -> None:
        self.mine, self.theirs = shares(items)
        self._count = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process, closed in close()
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kgteam.eval.tuning", str(to_child_r), str(from_child_w),
                 str(self._count.fileno())],
                pass_fds=(to_child_r, from_child_w, self._count.fileno()), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            for fd in (to_child_w, from_child_r):
                os.close(fd)
            self._count.close()
            raise
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self._tx = Connection(to_child_w, readable=False)
        self._rx = Connection(from_child_r, writable=False)
        self.failed = False
        self._send(("open", kg_name, str(home) if home is not None else None, [items[i] for i in self.theirs],
                    lexicon))

    @classmethod
    def start(cls, kg_name: str, home: Path | None, items: Sequence[DatasetItem],
              lexicon: Lexicon) -> SecondReader | None:
        """A second reader when there are enough examples and a second core, else None."""
        if len(items) < SPLIT_AT or _cores() < 2:
            return None
        try:
            return cls(kg_name, home, items, lexicon)
        except OSError:
            return None

    def read(self, request: tuple[Any, ...], items: Sequence[DatasetItem],
             here: Callable[[list[DatasetItem]], list[Any]]) -> list[Any]:
        """``request`` answered for the second process's share while ``here`` reads this one's (and the
        other share too, should the second process fail), in the items' order."""
        self._send(request)
        mine = here([items[i] for i in self.mine])
        theirs = self._receive()
        if theirs is None or len(theirs) != len(self.theirs):
            theirs = here([items[i] for i in self.theirs])
        out: list[Any] = [None] * len(items)
        for i, got in [*zip(self.mine, mine, strict=True), *zip(self.theirs, theirs, strict=True)]:
            out[i] = got
        return out

    def done(self) -> int:
        """How many examples of the current request the second process has read."""
        try:
            return int.from_bytes(os.pread(self._count.fileno(), 8, 0) or b"\0", "little")
        except OSError:  # pragma: no cover
            return 0

    def _send(self, message: tuple[Any, ...]) -> None:
        if self.failed:
            return
        try:
            self._tx.send(message)
        except (OSError, ValueError):
            self.failed = True

    def _receive(self) -> Any:
        if self.failed:
            return None
        try:
            kind, payload = self._rx.recv()
        except (EOFError, OSError):
            kind, payload = "error", "the second reader died"
        if kind != "ok":
            self.failed = True
            return None
        return payload

    def close(self) -> None:
        """Stop the process (it ends when its pipe closes; killed, by the PID started here, if not)."""
        for conn in (self._tx, self._rx):
            with contextlib.suppress(Exception):
                conn.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
        self._count.close()


class _Half:
    """The second process's side: the KG, caches and examples it reads (see :class:`SecondReader`)."""

    def __init__(self, kg_name: str, home: str | None, items: list[DatasetItem], lexicon: Lexicon,
                 count_fd: int) -> None:
        from kgteam.tools.kg import open_kg
        from kgteam.tools.kg_tools import KGTools

        self.kg = open_kg(kg_name, home=Path(home) if home is not None else None)
        self.tools = KGTools.from_kg(self.kg, lexicon=lexicon, reader=None)  # what the first pass reads with
        self.items, self.lexicon, self.count_fd = items, lexicon, count_fd
        self.memo, self.cache = TuneMemo(), KGReadCache()

    def _progress(self, done: int, _total: int) -> None:
        os.pwrite(self.count_fd, done.to_bytes(8, "little"), 0)

    def lexicon_evidence(self, options: dict[str, Any]) -> list[Evidence]:
        from kgteam.roles.semantic.similarity import embedder_similarity

        self._progress(0, 0)
        layer = SemanticLayer(self.cache.toolbox(self.tools.toolbox()), embedder_similarity(self.tools.embedder))
        return asyncio.run(lexicon_evidence(layer, self.items, progress=self._progress, memo=self.memo, **options))

    def record(self, lexicon: Lexicon, options: dict[str, Any]) -> list[Any]:
        from kgteam.eval.teaching import record_examples
        from kgteam.roles.semantic.similarity import embedder_similarity
        from kgteam.tools.kg_tools import KGTools

        self._progress(0, 0)
        self.memo.lexicon_changed(self.lexicon, lexicon)
        tools = KGTools.from_kg(self.kg, lexicon=lexicon, reader=None, embedder=self.tools.embedder)
        layer = SemanticLayer(self.cache.toolbox(tools.toolbox()), embedder_similarity(self.tools.embedder),
                              reader=None)
        return asyncio.run(record_examples(layer, self.items, progress=self._progress, memo=self.memo, **options))


def _serve(rx: Connection, tx: Connection, count_fd: int) -> None:
    """The second reader's loop: open, then answer each request, until the pipe closes."""
    half: _Half | None = None
    try:
        while True:
            try:
                message = rx.recv()
            except (EOFError, OSError):
                return
            try:
                if message[0] == "open":
                    half = _Half(*message[1:], count_fd=count_fd)
                elif half is None:
                    raise RuntimeError("not opened")
                elif message[0] == "lexicon":
                    tx.send(("ok", half.lexicon_evidence(message[1])))
                elif message[0] == "bank":
                    tx.send(("ok", half.record(message[1], message[2])))
            except Exception as exc:  # noqa: BLE001 - the first process reads this share itself
                with contextlib.suppress(Exception):
                    tx.send(("error", f"{type(exc).__name__}: {exc}"))
                return
    finally:
        if half is not None:
            half.tools.close()


if __name__ == "__main__":  # the second reader (see SecondReader); its code comes from the package module
    from kgteam.eval.tuning import _serve as serve

    serve(Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False), int(sys.argv[3]))
