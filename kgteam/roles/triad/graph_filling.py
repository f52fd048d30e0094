"""A model's query-graph template, checked against the question and filled from the KG.

Checks beyond the template's own structure (``protocols.graph_template``): its entity names are
in the question and in the label index, and its shape is the one the question's words show when
the model-free shape reader found cue words for one (the model cannot turn "how many" into a
chain, nor a plain "which" question into a yes/no the words do not ask).

Filling reuses the model-free reader: the template becomes the :class:`ShapeReading` the
:class:`ShapedReader` works from, restricted to the entities the model named, so the relations
come from the semantic layer's ranking, in the direction the KG stores them, and the ordering
relation from the set's own literal relations named by the model's ``order_by``. A filling whose
query graph has another shape than the template's is no filling (None): the caller keeps the
deterministic reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kgteam.protocols.graph_template import GraphTemplate, hops_between
from kgteam.protocols.payloads import AnswerTypeName, GraphReading, RankedPath, RelationPaths
from kgteam.protocols.query_graph import Shape
from kgteam.roles.semantic.reading_answer import read_graph
from kgteam.roles.semantic.shape import ShapeReading
from kgteam.roles.semantic.shaped import ShapedReader
from kgteam.roles.semantic.text import normalise
from kgteam.roles.triad.templates import Chain, parse_chain

_LITERAL_KINDS = ("number", "date", "string")


def seen_shape(seen: ShapeReading) -> str | None:
    """The template shape the question's words ask for, when the reader found cue words for a
    shape other than a plain chain (None: the words leave it open)."""
    if not seen.cue_positions and seen.form == "select":
        return None
    if seen.shape in ("chain", "literal"):
        return None if seen.shape == "chain" else "chain"
    return seen.shape


def question_problem(t: GraphTemplate, question: str, known: Sequence[str], seen: ShapeReading) -> str | None:
    """Why the template does not fit this question (None: it does)."""
    q = normalise(question)
    names = {normalise(k) for k in known}
    for name in t.entities:
        if normalise(name) not in q:
            return f"entity {name!r} does not occur in the question"
        if names and normalise(name) not in names:
            return f"each entity must be one of the known names: {sorted(known)}"
    if len({normalise(n) for n in t.entities}) != len(t.entities):
        return "<E0> and <E1> must be different entities"
    expected = seen_shape(seen)
    if expected is not None and t.shape != expected:
        return f"the question's words ask for a {expected}, not a {t.shape}"
    if seen.shape == "literal" and t.kind != seen.answer_kind:
        return f"the question's words ask for a {seen.answer_kind}"
    if t.shape == "comparative" and t.value and normalise(t.value).replace(",", "") not in q.replace(",", ""):
        return f"the value {t.value!r} must be the number in the question"
    return None


def chain_of(t: GraphTemplate) -> Chain:
    """A one-entity chain template read as the chain the decision maker fills by traversal."""
    body = " ".join(f"{s} {r} {o} ." for s, r, o in t.parsed())
    return parse_chain(f"SELECT DISTINCT {t.answer} WHERE {{ {body} }}")


def answer_type(t: GraphTemplate) -> AnswerTypeName:
    return "resource" if t.kind == "entity" else t.kind  # type: ignore[return-value]


def as_shape_reading(t: GraphTemplate, seen: ShapeReading) -> ShapeReading:
    """The template as the shape reader's reading; the cue positions and what the template does
    not say (a negated yes/no, the kind words) stay the reader's."""
    shape: Shape = t.shape
    if t.shape == "chain":
        shape = "literal" if t.kind in _LITERAL_KINDS else "chain"
    return ShapeReading(
        form="ask" if t.shape == "ask" else "select", shape=shape,
        answer_kind="number" if t.shape == "count" else t.kind,
        kind_words=t.class_word or seen.kind_words,
        order=t.order if t.shape == "superlative" else None,
        order_words=(t.order_by or seen.order_words) if t.shape in ("superlative", "comparative") else None,
        comparison=t.op if t.shape == "comparative" else None,
        number=t.value.replace(",", "") if t.shape == "comparative" and t.value else None,
        negated=t.shape == "negation" or (t.shape == "ask" and seen.negated),
        conjunction={"union": "or", "intersection": "and"}.get(t.shape),
        cue_positions=seen.cue_positions)


def _filled_shape(t: GraphTemplate) -> set[str]:
    """The query graph shapes a filling of the template may have."""
    if t.shape == "chain":
        return {"literal"} if t.kind in _LITERAL_KINDS else {"chain"}
    if t.shape == "count":
        return {"count", "literal"}  # "how many people live in X": the KG may hold the number itself
    return {t.shape}


async def fill(reader: ShapedReader, question: str, t: GraphTemplate, paths: RelationPaths,
               mentions: Sequence[Any], seen: ShapeReading, trace: Any, role: str) -> GraphReading | None:
    """The template filled from the KG as a query graph reading, or None when the KG gives no
    reading of the template's shape from the entities it names."""
    named = {normalise(n) for n in t.entities}
    kept = [m for m in mentions if normalise(getattr(m, "text", "")) in named]
    lengths = {normalise(n): _lengths(t, i) for i, n in enumerate(t.entities)}
    ranked = _cut(paths.paths, lengths)
    if len({normalise(p.mention) for p in ranked}) < len(named):
        return None
    reading = await read_graph(_Fixed(reader, as_shape_reading(t, seen)), question,  # type: ignore[arg-type]
                               paths.model_copy(update={"paths": ranked}), kept, trace, role)
    if reading is None or reading.guess_only or reading.graph.shape not in _filled_shape(t):
        return None  # a guess is no filling: the deterministic reading stands
    return reading


def _lengths(t: GraphTemplate, index: int) -> set[int]:
    """The path lengths from entity ``index`` the template allows: its triples to the answer (to
    the other entity, for a yes/no); a set that is ordered or filtered may come with its literal
    step; each side of a join may be a prefix (the reader adds prefixes itself)."""
    triples = t.parsed()
    if t.shape == "ask":  # from either entity to the other
        hops = hops_between(triples, "<E0>", "<E1>") or 0
    else:
        hops = hops_between(triples, f"<E{index}>", t.answer) or 0
    if t.shape in ("superlative", "comparative"):
        return {hops, hops + 1}
    if t.shape in ("intersection", "union", "negation"):
        return set(range(1, hops + 1))
    return {hops}


def _cut(paths: Sequence[RankedPath], lengths: dict[str, set[int]]) -> list[RankedPath]:
    """The named entities' ranked paths of the template's lengths, in the layer's order; a longer
    path stands for its prefix of the longest allowed length (keeping its score)."""
    out: dict[str, RankedPath] = {}
    for p in paths:
        allowed = {n for n in lengths.get(normalise(p.mention), ()) if n >= 1}
        if not allowed:
            continue
        if p.hops not in allowed:
            if p.hops < max(allowed):
                continue
            p = p.model_copy(update={"steps": p.steps[: max(allowed)], "answers": [], "sparql": ""})
        out.setdefault(p.key, p)
    return list(out.values())


class _Fixed:
    """The reader with the shape given instead of read from the words."""

    def __init__(self, reader: ShapedReader, shape: ShapeReading) -> None:
        self.reader, self.shape = reader, shape

    async def read(self, question: str, paths: RelationPaths, mentions: Sequence[Any] = ()) -> Any:
        return await self.reader.read(question, paths, mentions, shape=self.shape)
