"""Which labels an IRI gets: kept from RDF literals, derived from names, or humanised local names.

Labels go both into the store (``rdfs:label``, ``skos:altLabel``) so SPARQL backends see them,
and into the label index (primary label + aliases) so entity and relation search find them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgteam.tools.iri import (
    FOAF_NAME,
    RDFS_LABEL,
    SCHEMA_NAME,
    SCHEMA_NAME_HTTPS,
    SKOS_ALT_LABEL,
    SKOS_PREF_LABEL,
    humanise,
    local_name,
)

# Primary-label predicates, most preferred first.
PRIMARY_LABEL_PREDICATES: tuple[str, ...] = (RDFS_LABEL, SKOS_PREF_LABEL, SCHEMA_NAME, SCHEMA_NAME_HTTPS, FOAF_NAME)
ALIAS_PREDICATES: tuple[str, ...] = (SKOS_ALT_LABEL,)
LABEL_PREDICATES: frozenset[str] = frozenset(PRIMARY_LABEL_PREDICATES + ALIAS_PREDICATES)
_PREDICATE_RANK = {p: i for i, p in enumerate(PRIMARY_LABEL_PREDICATES + ALIAS_PREDICATES)}

MAX_ALIASES = 16
_RELATION_SEPARATORS = re.compile(r"[/.]+")


def name_label(name: str) -> str:
    """Label of a name from a TSV/MetaQA file: underscores become spaces, whitespace collapses."""
    return humanise(name) or name


def relation_name_label(name: str) -> str:
    """Label of a relation name: ``directed_by`` -> ``directed by``, ``/music/artist/origin`` -> ``music artist origin``."""
    return humanise(_RELATION_SEPARATORS.sub(" ", name)) or name


def iri_label(iri: str, *, predicate: bool) -> str:
    """Fallback label for an RDF IRI without one: its humanised local name (camelCase split for predicates)."""
    return humanise(local_name(iri), split_camel=predicate) or iri


def _lang_rank(lang: str | None) -> int:
    if not lang:
        return 0
    lang = lang.lower()
    if lang == "en":
        return 1
    if lang.startswith("en-"):
        return 2
    return 3


@dataclass
class IriLabels:
    """Label literals found for one IRI: ``(predicate rank, language rank, text)``."""

    found: list[tuple[int, int, str]] = field(default_factory=list)

    def primary(self) -> str | None:
        ranked = [f for f in self.found if f[0] < len(PRIMARY_LABEL_PREDICATES)]
        return min(ranked)[2] if ranked else None

    def aliases(self, primary: str) -> list[str]:
        seen = {primary}
        out: list[str] = []
        for _, _, text in sorted(self.found):
            if text not in seen:
                seen.add(text)
                out.append(text)
                if len(out) >= MAX_ALIASES:
                    break
        return out


class LabelCollector:
    """Collects label literals met while streaming RDF, keyed by subject IRI."""

    def __init__(self) -> None:
        self.by_iri: dict[str, IriLabels] = {}

    def add(self, iri: str, predicate: str, text: str, lang: str | None) -> None:
        text = " ".join(text.split())
        if not text:
            return
        entry = self.by_iri.get(iri)
        if entry is None:
            entry = self.by_iri[iri] = IriLabels()
        entry.found.append((_PREDICATE_RANK[predicate], _lang_rank(lang), text))

    def get(self, iri: str) -> IriLabels | None:
        return self.by_iri.get(iri)
