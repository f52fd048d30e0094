"""Typed results of the KG tools: the surface roles (and LLM function tools) see."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from kgteam.protocols.errors import KgteamError
from kgteam.protocols.evidence import EvidenceTriple


class RDFTerm(BaseModel):
    """One bound value of a SPARQL result row (SPARQL JSON results shape)."""

    type: Literal["uri", "literal", "bnode", "triple"]
    value: str
    datatype: str | None = None
    lang: str | None = None


class SparqlResult(BaseModel):
    query: str  # the query actually executed (after guards added LIMIT etc.)
    variables: list[str] = Field(default_factory=list)
    rows: list[dict[str, RDFTerm]] = Field(default_factory=list)
    boolean: bool | None = None  # ASK queries
    truncated: bool = False  # a result-size cap cut rows
    truncated_by: Literal["rows", "bytes"] | None = None  # which cap: the row count or the bytes of the values
    elapsed_s: float = 0.0


class LabelHit(BaseModel):
    """A label-index match. ``score`` is comparable within one search call only."""

    iri: str
    label: str  # the primary label
    matched: str  # the label or alias that matched
    score: float
    exact: bool = False  # normalised match equals the query text
    kind: Literal["entity", "relation"] = "entity"


class PredicateStat(BaseModel):
    predicate: str
    label: str
    direction: Literal["out", "in"]
    count: int
    # class IRIs of the other end (for IRIs) and datatype IRIs (for literals), most frequent first
    value_types: list[str] = Field(default_factory=list)


class RelationNames(BaseModel):
    """How people name a predicate beyond its label (other names) and what the KG says it means."""

    names: list[str] = Field(default_factory=list)  # the KG's skos:altLabel values
    descriptions: list[str] = Field(default_factory=list)  # rdfs:comment, schema:description
    phrases: list[str] = Field(default_factory=list)  # the KG's lexicon file: matched as whole phrases


class EntitySchema(BaseModel):
    iri: str
    label: str | None = None
    types: list[str] = Field(default_factory=list)
    outgoing: list[PredicateStat] = Field(default_factory=list)
    incoming: list[PredicateStat] = Field(default_factory=list)


class NeighborTriple(EvidenceTriple):
    """A KG triple reached from the start entity, so it can be cited as evidence as it is;
    ``hop`` 1 touches the start entity, ``direction`` says which way it was followed."""

    direction: Literal["out", "in"] = "out"
    hop: int = 1


class SimilarTriple(EvidenceTriple):
    """A KG triple whose sentence ("subject predicate object", by labels) is close to a text;
    ``score`` is the cosine similarity (comparable across calls with the same embedder)."""

    score: float


class ToolError(KgteamError):
    """A tool refused or failed; the message is safe to show a user or an LLM."""


class UnsafeQueryError(ToolError):
    """A SPARQL query that run_sparql will not execute (update, SERVICE, LOAD ...)."""
