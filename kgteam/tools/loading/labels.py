"""Which labels an IRI gets in the label index, and which label triples the loader adds.

What an IRI is called is decided by :mod:`kgteam.tools.naming`, the definition every reader of
names shares. The store keeps the KG's own naming triples as they are (``schema:name``,
``foaf:name`` ... are not copied into ``rdfs:label``: readers ask for every naming predicate, on
the embedded store and on endpoints alike). The loader adds triples only for names that exist
nowhere in the input: ``rdfs:label`` for an IRI the KG does not name (its humanised local name,
or the name a MetaQA/TSV line or a ``--labels`` file gives), ``skos:altLabel`` for a raw
MetaQA/TSV name that differs from its label, ``skos:notation`` for an id named by a labels file.
Every IRI's name and aliases go into the label index, so entity and relation search find them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgteam.tools.iri import humanise
from kgteam.tools.naming import DEFAULT_NAMING, Naming, fallback_name

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
    return fallback_name(iri, predicate=predicate)


@dataclass
class IriLabels:
    """Name literals found for one IRI: ``(predicate, text, language)``."""

    naming: Naming
    found: list[tuple[str, str, str | None]] = field(default_factory=list)

    def primary(self) -> str | None:
        return self.naming.best(self.found)

    def aliases(self, primary: str) -> list[str]:
        return self.naming.aliases(self.found, primary, MAX_ALIASES)


class LabelCollector:
    """Collects name literals met while streaming RDF, keyed by subject IRI."""

    def __init__(self, naming: Naming = DEFAULT_NAMING) -> None:
        self.naming = naming
        self.by_iri: dict[str, IriLabels] = {}

    def add(self, iri: str, predicate: str, text: str, lang: str | None) -> None:
        text = " ".join(text.split())
        if not text:
            return
        entry = self.by_iri.get(iri)
        if entry is None:
            entry = self.by_iri[iri] = IriLabels(self.naming)
        entry.found.append((predicate, text, lang))

    def get(self, iri: str) -> IriLabels | None:
        return self.by_iri.get(iri)
