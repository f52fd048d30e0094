"""What gets embedded: relation texts (label, aliases, description) and triples as sentences.

Read straight from the Oxigraph store, so the same code serves ``kgteam load`` (right after the
store is written) and ``kgteam embed`` (on an existing KG). Labels are the names
:mod:`kgteam.tools.naming` gives (the KG's own, or the ``rdfs:label`` the loader gave an IRI the KG
does not name); naming triples themselves are not facts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pyoxigraph as ox

from kgteam.tools.iri import SKOS_ALT_LABEL, SKOS_NOTATION, readable_name
from kgteam.tools.naming import DEFAULT_NAMING, STANDARD_NAME_PREDICATES, Naming

RDFS_COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
SKOS_DEFINITION = "http://www.w3.org/2004/02/skos/core#definition"
SCHEMA_DESCRIPTION = "http://schema.org/description"
DESCRIPTION_PREDICATES = frozenset({RDFS_COMMENT, SKOS_DEFINITION, SCHEMA_DESCRIPTION})
# Triples about names are labels, not facts: they are not verbalised as triples.
NAME_PREDICATES = frozenset({*STANDARD_NAME_PREDICATES, SKOS_ALT_LABEL, SKOS_NOTATION})
MAX_DESCRIPTION_CHARS = 300
MAX_TEXT_CHARS = 400


def _lang_rank(lang: str | None) -> int:
    lang = (lang or "").lower()
    return 0 if lang in ("", "en") else 1 if lang.startswith("en-") else 2


@dataclass
class TermTable:
    """Distinct terms of the triples (``kind``: u = IRI, l = literal, b = blank node) with labels."""

    values: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    datatypes: list[str] = field(default_factory=list)  # literal datatype or "@lang", else ""
    labels: list[str] = field(default_factory=list)
    _ids: dict[tuple[str, str, str], int] = field(default_factory=dict)

    def id_of(self, term: object, label: str) -> int:
        if isinstance(term, ox.NamedNode):
            key = ("u", term.value, "")
        elif isinstance(term, ox.Literal):
            key = ("l", term.value, f"@{term.language}" if term.language else term.datatype.value)
        else:
            key = ("b", str(getattr(term, "value", term)), "")
        got = self._ids.get(key)
        if got is None:
            got = self._ids[key] = len(self.values)
            self.kinds.append(key[0])
            self.values.append(key[1])
            self.datatypes.append(key[2])
            self.labels.append(label)
        return got

    def to_json(self) -> dict[str, list[str]]:
        return {"values": self.values, "kinds": self.kinds, "datatypes": self.datatypes, "labels": self.labels}


def fact_predicates(store: ox.Store, naming: Naming = DEFAULT_NAMING) -> list[str]:
    """The predicates facts use (naming ones left out), sorted."""
    skip = NAME_PREDICATES | set(naming.extra)
    # DISTINCT runs inside the store: ~10x faster than turning every quad into Python objects
    found = store.query("SELECT DISTINCT ?p WHERE { ?s ?p ?o }", use_default_graph_as_union=True)
    return sorted({row[0].value for row in found if isinstance(row[0], ox.NamedNode)} - skip)  # type: ignore[index]


def read_labels(store: ox.Store, naming: Naming = DEFAULT_NAMING, subjects: Iterable[str] | None = None,
                ) -> dict[str, str]:
    """IRI -> its name (:mod:`kgteam.tools.naming`), for every IRI the store names, or only for
    ``subjects`` (a relation-only build needs no entity's name: a lookup each, not a scan)."""
    best: dict[str, tuple[int, int, str]] = {}
    for predicate in naming.name_predicates:
        pred = ox.NamedNode(predicate)
        quads = store.quads_for_pattern(None, pred, None) if subjects is None else \
            (q for iri in subjects for q in store.quads_for_pattern(ox.NamedNode(iri), pred, None))
        for quad in quads:
            s, o = quad.subject, quad.object
            if not isinstance(s, ox.NamedNode) or not isinstance(o, ox.Literal) or not o.value.strip():
                continue
            cand = naming.rank(predicate, o.language, " ".join(o.value.split()))
            if s.value not in best or cand < best[s.value]:
                best[s.value] = cand
    return {iri: v for iri, (_, _, v) in best.items()}


def relation_texts(store: ox.Store, labels: dict[str, str], naming: Naming = DEFAULT_NAMING,
                   iris: list[str] | None = None) -> tuple[list[str], list[str], list[int]]:
    """Relation IRIs (sorted), and the texts that describe them with the relation each text belongs to.

    Every predicate used by a fact gets its label; its ``skos:altLabel`` values and a description
    (``rdfs:comment``, ``skos:definition``, ``schema:description``) become extra rows, so a
    question can match a relation by any of its names. ``iris``: the predicates, when known.
    """
    if iris is None:
        iris = fact_predicates(store, naming)
    predicates = set(iris)
    extra: dict[str, list[str]] = defaultdict(list)
    for pred_iri, kind in ((SKOS_ALT_LABEL, "alias"), *((d, "description") for d in sorted(DESCRIPTION_PREDICATES))):
        pred = ox.NamedNode(pred_iri)
        for quad in (q for iri in iris for q in store.quads_for_pattern(ox.NamedNode(iri), pred, None)):
            s, o = quad.subject, quad.object
            if isinstance(s, ox.NamedNode) and s.value in predicates and isinstance(o, ox.Literal) \
                    and _lang_rank(o.language) < 2:
                text = " ".join(o.value.split())
                if kind == "alias":
                    text = text.replace("_", " ")
                extra[s.value].append(text[:MAX_DESCRIPTION_CHARS])
    texts: list[str] = []
    owners: list[int] = []
    for i, iri in enumerate(iris):
        label = labels.get(iri) or readable_name(iri)
        seen = {label.lower()}
        texts.append(label)
        owners.append(i)
        for text in extra.get(iri, []):
            if text and text.lower() not in seen:
                seen.add(text.lower())
                texts.append(text)
                owners.append(i)
    return iris, texts, owners


def fact_triples(store: ox.Store, labels: dict[str, str], table: TermTable, naming: Naming = DEFAULT_NAMING,
                 *, texts: bool = True) -> Iterator[tuple[int, int, int, str]]:
    """Each fact as term ids and its sentence "subject label predicate label object label"
    (``texts=False``: "", for a caller that composes vectors from the table's labels)."""
    cache: dict[str, str] = {}

    def name(term: object) -> str:
        if isinstance(term, ox.NamedNode):
            got = cache.get(term.value)
            if got is None:
                got = cache[term.value] = labels.get(term.value) or readable_name(term.value)
            return got
        if isinstance(term, ox.Literal):
            return " ".join(term.value.split())[:MAX_DESCRIPTION_CHARS]
        return ""

    skip = NAME_PREDICATES | set(naming.extra)
    for quad in store.quads_for_pattern(None, None, None):
        p = quad.predicate
        if p.value in skip:
            continue
        s, o = quad.subject, quad.object
        sl, pl, ol = name(s), name(p), name(o)
        text = " ".join(x for x in (sl, pl, ol) if x)[:MAX_TEXT_CHARS] if texts else ""
        yield table.id_of(s, sl), table.id_of(p, pl), table.id_of(o, ol), text
