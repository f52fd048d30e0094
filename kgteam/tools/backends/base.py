"""Small protocols the KG tools are written against, so every backend runs the same tool suite."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from kgteam.tools.types import LabelHit, SparqlResult

LabelKind = Literal["entity", "relation"]


@runtime_checkable
class TripleStore(Protocol):
    """Executes read-only SPARQL. Queries arrive already checked by ``sparql_guard``."""

    name: str

    def query(self, sparql: str, *, timeout_s: float, max_rows: int, max_bytes: int = ...) -> SparqlResult:
        """At most ``max_rows`` rows and ``max_bytes`` of values (``truncated_by`` says which cut)."""
        ...

    def close(self) -> None: ...


@dataclass
class LabelDoc:
    """One indexable thing: an entity or relation IRI with its labels (primary first)."""

    iri: str
    kind: LabelKind
    labels: list[str]
    aliases: list[str] = field(default_factory=list)


@runtime_checkable
class LabelIndex(Protocol):
    def search(self, text: str, k: int, kind: LabelKind = "entity") -> list[LabelHit]: ...

    def close(self) -> None: ...


class LabelIndexWriter(Protocol):
    def add(self, doc: LabelDoc) -> None: ...

    def commit(self) -> None: ...
