"""A plugin tool: how many triples touch an entity (a KG-agnostic measure of how known it is)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from kgteam.tools.kg_tools import KGTools
from kgteam.tools.sparql_guard import sparql_iri


async def entity_degree(kg: KGTools,
                        iri: Annotated[str, Field(min_length=1, description="absolute IRI of an entity")]) -> int:
    """Count the triples in which an entity is the subject or the object."""
    node = sparql_iri(iri)
    result = await kg.run_sparql(f"SELECT (COUNT(*) AS ?n) WHERE {{ {{ {node} ?p ?o }} UNION {{ ?s ?p {node} }} }}")
    return int(result.rows[0]["n"].value) if result.rows else 0
