"""Relation paths from a topic entity: what the KG offers at each hop, read through the tools.

Hop 1 comes from ``entity_schema`` (predicates in and out, with their value types); deeper hops
from one grouped SPARQL query per path prefix and direction over a bounded sample of the
prefix's end nodes, so hubs stay cheap. Paths are kept as (predicate, direction) steps; the
scorer decides which are worth walking further.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from kgteam.protocols.query_graph import Compare, Group, Iri, QueryGraph, Triple, Var
from kgteam.tools.iri import readable_name
from kgteam.tools.naming import DEFAULT_NAMING
from kgteam.tools.query_builder import compile_query, condition, group
from kgteam.tools.types import ToolError
from kgteam.tools.vocabulary import SCHEMA_PREDICATES

if TYPE_CHECKING:
    from kgteam.tools.toolbox import Toolbox

# predicates that name or type things, or describe the schema (subclasses, a Wikibase property's
# declarations, redirects): they say nothing about how two instances relate
NAMING_PREDICATES = frozenset({
    *DEFAULT_NAMING.all_predicates,  # names and aliases (kgteam.tools.naming)
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
    "http://www.w3.org/2002/07/owl#sameAs",
    "http://www.w3.org/2000/01/rdf-schema#comment",
    "http://schema.org/description",
    *SCHEMA_PREDICATES,  # kgteam.tools.vocabulary
})
Direction = Literal["out", "in"]
_FRONTIER_SAMPLE = 400


@dataclass(frozen=True)
class PathStep:
    predicate: str
    direction: Direction
    label: str

    @property
    def key(self) -> str:
        return f"{self.direction}|{self.predicate}"


@dataclass
class RelationPath:
    entity: str
    steps: tuple[PathStep, ...]
    literal_end: bool = False  # the last step ends at literals (no further hop)
    value_types: list[str] = field(default_factory=list)
    count: int | None = None  # triples the last step holds (from a sample of the prefix's end nodes past hop 1)

    @property
    def key(self) -> str:
        return "|".join([self.entity, *(s.key for s in self.steps)])


@dataclass(frozen=True)
class ChainConvention:
    """Which walks a chain's answers count: what a KG's question writers meant, learned from its
    examples (``TrainedReader.convention``); the default is plain English.

    ``drop_topic``: the topic is never an answer ("the directors of the films X wrote" leaves X
    out even when X directed one). ``free_walks``: a step that walks the one before it back may
    return to the node it came from ("the directors of the films that share actors with X" counts
    X's own director)."""

    drop_topic: bool = False
    free_walks: bool = False

    @property
    def name(self) -> str:
        return next(k for k, v in CHAIN_CONVENTIONS.items() if v == self)


CHAIN_CONVENTIONS: dict[str, ChainConvention] = {
    "default": ChainConvention(), "no_topic": ChainConvention(drop_topic=True),
    "free_walks": ChainConvention(free_walks=True), "free_walks_no_topic": ChainConvention(True, True),
}
PLAIN = CHAIN_CONVENTIONS["default"]


def chain_graph(entity: str, steps: Sequence[tuple[str, str]], *, all_vars: bool = False,
                prefix: str = "x", names: Sequence[str] | None = None,
                convention: ChainConvention = PLAIN) -> QueryGraph:
    """A chain of ``(predicate, direction)`` steps from ``entity`` as a query graph: chains are one
    case of the query graph, compiled by the one builder.

    A step that walks the previous one back ("bridges of X's builder" -> "other bridges of that
    builder") excludes the node it came from: asking what *else* shares it. Otherwise the topic
    itself is a fair answer ("the child of X's parent" may be X). A KG's examples may teach
    otherwise (``convention``).
    """
    names = list(names) if names is not None else [f"{prefix}{i}" for i in range(1, len(steps) + 1)]
    nodes: list[Iri | Var] = [Iri(iri=entity), *(Var(name=n) for n in names)]
    triples = [Triple(subject=nodes[i - 1], predicate=Iri(iri=pred), object=nodes[i]) if direction == "out"
               else Triple(subject=nodes[i], predicate=Iri(iri=pred), object=nodes[i - 1])
               for i, (pred, direction) in enumerate(steps, start=1)]
    filters = ([] if convention.free_walks else
               [Compare(left=nodes[i], op="!=", right=nodes[i - 2]) for i in walked_back(list(steps))])
    last = Compare(left=nodes[-1], op="!=", right=nodes[0])
    if convention.drop_topic and last not in filters:
        filters.append(last)
    answer = [n for n in nodes[1:] if isinstance(n, Var)] if all_vars else [nodes[-1]]
    return QueryGraph(answer=answer, where=Group(triples=triples, filters=filters),  # type: ignore[arg-type]
                      topics=[entity])


def chain_patterns(entity: str, steps: tuple[PathStep, ...] | list[PathStep], *, prefix: str = "x") -> str:
    """``<e> <p1> ?x1 . ?x1 <p2> ?x2 .`` with each step's direction (IRIs checked)."""
    graph = chain_graph(entity, [(s.predicate, s.direction) for s in steps], prefix=prefix)
    return group(graph.where.model_copy(update={"filters": []}))


def path_query(path: RelationPath, *, all_vars: bool = False, convention: ChainConvention = PLAIN) -> str:
    """SELECT of the path's end values (every chain variable with ``all_vars``), through the builder."""
    return compile_query(chain_graph(path.entity, [(s.predicate, s.direction) for s in path.steps],
                                     all_vars=all_vars, convention=convention))


def walked_back(steps: Sequence[tuple[str, str]]) -> list[int]:
    """The 1-based numbers of the (predicate, direction) steps that walk the step before them back:
    step ``i`` then asks what *else* shares node ``i - 2``, so that node is left out of its answers.
    One rule for every query builder (the layer's paths, Triad's templates)."""
    return [i for i in range(2, len(steps) + 1)
            if steps[i - 1][0] == steps[i - 2][0] and steps[i - 1][1] != steps[i - 2][1]]


def reversal_filters(path: RelationPath) -> str:
    """``FILTER(?x2 != <e>)`` for every step that walks the one before it back."""
    graph = chain_graph(path.entity, [(s.predicate, s.direction) for s in path.steps])
    return " ".join(condition(c) for c in graph.where.filters)


async def skipped_predicates(tools: Toolbox) -> frozenset[str]:
    """What no path walks: naming and schema predicates, and the KG's own typing predicates
    (Wikidata's "instance of" is its ``rdf:type``)."""
    profile = getattr(tools, "profile", None)
    if profile is None:
        return NAMING_PREDICATES
    try:
        typing = await profile.typing()
    except ToolError:
        return NAMING_PREDICATES
    return NAMING_PREDICATES | set(typing.type_predicates) | set(typing.subclass_predicates)


async def first_hops(tools: Toolbox, entity: str) -> list[RelationPath]:
    schema = await tools["entity_schema"](entity)
    skipped = await skipped_predicates(tools)
    out: list[RelationPath] = []
    for stat in [*schema.outgoing, *schema.incoming]:
        if stat.predicate in skipped:
            continue
        literal = stat.direction == "out" and bool(stat.value_types) and all(
            t.startswith("http://www.w3.org/2001/XMLSchema#") or t.endswith("#langString") for t in stat.value_types)
        out.append(RelationPath(entity, (PathStep(stat.predicate, stat.direction, stat.label or
                                                  readable_name(stat.predicate)),),
                                literal_end=literal, value_types=list(stat.value_types), count=stat.count))
    return out


async def extend(tools: Toolbox, path: RelationPath) -> list[RelationPath]:
    """Every one-step extension of ``path`` the KG holds (from a sample of its end nodes)."""
    if path.literal_end:
        return []
    n = len(path.steps)
    end = f"?x{n}"
    inner = (f"{{ SELECT DISTINCT {end} WHERE {{ {chain_patterns(path.entity, path.steps)} "
             f"{reversal_filters(path)} FILTER(isIRI({end})) }} LIMIT {_FRONTIER_SAMPLE} }}")
    found: dict[str, tuple[PathStep, bool, int | None]] = {}
    skipped = await skipped_predicates(tools)
    for direction, pattern in (("out", f"{end} ?p ?v ."), ("in", f"?v ?p {end} .")):
        q = (f"SELECT ?p (SAMPLE(isLiteral(?v)) AS ?lit) (COUNT(?v) AS ?n) WHERE {{ {inner} {pattern} }} "
             "GROUP BY ?p LIMIT 200")
        try:
            res = await tools["run_sparql"](q)
        except ToolError:
            continue
        for row in res.rows:
            p = row.get("p")
            if p is None or p.value in skipped:
                continue
            lit = row.get("lit")
            literal = direction == "out" and lit is not None and lit.value in ("true", "1")
            step = PathStep(p.value, direction, p.value)  # type: ignore[arg-type]
            n = row.get("n")
            found.setdefault(step.key, (step, literal, int(n.value) if n is not None and n.value.isdigit() else None))
    if not found:
        return []
    labels = await tools["labels_for"](sorted({s.predicate for s, _, _ in found.values()}))
    out = []
    for step, literal, count in found.values():
        named = PathStep(step.predicate, step.direction, labels.get(step.predicate) or readable_name(step.predicate))
        out.append(RelationPath(path.entity, (*path.steps, named), literal_end=literal, count=count))
    return out

