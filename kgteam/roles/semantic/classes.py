"""Classes in a question: the set a count, a superlative, a comparison or a list ranges over.

"What is the longest river", "how many states are there", "list all operas", "which cities have
more than a million inhabitants": no entity is named, yet the question is about the members of a
class the KG has. The class is found by its name in the KG's profile (its own label, alias or
local name, singular or plural); its members are what its typing predicate says (``rdf:type`` or
the KG's own "instance of"), subclasses included. A named entity ("the rivers *in Texas*")
narrows the set through the relation that links the class's members to it, one or two hops away,
the one the question's words name when several do. Nothing here knows any KG's words.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from kgteam.protocols.evidence import RelationMatch
from kgteam.protocols.query_graph import RDF_TYPE, Compare, Group, Iri, QueryGraph, Term, Triple, Var
from kgteam.roles.semantic.scoring import lexical_similarity
from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, normalise, tokenize
from kgteam.tools.query_builder import compile_query, group
from kgteam.tools.types import ToolError

if TYPE_CHECKING:
    from kgteam.tools.toolbox import Toolbox

Similarity = Callable[[list[str], list[str]], Awaitable[list[list[float]]]]
Direction = Literal["out", "in"]
NAMED_LINK = 0.5  # a word this similar to a link's label names it


@dataclass(frozen=True)
class ClassSpan:
    """A span of the question that names a class of the KG (token offsets of ``text.tokenize``)."""

    start: int
    end: int
    words: str
    klass: str


@dataclass
class Link:
    """How members of a class reach a named entity: one or two (predicate, direction) steps from
    the member, the members it keeps, and the words that named it (if any)."""

    steps: tuple[tuple[str, Direction], ...]
    members: int
    labels: tuple[str, ...] = ()
    strength: float = 0.0
    words: str | None = None  # the question's word that named it (strength >= NAMED_LINK)


@dataclass
class ClassSet:
    """Members of a class, narrowed by links to named entities: a set to count, order, filter or list."""

    klass: str
    label: str
    group: Group
    end: Var
    confidence: float
    explanation: str
    matches: list[RelationMatch] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    key: str = ""

    def select(self, expected: Any = None) -> QueryGraph:
        return QueryGraph(answer=[self.end], where=self.group.model_copy(deep=True), expected=expected,
                          topics=list(self.topics))


async def membership(tools: Toolbox, var: Var, klass: str) -> Group:
    """``var`` is a member of ``klass`` or of a subclass of it, typed as the KG types it."""
    profile = getattr(tools, "profile", None)
    if profile is None:
        return Group(triples=[Triple(subject=var, predicate=Iri(iri=RDF_TYPE), object=Iri(iri=klass))])
    try:
        predicate = await profile.type_predicate(klass)
        closure = await profile.closure(klass)
    except ToolError:
        predicate, closure = RDF_TYPE, [klass]
    if len(closure) == 1:
        return Group(triples=[Triple(subject=var, predicate=Iri(iri=predicate), object=Iri(iri=klass))])
    cvar = Var(name=f"{var.name}_class")
    return Group(triples=[Triple(subject=var, predicate=Iri(iri=predicate), object=cvar)],
                 values={cvar.name: [Iri(iri=c) for c in closure]})


async def class_spans(question: str, tools: Toolbox, *, skip: Sequence[tuple[int, int]] = ()) -> list[ClassSpan]:
    """Spans naming a class of the KG, longest first then left to right (no overlaps, none inside ``skip``)."""
    profile = getattr(tools, "profile", None)
    if profile is None:
        return []
    tokens = tokenize(question)
    low = [t.lower for t in tokens]
    taken = [any(a <= i < b for a, b in skip) for i in range(len(tokens))]
    out: list[ClassSpan] = []
    for n in (3, 2, 1):
        for i in range(len(tokens) - n + 1):
            if any(taken[i : i + n]):
                continue
            words = low[i : i + n]
            if words[0] in STOPWORDS or words[-1] in STOPWORDS or any(w in WH_WORDS for w in words):
                continue
            if not all(w.replace("-", "").isalpha() for w in words):
                continue
            try:
                found = await profile.classes_named(" ".join(words))
            except ToolError:
                return out
            if found:
                out.append(ClassSpan(i, i + n, " ".join(words), found[0]))
                for j in range(i, i + n):
                    taken[j] = True
    out.sort(key=lambda s: s.start)
    return out


def _step_triples(start: Term, steps: Sequence[tuple[str, Direction]], end: Term, prefix: str) -> list[Triple]:
    nodes: list[Term] = [start, *(Var(name=f"{prefix}{i}") for i in range(1, len(steps))), end]
    return [Triple(subject=nodes[i], predicate=Iri(iri=p), object=nodes[i + 1]) if d == "out"
            else Triple(subject=nodes[i + 1], predicate=Iri(iri=p), object=nodes[i])
            for i, (p, d) in enumerate(steps)]


async def class_links(tools: Toolbox, members: Group, end: Var, entity: str, skipped: frozenset[str]) -> list[Link]:
    """The relations (one hop, else two) that link members of the set to ``entity``, most members
    first. Walked from the entity (its edges are few next to a class's members), so no member is
    missed however large the class."""
    e = compile_term(Iri(iri=entity))
    x = f"?{end.name}"
    inside = group(members)
    links: list[Link] = []
    one = (f"SELECT ?p ?d (COUNT(DISTINCT {x}) AS ?n) WHERE {{ "
           f"{{ {x} ?p {e} BIND(\"out\" AS ?d) }} UNION {{ {e} ?p {x} BIND(\"in\" AS ?d) }} "
           f"{inside} }} GROUP BY ?p ?d")
    for row in await _rows(tools, one):
        p, d = row.get("p", {}).get("value"), row.get("d", {}).get("value")
        if p and d in ("out", "in") and p not in skipped:
            links.append(Link(((p, d),), int(float(row["n"]["value"]))))  # type: ignore[arg-type]
    if links:
        return sorted(links, key=lambda k: -k.members)
    for d2 in ("out", "in"):
        second = f"?m ?p2 {e} ." if d2 == "out" else f"{e} ?p2 ?m ."
        for d1 in ("out", "in"):
            first = f"{x} ?p1 ?m ." if d1 == "out" else f"?m ?p1 {x} ."
            q = (f"SELECT ?p1 ?p2 (COUNT(DISTINCT {x}) AS ?n) WHERE {{ {second} FILTER(isIRI(?m)) {first} "
                 f"{inside} FILTER(?m != {x}) }} GROUP BY ?p1 ?p2 LIMIT 50")
            for row in await _rows(tools, q):
                p1, p2 = row.get("p1", {}).get("value"), row.get("p2", {}).get("value")
                if p1 and p2 and p1 not in skipped and p2 not in skipped:
                    links.append(Link(((p1, d1), (p2, d2)), int(float(row["n"]["value"]))))  # type: ignore[arg-type]
    return sorted(links, key=lambda k: (-k.members, len(k.steps)))


def compile_term(t: Iri) -> str:
    from kgteam.tools.query_builder import term

    return term(t)


async def _rows(tools: Toolbox, query: str) -> list[dict[str, Any]]:
    try:
        res = await tools["run_sparql"](query, limit=1000)
    except ToolError:
        return []
    return [{k: v.model_dump(exclude_none=True) for k, v in row.items()} for row in res.rows]


async def name_links(links: list[Link], words: Sequence[str], tools: Toolbox,
                     similarity: Similarity | None) -> list[Link]:
    """Each link's labels and how strongly the question's words name it, best first; a link no word
    names keeps the order of how many members it reaches."""
    if not links:
        return links
    preds = sorted({p for link in links for p, _ in link.steps})
    try:
        labels = await tools["labels_for"](preds)
    except (ToolError, KeyError):
        labels = {}
    texts = [normalise(labels.get(p, p)) for p in preds]
    units = [w for w in words if w]
    sims: dict[str, float] = {p: 0.0 for p in preds}
    said: dict[str, str] = {}
    if units and texts:
        lexical = [[lexical_similarity(u, t) for t in texts] for u in units]
        dense = await similarity(units, texts) if similarity is not None else lexical
        for j, p in enumerate(preds):
            best = max(range(len(units)), key=lambda i: max(lexical[i][j], dense[i][j]))
            sims[p] = max(lexical[best][j], dense[best][j])
            said[p] = units[best]
    for link in links:
        link.labels = tuple(labels.get(p, p) for p, _ in link.steps)
        link.strength = round(max(sims[p] for p, _ in link.steps), 4)
        top = max(link.steps, key=lambda st: sims[st[0]])[0]
        link.words = said.get(top) if link.strength >= NAMED_LINK else None
    best_members = max(k.members for k in links)
    return sorted(links, key=lambda k: (-(k.strength + 0.1 * k.members / best_members - 0.05 * len(k.steps)),
                                        len(k.steps)))


def link_confidence(links: list[Link]) -> float:
    """How sure the first link is the one meant: alone, sure; against rivals, a softmax of their
    scores (named strength plus a little for reaching more members)."""
    if len(links) <= 1:
        return 1.0
    best_members = max(k.members for k in links)
    scores = [k.strength + 0.1 * k.members / best_members - 0.05 * len(k.steps) for k in links]
    top = scores[0]
    return round(1.0 / sum(math.exp((s - top) / 0.1) for s in scores), 4)


def narrowed(members: Group, end: Var, entity: str, link: Link, prefix: str) -> Group:
    """The member group with the link to ``entity`` added (the entity itself is no member)."""
    triples = _step_triples(end, link.steps, Iri(iri=entity), prefix)
    return members.model_copy(update={"triples": [*members.triples, *triples],
                                      "filters": [*members.filters, Compare(left=end, op="!=", right=Iri(iri=entity))]})


def count_query(g: Group, end: Var) -> str:
    return f"SELECT (COUNT(DISTINCT ?{end.name}) AS ?n) WHERE {{ {group(g)} }}"


def select_text(graph: QueryGraph) -> str:
    return compile_query(graph)
