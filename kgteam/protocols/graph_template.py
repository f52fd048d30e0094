"""A query-graph template over placeholders: what a model may write for a question.

The model names the question's entities (``<E0>``, ``<E1>``: names copied from the question), one
short phrase per relation (``<R0>`` ...), the triple patterns over those placeholders and
variables, and the shape's operators: a count, an ordering (max or min by a literal relation it
names), a literal filter, a yes/no, two entities joined by and / or / not; and the kind of answer.
It never writes an IRI: the decision maker fills the placeholders from the KG, and the filled
reading is a :class:`~kgteam.protocols.query_graph.QueryGraph` of the same shape.

Its words are the query graph's own (``Shape``, ``AnswerKindName``, ``CompareOp``), so there is
one query language, not two; this is only its unfilled form. :func:`structure_problem` checks
what can be checked without the question or the KG.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kgteam.protocols.query_graph import AnswerKindName

TemplateShape = Literal["chain", "count", "superlative", "comparative", "ask", "intersection", "union", "negation"]
Ordering = Literal["<", "<=", ">", ">="]
TWO_ENTITY_SHAPES = ("ask", "intersection", "union", "negation")

_ENTITY = re.compile(r"^<E(\d)>$")
_RELATION = re.compile(r"^<R(\d)>$")
_VARIABLE = re.compile(r"^\?[A-Za-z_]\w*$")
_NUMBER = re.compile(r"^[+-]?\d[\d,]*(?:\.\d+)?$")


class GraphTemplate(BaseModel):
    """The model's reading of a question as a query graph with placeholders."""

    model_config = ConfigDict(extra="forbid")

    shape: TemplateShape
    entities: list[str] = Field(min_length=1, max_length=2,
                                description="<E0>, <E1>: entity names copied exactly from the question")
    relations: list[str] = Field(min_length=1, max_length=4,
                                 description="<R0>, <R1> ...: a short phrase for each relation")
    triples: list[str] = Field(min_length=1, max_length=4, description='patterns such as "<E0> <R0> ?x"')
    answer: str = Field("?x", description="the variable asked for (unused by ask)")
    order: Literal["max", "min"] | None = Field(None, description="superlative: the highest (max) or lowest (min)")
    order_by: str | None = Field(None, description="superlative / comparative: the literal relation, e.g. height")
    op: Ordering | None = Field(None, description="comparative: how the literal compares with value")
    value: str | None = Field(None, description="comparative: the number from the question")
    kind: AnswerKindName = Field("entity", description="what the answer is")
    class_word: str | None = Field(None, description="entity answers: the class word of the question, e.g. river")

    def parsed(self) -> list[tuple[str, str, str]]:
        """The triple patterns as (subject, relation, object) terms; malformed ones are dropped
        (:func:`structure_problem` reports them)."""
        out = []
        for t in self.triples:
            parts = t.split()
            if len(parts) == 3:
                out.append((parts[0], parts[1], parts[2]))
        return out


def structure_problem(t: GraphTemplate, *, max_hops: int = 3) -> str | None:
    """Why the template cannot be filled as written (placeholders, connectivity, the shape's own
    fields), or None. The messages are meant for the model's repair."""
    triples = t.parsed()
    if len(triples) != len(t.triples):
        return 'each triple is three terms, e.g. "<E0> <R0> ?x"'
    used_e: set[int] = set()
    used_r: list[int] = []
    for s, r, o in triples:
        for term in (s, o):
            m = _ENTITY.match(term)
            if m:
                used_e.add(int(m.group(1)))
            elif not _VARIABLE.match(term):
                return f"subjects and objects must be entity placeholders (<E0>, <E1>) or ?variables, not {term!r}"
        m = _RELATION.match(r)
        if not m:
            return f"the middle of a triple must be one of the relation placeholders <R0>, <R1> ..., not {r!r}"
        used_r.append(int(m.group(1)))
    if used_e != set(range(len(t.entities))):
        return f"the triples must use exactly the entities <E0>..<E{len(t.entities) - 1}>"
    if sorted(used_r) != list(range(len(t.relations))):
        return f"each relation <R0>..<R{len(t.relations) - 1}> must be used in exactly one triple"
    if not _connected(triples):
        return "the triples must be connected through shared terms"
    if t.shape != "ask" and not any(t.answer in (s, o) for s, _, o in triples):
        return f"the answer {t.answer} must occur in the triples"
    two = t.shape in TWO_ENTITY_SHAPES
    if two and len(t.entities) != 2:
        return f"a {t.shape} template names two entities, <E0> and <E1>"
    if not two and len(t.entities) != 1:
        return f"a {t.shape} template names one entity, <E0>"
    if t.shape != "ask":
        for e in range(len(t.entities)):
            hops = hops_between(triples, f"<E{e}>", t.answer)
            if hops is None or hops > max_hops:
                return f"<E{e}> must reach {t.answer} through at most {max_hops} triples"
    if (t.shape == "ask") != (t.kind == "boolean"):
        return "a yes/no question (ask) has kind boolean, and only it"
    if t.shape == "count" and t.kind != "number":
        return "a count has kind number"
    if t.shape == "superlative" and (t.order is None or not t.order_by):
        return "a superlative needs order (max or min) and order_by (the literal relation)"
    if t.shape == "comparative" and (t.op is None or not t.value or not _NUMBER.match(t.value.strip())):
        return "a comparative needs op (<, <=, >, >=) and value (a number)"
    return None


def _connected(triples: list[tuple[str, str, str]]) -> bool:
    nodes = {t for s, _, o in triples for t in (s, o)}
    reached = {triples[0][0]}
    grew = True
    while grew:
        grew = False
        for s, _, o in triples:
            if (s in reached) != (o in reached):
                reached |= {s, o}
                grew = True
    return reached == nodes


def hops_between(triples: list[tuple[str, str, str]], start: str, end: str) -> int | None:
    """Fewest triples from ``start`` to ``end``, walked in either direction (None: not reached)."""
    frontier, seen, n = {start}, {start}, 0
    while frontier:
        if end in frontier:
            return n
        nxt = {b for s, _, o in triples for a, b in ((s, o), (o, s)) if a in frontier} - seen
        seen |= nxt
        frontier, n = nxt, n + 1
    return None
