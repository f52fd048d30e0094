"""Record what a KG's example questions mean: the readings that reach their gold answers (``kgteam tune``).

For each question/answer pair the semantic layer offers its candidate readings as it would at run
time, with the hand scorer alone; each of the best ``candidates`` is run and its answers compared
with the gold ones (the gold query's results when the example has one, else the gold answers by
IRI, label, number or date). The readings whose answers overlap the gold best are the example's
readings; every candidate is kept, with the hand scorer's numbers, so the reader can be trained
from the bank alone.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from kgteam.eval.datasets import DatasetItem
from kgteam.eval.tune_cache import TuneMemo
from kgteam.roles.semantic.layer import SemanticLayer, other_names
from kgteam.roles.semantic.mentions import Mention
from kgteam.roles.semantic.paths import CHAIN_CONVENTIONS, RelationPath, walked_back
from kgteam.roles.semantic.reader import masked_words, mean_strength
from kgteam.roles.semantic.shape import read_shape
from kgteam.roles.semantic.shaped import ShapedReader, mask_mentions, not_shape_words
from kgteam.roles.semantic.text import tokenize
from kgteam.tools.example_bank import (
    ANSWERS_NOTHING,
    BANK_CANDIDATES,
    BankStep,
    Candidate,
    Example,
    ExampleBank,
    JoinRecord,
    mark_best,
)
from kgteam.tools.types import ToolError


async def _gold_values(layer: SemanticLayer, item: DatasetItem) -> set[str] | None:
    """The values the gold query returns (its first variable), else the gold answers' IRIs when every
    answer has one; None: compare by label (each reading's answers are named first, which is slow)."""
    if not item.gold_query:
        if item.answers and all(a.iri for a in item.answers):
            return {str(a.iri) for a in item.answers}
        return None
    try:
        res = await layer.tools["run_sparql"](item.gold_query, limit=1000)
    except ToolError:
        return None
    var = res.variables[0] if res.variables else None
    return {row[var].value for row in res.rows if var and var in row}


async def _overlap(layer: SemanticLayer, item: DatasetItem, terms: list[Any], gold_values: set[str] | None,
                   memo: TuneMemo) -> float:
    """F1 of a reading's answers against the gold answers (by label: each answer named and compared
    once per run, ``memo``)."""
    if not terms:
        return 0.0
    if gold_values:
        hits = sum(1 for t in terms if t.value in gold_values)
        found = len({t.value for t in terms} & gold_values)
        total = len(gold_values)
    else:
        if not item.answers:
            return 0.0
        iris = [t.value for t in terms if t.type == "uri"]
        names = await memo.names(layer.tools, iris) if iris else {}
        hits, found = memo.overlap([(names.get(t.value, t.value), t.value if t.type == "uri" else None)
                                    for t in terms], item.answers)
        total = len(item.answers)
    if not hits:
        return 0.0
    precision, recall = hits / len(terms), found / total
    return 2 * precision * recall / (precision + recall)


async def _f1_under(layer: SemanticLayer, item: DatasetItem, path: RelationPath, terms: list[Any],
                    gold_values: set[str] | None, memo: TuneMemo) -> dict[str, float]:
    """The reading's F1 under each other chain convention that changes its answers (a second query
    only for a path that walks a step back)."""
    free: list[Any] | None = terms
    if walked_back([(s.predicate, s.direction) for s in path.steps]):
        free = await memo.terms(layer.tools, path, CHAIN_CONVENTIONS["free_walks"])  # None: it failed
    out: dict[str, float] = {}
    seen = {t.value for t in terms}
    for name, convention in CHAIN_CONVENTIONS.items():
        got = free if convention.free_walks else terms
        if got is None:
            continue  # unknown that way: not counted for or against it
        if convention.drop_topic:
            got = [t for t in got if t.value != path.entity]
        if not got:
            out[name] = ANSWERS_NOTHING
        elif {t.value for t in got} != seen:
            out[name] = round(await _overlap(layer, item, got, gold_values, memo), 4)
    return out


def answers_key(terms: Sequence[Any]) -> str:
    """A short digest of a reading's answers (readings that answer alike are not rivals)."""
    return hashlib.blake2b("\n".join(sorted({t.value for t in terms})).encode(), digest_size=8).hexdigest()


async def record_example(layer: SemanticLayer, item: DatasetItem, *, candidates: int = BANK_CANDIDATES,
                         memo: TuneMemo | None = None) -> Example:
    """The example with its candidate readings and which of them reach the gold answers (``memo``:
    what the run's examples ask alike, see :class:`TuneMemo`)."""
    memo = memo if memo is not None else TuneMemo()
    example = Example(id=item.id, question=item.question, sparql=item.gold_query,
                      answers=[a.label or a.iri or "" for a in item.answers])
    mentions = await memo.mentions(layer.tools, item.question)
    tokens = tokenize(item.question)
    scored = []
    for mention in mentions[: layer.settings.max_mentions]:
        exclude = other_names(mentions, mention)
        words = masked_words(tokens, mention.span, exclude)
        scored += [(p, s, mention, words)
                   for p, s in await memo.readings(layer, item.question, mention, exclude, keep=candidates)]
    scored.sort(key=lambda t: (-t[1].score, len(t[0].steps), t[0].key))
    gold_values = await _gold_values(layer, item)
    for path, score, mention, words in scored[:candidates]:
        terms = await memo.terms(layer.tools, path)
        if not terms:
            continue  # the layer drops a reading that answers nothing
        under = await _f1_under(layer, item, path, terms, gold_values, memo)
        example.candidates.append(Candidate(
            entity=path.entity, mention=mention.text, words=words, literal_end=path.literal_end,
            steps=[BankStep(predicate=s.predicate, direction=s.direction, label=s.label) for s in path.steps],
            hand=round(score.score, 5), support=round(score.support, 5), unexplained=round(score.unexplained, 5),
            strength=round(mean_strength(score), 5), f1=round(await _overlap(layer, item, terms, gold_values, memo), 4),
            answers_key=answers_key(terms), f1_under=under))
    if len(mentions) >= 2:
        example.join = await _join(layer, item, mentions, gold_values, memo)
    mark_best(example.candidates)
    gold = example.readings
    if gold:
        example.mention = gold[0].mention
    return example


async def _join(layer: SemanticLayer, item: DatasetItem, mentions: list[Mention],
                gold_values: set[str] | None, memo: TuneMemo) -> JoinRecord | None:
    """The shape reader's join of the question's two named entities, read as Triad's generalist
    reads it (the hand scorer's paths), with its answers' overlap; None when it reads no join."""
    question = item.question
    mentions = not_shape_words(mentions, read_shape(question))
    reader = ShapedReader(layer.tools, layer.similarity)
    spans = await reader.class_word_spans(question, read_shape(mask_mentions(question, mentions)))
    try:
        paths = await layer.rank(question, mentions, exclude=spans)
        reading = await reader.read(question, paths, mentions)
        if reading is None or not reading.join:
            return None
        res = await layer.tools["run_sparql"](reading.sparql, limit=1000)
    except ToolError:  # the example's readings are recorded all the same, without its join
        return None
    var = reading.graph.answer[0].name
    terms = [row[var] for row in res.rows if var in row]
    confidence = reading.kg_map.raw if reading.kg_map is not None else reading.confidence
    return JoinRecord(confidence=round(confidence, 4), f1=round(await _overlap(layer, item, terms, gold_values, memo),
                                                                4))


async def record_examples(layer: SemanticLayer, items: Sequence[DatasetItem], *,
                          candidates: int = BANK_CANDIDATES, progress: Callable[[int, int], Any] | None = None,
                          concurrency: int = 4, memo: TuneMemo | None = None) -> list[Example | None]:
    """Every item recorded (see :func:`record_example`), ``concurrency`` at a time (their queries
    wait on the store, not on Python), in the items' order; None for an item whose queries fail.
    ``memo`` (one for the whole run) keeps what the examples ask alike."""
    memo = memo if memo is not None else TuneMemo()
    gate = asyncio.Semaphore(max(1, concurrency))
    done = 0

    async def one(item: DatasetItem) -> Example | None:
        nonlocal done
        async with gate:
            try:
                return await record_example(layer, item, candidates=candidates, memo=memo)
            except ToolError:
                return None
            finally:
                done += 1
                if progress:
                    progress(done, len(items))

    return list(await asyncio.gather(*(one(item) for item in items)))


async def record_bank(layer: SemanticLayer, items: Sequence[DatasetItem], *, candidates: int = BANK_CANDIDATES,
                      progress: Callable[[int, int], Any] | None = None, concurrency: int = 4,
                      memo: TuneMemo | None = None) -> ExampleBank:
    """The bank of :func:`record_examples` (an item whose queries fail is left out)."""
    recorded = await record_examples(layer, items, candidates=candidates, progress=progress,
                                     concurrency=concurrency, memo=memo)
    return ExampleBank(examples=[e for e in recorded if e is not None])
