"""What a tune run reads once and keeps: the examples' readings, answers and names (:class:`TuneMemo`)
and the KG tools' read-only results (:class:`KGReadCache`), shared by the lexicon and bank passes."""


from __future__ import annotations

import asyncio
import copy
import types
import typing
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from kgteam.eval.datasets import GoldAnswer
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
from kgteam.roles.semantic.paths import PLAIN, ChainConvention, RelationPath, path_query
from kgteam.roles.semantic.scoring import PathScore, phrase_key
from kgteam.roles.semantic.text import content_units
from kgteam.tools.example_bank import BANK_CANDIDATES
from kgteam.tools.lexicon import Lexicon
from kgteam.tools.tool_cache import call_key
from kgteam.tools.toolbox import Tool, Toolbox
from kgteam.tools.types import ToolError


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
