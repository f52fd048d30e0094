"""Payload kinds exchanged on the conversation bus.

Every payload has a literal ``kind`` so routing, persistence and replay can recover the type
from JSON alone. Keep payloads small and explicit; add fields, never repurpose them.
Plugins may add kinds with :func:`register_payload`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from kgteam.protocols.evidence import Evidence, EvidenceDocument, EvidenceTriple, Usage


class Payload(BaseModel):
    """Base of all payloads; ``kind`` is the routing key."""

    kind: str


class Question(Payload):
    kind: Literal["question"] = "question"
    text: str
    original_text: str | None = None  # the user's words before the contextualizer rewrote them


class RouteDecision(Payload):
    kind: Literal["route_decision"] = "route_decision"
    route: str  # e.g. "kg", "web"
    reason: str = ""


class TriplePattern(BaseModel):
    """One pattern such as ``<?film, directed by, Joel Zwick>``; ``?x`` marks an unknown."""

    subject: str
    predicate: str
    object: str


class TriplePatterns(Payload):
    kind: Literal["triple_patterns"] = "triple_patterns"
    patterns: list[TriplePattern]


AnswerTypeName = Literal["resource", "number", "date", "boolean", "string"]


class AnswerType(Payload):
    kind: Literal["answer_type"] = "answer_type"
    type: AnswerTypeName
    is_list: bool = True


class SparqlTemplate(Payload):
    """A SPARQL skeleton with placeholders (``<E0>``, ``<R0>`` ...), never real IRIs."""

    kind: Literal["sparql_template"] = "sparql_template"
    template: str
    entity_placeholders: list[str] = Field(default_factory=list)
    relation_placeholders: list[str] = Field(default_factory=list)


class Candidate(BaseModel):
    iri: str
    label: str
    score: float = 0.0
    source: str = ""  # "search", "traversal", "llm", "fallback"


class EntityCandidates(Payload):
    kind: Literal["entity_candidates"] = "entity_candidates"
    mention: str
    placeholder: str | None = None
    candidates: list[Candidate]


class RelationCandidates(Payload):
    kind: Literal["relation_candidates"] = "relation_candidates"
    phrase: str
    placeholder: str | None = None
    candidates: list[Candidate]


class CandidateQuery(BaseModel):
    sparql: str
    bindings: dict[str, str] = Field(default_factory=dict)  # placeholder -> IRI
    row_count: int | None = None
    error: str | None = None


class QueryCandidates(Payload):
    kind: Literal["query_candidates"] = "query_candidates"
    queries: list[CandidateQuery]
    selected: int | None = None


class QueryResult(Payload):
    kind: Literal["query_result"] = "query_result"
    sparql: str
    variables: list[str] = Field(default_factory=list)
    rows: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None
    triples: list[EvidenceTriple] = Field(default_factory=list)  # the facts the rows rest on


class RetrievalPlan(Payload):
    kind: Literal["retrieval_plan"] = "retrieval_plan"
    topic_entities: list[str]  # IRIs
    relations_per_hop: list[list[str]] = Field(default_factory=list)  # predicate IRIs per hop
    hops: int = 1
    sufficient: bool = False


class Subgraph(Payload):
    kind: Literal["subgraph"] = "subgraph"
    triples: list[EvidenceTriple]
    source: str = ""


class PseudoGraph(Payload):
    kind: Literal["pseudo_graph"] = "pseudo_graph"
    triples: list[TriplePattern]
    code: str = ""


class Axiom(Payload):
    kind: Literal["axiom"] = "axiom"
    text: str
    premises: list[str] = Field(default_factory=list)


class MissingInfo(Payload):
    kind: Literal["missing_info"] = "missing_info"
    description: str
    next_entity: str | None = None


class Documents(Payload):
    kind: Literal["documents"] = "documents"
    documents: list[EvidenceDocument]


class Grade(Payload):
    kind: Literal["grade"] = "grade"
    grader: str
    verdict: bool
    reason: str = ""


class RetrySignal(Payload):
    """Typed request to redo an earlier phase; the supervisor bounds these by ``max_retries``."""

    kind: Literal["retry_signal"] = "retry_signal"
    phase: str  # which phase to redo, e.g. "parsing", "linking", "query"
    reason: str  # "empty_result", "query_error", "grader_no", ...
    hint: str = ""
    attempt: int = 1


BudgetName = Literal[
    "max_depth", "max_breadth", "max_retries", "max_turns", "max_llm_calls", "max_tokens", "timeout_s"
]


class BudgetExceeded(Payload):
    kind: Literal["budget_exceeded"] = "budget_exceeded"
    budget: BudgetName
    limit: float
    used: float


AnswerStatus = Literal["answered", "unknown", "refused", "error"]


class AnswerValue(BaseModel):
    label: str
    iri: str | None = None


class Answer(Payload):
    """The final word of a run: text, values, evidence, cost and why the run stopped."""

    kind: Literal["answer"] = "answer"
    text: str
    values: list[AnswerValue] = Field(default_factory=list)
    status: AnswerStatus = "answered"
    stopped_by: str = "done"  # "done" or a budget name, "cancelled", "error"
    grounded: bool = False
    evidence: Evidence = Field(default_factory=Evidence)
    cost: Usage = Field(default_factory=Usage)
    fallbacks: list[str] = Field(default_factory=list)  # decisions taken by deterministic fallback
    error: str | None = None


PAYLOAD_TYPES: dict[str, type[Payload]] = {
    cls.model_fields["kind"].default: cls
    for cls in (
        Question, RouteDecision, TriplePatterns, AnswerType, SparqlTemplate, EntityCandidates,
        RelationCandidates, QueryCandidates, QueryResult, RetrievalPlan, Subgraph, PseudoGraph,
        Axiom, MissingInfo, Documents, Grade, RetrySignal, BudgetExceeded, Answer,
    )
}


def register_payload(cls: type[Payload]) -> type[Payload]:
    """Register a plugin payload kind so envelopes carrying it can be decoded."""
    kind = cls.model_fields["kind"].default
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"{cls.__name__} needs a literal default for 'kind'")
    existing = PAYLOAD_TYPES.get(kind)
    if existing is not None and existing is not cls:
        raise ValueError(f"payload kind {kind!r} is already registered by {existing.__name__}")
    PAYLOAD_TYPES[kind] = cls
    return cls


def payload_from_dict(data: dict[str, Any]) -> Payload:
    kind = data.get("kind")
    cls = PAYLOAD_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown payload kind {kind!r}; known: {sorted(PAYLOAD_TYPES)}")
    return cls.model_validate(data)
