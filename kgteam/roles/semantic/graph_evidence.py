"""The triples a query graph reading rests on: every pattern of its graph, bound by the rows.

For a count or an ordering that is the set counted or ordered; for a yes/no, the relation's
values at the named entity (without the check against the other entity, so a "no" shows what
the KG holds instead); for an "or", the triples along each alternative.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgteam.protocols.evidence import EvidenceTriple
from kgteam.protocols.payloads import GraphReading
from kgteam.protocols.query_graph import Group, Iri, Lit, QueryGraph, Var
from kgteam.tools.query_builder import compile_query
from kgteam.tools.types import RDFTerm, ToolError

if TYPE_CHECKING:
    from kgteam.tools.toolbox import Toolbox


def _evidence_group(reading: GraphReading) -> tuple[Group, QueryGraph | None]:
    graph = reading.evidence_graph or reading.graph
    if graph.form != "ask":
        return graph.where, graph
    where = graph.where.not_exists[0] if graph.where.not_exists and not graph.where.triples else graph.where
    return where.model_copy(update={"values": {}}), None


async def graph_evidence(tools: Toolbox, reading: GraphReading, limit: int) -> list[EvidenceTriple]:
    where, graph = _evidence_group(reading)
    out: list[EvidenceTriple] = []
    seen: set[tuple[str, str, str]] = set()
    for group in _alternatives(where):
        if len(out) >= limit:
            break
        out += await _group_triples(tools, group, graph, limit - len(out), seen)
    return out[:limit]


def _alternatives(where: Group) -> list[Group]:
    """The group itself, or for an "or" each alternative joined with the rest: the triples that
    reach an answer lie along one alternative or the other."""
    if not where.unions:
        return [where]
    rest = where.model_copy(update={"unions": where.unions[1:]})
    return [sub for alt in where.unions[0]
            for sub in _alternatives(rest.model_copy(update={"triples": [*rest.triples, *alt.triples],
                                                             "filters": [*rest.filters, *alt.filters]}))]


async def _group_triples(tools: Toolbox, where: Group, graph: QueryGraph | None, limit: int,
                         seen: set[tuple[str, str, str]]) -> list[EvidenceTriple]:
    triples = where.triples
    names = sorted({t.name for tr in triples for t in (tr.subject, tr.object) if isinstance(t, Var)})
    if not triples:
        return []
    select = QueryGraph(answer=[Var(name=n) for n in names], where=where,
                        order=graph.order if graph is not None and graph.limit != 1 else [], limit=limit * 2)
    try:
        res = await tools["run_sparql"](compile_query(select), limit=limit * 2)
    except ToolError:
        return []
    out: list[EvidenceTriple] = []
    for row in res.rows:
        for tr in triples:
            s, o = _bound(tr.subject, row), _bound(tr.object, row)
            if s is None or o is None or not isinstance(tr.predicate, Iri):
                continue
            key = (s.value, tr.predicate.iri, o.value)
            if key in seen:
                continue
            seen.add(key)
            lit = o.type == "literal"
            out.append(EvidenceTriple(subject=s.value, predicate=tr.predicate.iri, object=o.value,
                                      object_is_literal=lit, object_datatype=o.datatype if lit else None))
        if len(out) >= limit:
            break
    return out[:limit]


def _bound(term: Var | Iri | Lit, row: dict[str, RDFTerm]) -> RDFTerm | None:
    if isinstance(term, Var):
        return row.get(term.name)
    if isinstance(term, Iri):
        return RDFTerm(type="uri", value=term.iri)
    return RDFTerm(type="literal", value=term.value, datatype=term.datatype)
