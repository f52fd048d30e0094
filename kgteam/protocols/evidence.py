"""Evidence records: what an answer rests on, so every answer can be checked against the KG."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Usage(BaseModel):
    """Cost accounting; summed over a run so every answer reports what it cost."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            seconds=self.seconds + other.seconds,
        )


class EvidenceTriple(BaseModel):
    """A KG triple with IRIs *and* labels: IRIs make it checkable, labels make it readable."""

    subject: str
    predicate: str
    object: str
    object_is_literal: bool = False
    object_datatype: str | None = None
    subject_label: str | None = None
    predicate_label: str | None = None
    object_label: str | None = None
    kg: str | None = None  # which KG(s) of a several-KG team state it (None: the team reads one KG)

    def readable(self) -> str:
        s = self.subject_label or self.subject
        p = self.predicate_label or self.predicate
        o = self.object_label or self.object
        return f"({s}, {p}, {o})"


class CheckedTriple(EvidenceTriple):
    """A believed triple as the answer shows it beside the facts: ``unverified`` ones are no fact."""

    status: str = "unverified"  # verified, replaced, added, deleted or unverified (PG&AKV's fixer)


class EvidenceQuery(BaseModel):
    """A SPARQL query that was executed, and how many rows it returned."""

    sparql: str
    row_count: int = 0
    endpoint: str | None = None
    error: str | None = None


class EvidenceDocument(BaseModel):
    """A retrieved document (web search or local corpus)."""

    id: str
    text: str
    title: str | None = None
    source: str | None = None
    url: str | None = None
    score: float = 0.0


class EvidenceAxiom(BaseModel):
    """A commonsense rule (R3) and the atomic premises it needs grounded; ``query``: the claim it
    decides as an ASK query (empty when the rule has none)."""

    text: str
    premises: list[str] = Field(default_factory=list)
    query: str = ""


class RelationMatch(BaseModel):
    """Which words of the question named which relation of the answer's path (None: unnamed)."""

    predicate: str
    label: str
    direction: str = "out"
    words: str | None = None
    strength: float = 0.0
    # set when the KG's trained reader chose the path: the bank examples that taught it (maybe none)
    learned_from: list[str] | None = None

    def explain(self) -> str:
        arrow = "->" if self.direction == "out" else "<-"
        said = f'"{self.words}"' if self.words else "(unnamed)"
        return f"{said} ~ {arrow}{self.label}"


class Evidence(BaseModel):
    matches: list[RelationMatch] = Field(default_factory=list)  # question words -> path relations
    triples: list[EvidenceTriple] = Field(default_factory=list)
    queries: list[EvidenceQuery] = Field(default_factory=list)
    documents: list[EvidenceDocument] = Field(default_factory=list)
    axioms: list[EvidenceAxiom] = Field(default_factory=list)
    reasoning: list[str] = Field(default_factory=list)  # step-by-step statements citing triples ("t3") by position
    pseudo_graph: list[CheckedTriple] = Field(default_factory=list)  # PG&AKV: the belief, each triple's check

    def is_empty(self) -> bool:
        return not (self.triples or self.queries or self.documents or self.axioms)
