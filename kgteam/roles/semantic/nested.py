"""A topic named by a description: "the capital of *the largest state*", "which rivers run through
*the state with the largest city*".

The entity such a question is about has no name in the question: it is a superlative noun phrase
over a class. That phrase is read on its own, as a question of its own ("what is the largest
state"), by the same readings every question gets; when that reading is sure enough and gives a
few entities, the phrase becomes a topic mention linked to them, and the rest of the question is
read from there. The confidence of the whole is that of the phrase times that of the rest, so a
guess inside never becomes a sure answer outside. Only closed-class English is used: superlative
morphology, articles, "with / that / having", and the KG's own class names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgteam.roles.semantic.classes import class_spans
from kgteam.roles.semantic.mentions import Mention, spot_mentions
from kgteam.roles.semantic.shape import AUXILIARIES, IMPERATIVES, ORDINALS, read_shape, superlative_base
from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, Token, tokenize
from kgteam.tools.query_builder import compile_query
from kgteam.tools.types import LabelHit, ToolError

if TYPE_CHECKING:
    from kgteam.roles.semantic.layer import SemanticSettings, Similarity
    from kgteam.tools.toolbox import Toolbox

MAX_TOPIC_ENTITIES = 5  # a description that gives more is a set, not a topic
MIN_CONFIDENCE = 0.5  # below this the phrase is not read as a topic at all
_JOINERS = frozenset({"with", "having", "has", "have", "that", "which", "whose", "who", "where", "containing",
                      "contains"})
_OUTER_FILLER = frozenset({"the", "a", "an", "of", "in", "is", "are", "was", "were", "me", "all", "name", "names"})


@dataclass
class NestedTopic:
    """A noun phrase of the question read as its own question and linked to what that gave."""

    mention: Mention
    confidence: float
    explanation: str
    sparql: str


def _superlative_at(tokens: Sequence[Token], i: int) -> bool:
    w = tokens[i].lower
    if w in ("most", "least"):
        return not (i > 0 and tokens[i - 1].lower == "at") and not (i + 1 < len(tokens) and tokens[i + 1].lower == "of")
    return superlative_base(w) is not None and not (i > 0 and tokens[i].text[:1].isupper())


def phrase_starts(tokens: Sequence[Token], s: int, classes: set[int]) -> list[int]:
    """Where the noun phrase around the superlative at ``s`` may start: at the article of the class
    it describes ("*the* state with the largest area", "*the* river that runs through the most
    states"), or at its own article ("the state with *the* largest city")."""
    low = [t.lower for t in tokens]
    a = s - 1
    while a >= 0 and low[a] in ORDINALS:
        a -= 1
    if a < 0 or low[a] not in ("the", "a", "an"):
        return []
    for back in range(a - 1, max(-1, a - 5), -1):
        if low[back] in _JOINERS:
            head = back - 1
            if head >= 1 and head in classes and low[head - 1] in ("the", "a", "an"):
                return [head - 1, a]
            break
        if low[back] in STOPWORDS or back in classes:
            break
    return [a]


def candidate_phrases(question: str, class_positions: set[int]) -> list[tuple[int, int]]:
    """Superlative noun phrases that sit inside a question (innermost first, the wider reading of
    each before the narrower): spans about a class whose words before them still ask something
    ("the capital *of*", "which state *has*"), to the question's end."""
    tokens = tokenize(question)
    low = [t.lower for t in tokens]
    out: list[tuple[int, int]] = []
    for s in range(len(tokens) - 1, 0, -1):
        if not _superlative_at(tokens, s):
            continue
        for start in phrase_starts(tokens, s, class_positions):
            if start == 0 or not any(i in class_positions for i in range(start, len(tokens))):
                continue  # "the largest population": an attribute, not a thing to be about
            outer = [w for w in low[:start] if w not in _OUTER_FILLER and w not in WH_WORDS
                     and w not in AUXILIARIES and w not in IMPERATIVES]
            if outer:  # else "what is the largest state": the phrase is the answer itself
                out.append((start, len(tokens)))
    return out


async def nested_topic(question: str, tools: Toolbox, similarity: Similarity | None,
                       settings: SemanticSettings | None = None, *, depth: int = 2) -> NestedTopic | None:
    """The innermost superlative noun phrase of ``question`` that is a topic, read on its own and
    linked to the entities it gives (None: no such phrase, or its reading is unsure). The phrase
    may itself hold one ("the state with *the largest city*"), read first, ``depth`` levels down."""
    from kgteam.roles.semantic.layer import SemanticLayer
    from kgteam.roles.semantic.reading_answer import result_rows
    from kgteam.roles.semantic.shaped import ShapedReader, mask_mentions, not_shape_words

    try:
        spans = await class_spans(question, tools)
    except ToolError:
        return None
    if not spans:
        return None
    positions = {i for sp in spans for i in range(sp.start, sp.end)}
    tokens = tokenize(question)
    for start, end in candidate_phrases(question, positions):
        text = question[tokens[start].start : tokens[end - 1].end]
        sub = f"what is {text}"
        inner = await nested_topic(sub, tools, similarity, settings, depth=depth - 1) if depth > 1 else None
        try:
            mentions = not_shape_words(await spot_mentions(sub, tools), read_shape(sub))
            if inner is not None:
                mentions = with_topic(mentions, inner)
            reader = ShapedReader(tools, similarity)
            kinds = await reader.class_word_spans(sub, read_shape(mask_mentions(sub, mentions)))
            paths = await SemanticLayer(tools, similarity, settings).rank(sub, mentions, exclude=kinds)
            reading = await reader.read(sub, paths, mentions)
        except ToolError:
            continue
        if reading is None and inner is not None and paths.paths:
            reading = _chain_reading(paths)  # "the state with <the largest city>": the chain from it
        if reading is None or reading.guess_only:
            continue
        confidence = reading.confidence * (inner.confidence if inner is not None else 1.0)
        if confidence < MIN_CONFIDENCE:
            continue
        if reading.graph.form != "select" or reading.graph.aggregate is not None:
            continue
        try:
            sparql = compile_query(reading.graph)
            variables, rows = result_rows(await tools["run_sparql"](sparql, limit=MAX_TOPIC_ENTITIES + 1))
        except ToolError:
            continue
        var = variables[0] if variables else None
        iris = list(dict.fromkeys(r[var]["value"] for r in rows if var in r and r[var].get("type") == "uri"))
        if not iris or len(iris) > MAX_TOPIC_ENTITIES or len(iris) < len(rows) and len(rows) > len(iris):
            continue
        try:
            names = await tools["labels_for"](iris)
        except (ToolError, KeyError):
            names = {}
        hits = [LabelHit(iri=i, label=names.get(i, i), matched=text, score=1.0, exact=True) for i in iris]
        said = ", ".join(names.get(i, i) for i in iris)
        why = reading.explanation + (f"; where {inner.explanation}" if inner is not None else "")
        return NestedTopic(Mention(text, start, end, hits), round(confidence, 4), f"{text} = {said} ({why})", sparql)
    return None


def _chain_reading(paths: Any) -> Any:
    """The best path of the ranking as a reading (what a question with a described topic and no
    shape of its own asks: "the state *that has* the largest city")."""
    from kgteam.roles.semantic.shaped import ShapedReading, chain_group, select_graph

    best = paths.paths[0]
    triples, end = chain_group(best)
    return ShapedReading(select_graph(triples, end, topics=[best.entity], kind=None), paths.confidence,
                         best.explain(), list(best.steps), best.key)


def with_topic(mentions: Sequence[Any], topic: NestedTopic) -> list[Any]:
    """The question's mentions with the phrase's in place of any inside it."""
    m = topic.mention
    return [x for x in mentions if x.end <= m.start or x.start >= m.end] + [m]
