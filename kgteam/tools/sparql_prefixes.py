"""Declare the prefixes a query uses but does not declare, from a KG's own (its data files' ``@prefix``).

A person who loaded a Turtle file with ``@prefix ex: <...>`` writes ``ex:Thing`` in a query, as in
the file. Only prefixes the query really uses (a prefixed name outside strings, IRIs and comments)
and does not declare itself are added; the query's own declarations always win. The result is an
ordinary query: it still goes through the guard.
"""

from __future__ import annotations

from collections.abc import Mapping

from kgteam.tools.sparql_guard import sparql_iri
from kgteam.tools.sparql_text import tokens
from kgteam.tools.types import ToolError


def missing_prefixes(query: str, known: Mapping[str, str]) -> dict[str, str]:
    """The prefixes of ``known`` that ``query`` uses without declaring them, in order of first use."""
    toks = tokens(query)
    declared = {toks[i + 1].text.partition(":")[0] for i, t in enumerate(toks[:-1])
                if t.kind == "word" and t.text.upper() == "PREFIX" and toks[i + 1].kind == "pname"}
    used: dict[str, str] = {}
    for t in toks:
        if t.kind == "pname":
            name = t.text.partition(":")[0]
            if name not in declared and name in known:
                used.setdefault(name, known[name])
    return used


def with_prefixes(query: str, known: Mapping[str, str]) -> str:
    """``query`` with ``PREFIX`` lines for the prefixes it needs from ``known`` (unchanged if none).
    A prefix IRI that could not be written safely is left out (the guard then names the prefix)."""
    lines = []
    for name, iri in missing_prefixes(query, known).items():
        try:
            lines.append(f"PREFIX {name}: {sparql_iri(iri)}")
        except ToolError:
            continue
    return "\n".join([*lines, query]) if lines else query
