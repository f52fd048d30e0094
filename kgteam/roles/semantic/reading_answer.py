"""A query graph reading's answer: its result rows as values, the evidence it rests on, groundedness.

Triad's decision maker and advisor, and KERAG's summarizer, all run a :class:`GraphReading`
(a count, a superlative, a yes/no, a join ...) and answer from its rows; one module says how,
so that a count reads "3" with the counted set as evidence, and a yes/no "Yes" or "No", in
every playbook alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgteam.protocols.evidence import EvidenceTriple, RelationMatch
from kgteam.protocols.payloads import AnswerValue, GraphReading, RelationPaths
from kgteam.protocols.query_graph import XSD, QueryGraph
from kgteam.roles.semantic.grounding import grounded_by
from kgteam.tools.query_builder import compile_query
from kgteam.tools.types import ToolError

if TYPE_CHECKING:
    from kgteam.roles.semantic.shaped import ShapedReader, ShapedReading
    from kgteam.tools.toolbox import Toolbox
    from kgteam.tools.types import SparqlResult


@dataclass
class ReadingRun:
    """What running a reading gave: the SPARQL that ran, its variables and JSON rows (a yes/no
    is one ``answer`` row holding an ``xsd:boolean``)."""

    sparql: str
    variables: list[str] = field(default_factory=list)
    rows: list[dict[str, dict[str, Any]]] = field(default_factory=list)


def as_graph_reading(shaped: ShapedReading) -> GraphReading:
    """The payload form of the shape reader's reading (its confidence clamped to [0, 1])."""
    return GraphReading(graph=shaped.graph, confidence=min(1.0, max(0.0, shaped.confidence)),
                        explanation=shaped.explanation, matches=shaped.matches, key=shaped.key,
                        evidence_graph=shaped.evidence_graph, guess_only=shaped.guess_only,
                        kg_map=shaped.kg_map if 0.0 <= shaped.confidence <= 1.0 else None,
                        inferred=shaped.inferred)


async def read_graph(reader: ShapedReader, question: str, paths: RelationPaths, mentions: Sequence[Any],
                     trace: Any, role: str) -> GraphReading | None:
    """The shape reader's reading as a payload; None when the plain chain reading stands, or when a
    query of the reader failed (traced as ``shape_failed``: the chain answers instead)."""
    try:
        shaped = await reader.read(question, paths, mentions)
    except ToolError as exc:
        trace.record("shape_failed", role=role, error=str(exc))
        return None
    return as_graph_reading(shaped) if shaped is not None else None


def result_rows(res: SparqlResult) -> tuple[list[str], list[dict[str, dict[str, Any]]]]:
    """A SPARQL result as variables and JSON rows; an ASK result as one boolean ``answer`` row."""
    if res.boolean is not None:
        return ["answer"], [{"answer": {"type": "literal", "value": "true" if res.boolean else "false",
                                        "datatype": XSD + "boolean"}}]
    return list(res.variables), [{k: v.model_dump(exclude_none=True) for k, v in row.items()} for row in res.rows]


async def run_reading(tools: Toolbox, reading: GraphReading, limit: int) -> ReadingRun:
    """Compile the reading through the one builder and run it through the guarded ``run_sparql``
    (a :class:`ToolError` propagates: the caller says what failed)."""
    sparql = compile_query(reading.graph)
    variables, rows = result_rows(await tools["run_sparql"](sparql, limit=limit))
    return ReadingRun(sparql=sparql, variables=variables, rows=rows)


def first_column(rows: list[dict[str, dict[str, Any]]], variables: list[str]) -> list[dict[str, Any]]:
    """The distinct values of the answer variable (the first one), in row order."""
    if not rows:
        return []
    var = variables[0] if variables else next(iter(rows[0]))
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for row in rows:
        term = row.get(var)
        if term and term["value"] not in seen:
            seen.add(term["value"])
            out.append(term)
    return out


async def label_answer(tools: Toolbox, terms: list[dict[str, Any]], triples: list[EvidenceTriple]
                       ) -> list[AnswerValue]:
    """Answer values for ``terms`` and readable labels on ``triples`` (set in place), in one lookup."""
    iris = [str(t["value"]) for t in terms if t.get("type") == "uri"]
    labels = await tools["labels_for"]([*iris, *{t.subject for t in triples}, *{t.predicate for t in triples},
                                        *{t.object for t in triples if not t.object_is_literal}])
    for t in triples:
        t.subject_label = labels.get(t.subject, t.subject)
        t.predicate_label = labels.get(t.predicate, t.predicate)
        t.object_label = t.object if t.object_is_literal else labels.get(t.object, t.object)
    return [AnswerValue(label=labels.get(str(t["value"]), str(t["value"])), iri=str(t["value"]))
            if t.get("type") == "uri" else AnswerValue(label=literal_text(t)) for t in terms]


def literal_text(term: dict[str, Any]) -> str:
    """A literal as a person reads it: yes/no for booleans, numbers without a trailing ".0"."""
    value = str(term.get("value", ""))
    dt = (term.get("datatype") or "").rsplit("#", 1)[-1]
    if dt == "boolean":
        return "Yes" if value in ("true", "1") else "No"
    if dt in ("decimal", "double", "float") and value.endswith(".0"):
        return value[:-2]
    return value


def reading_grounded(graph: QueryGraph | None, triples: list[EvidenceTriple], values: list[AnswerValue],
                     matches: list[RelationMatch]) -> bool:
    """A count or a yes/no is grounded by the set it counted or checked (its triples are the KG's);
    any other answer by triples that reach every value (``grounded_by``). Relations no word named
    are said apart (``ReadingSignals.unnamed``), not read as "made up"."""
    if graph is not None and (graph.form == "ask" or graph.aggregate is not None):
        return bool(triples)
    return grounded_by(triples, values, matches)
