"""What an IRI is called: the one definition every reader of names uses.

The loader and label index, ``labels_for`` (so evidence, traces, answers, the web chat and any
other display), the eval grader and ``kgteam sparql`` all ask this module, on the embedded store
and on SPARQL endpoints alike, so a KG named with ``schema:name`` reads the same as one named
with ``rdfs:label``. A name is a literal of a naming predicate: the predicates the user named
first (``kgteam load --label-predicate``, a team file's ``kg.label_predicates``), then
``rdfs:label``, ``skos:prefLabel``, ``schema:name`` (http and https), ``foaf:name``,
``dcterms:title``; within one predicate untagged or English first. ``skos:altLabel`` values are
aliases. An IRI the KG does not name is called by its humanised local name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

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
from kgteam.tools.sparql_guard import sparql_iri
from kgteam.tools.vocabulary import DECLARING_PREDICATES

DCTERMS_TITLE = "http://purl.org/dc/terms/title"
# Naming predicates, most preferred first.
STANDARD_NAME_PREDICATES: tuple[str, ...] = (RDFS_LABEL, SKOS_PREF_LABEL, SCHEMA_NAME, SCHEMA_NAME_HTTPS, FOAF_NAME,
                                             DCTERMS_TITLE)
ALIAS_PREDICATES: tuple[str, ...] = (SKOS_ALT_LABEL,)
_IRI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]+$")
_CAMEL_PREDICATE_RE = re.compile(r"^[a-z][a-z0-9]*[A-Z]")


def lang_rank(lang: str | None, preferred: str | None = None) -> int:
    """Which language's name is shown: the preferred language (``--lang``) when one is set, then
    untagged, then English, then regional English, then any other."""
    if preferred and lang:
        low = lang.lower()
        if low == preferred:
            return -2
        if low.startswith(preferred + "-"):
            return -1
    if not lang:
        return 0
    lang = lang.lower()
    if lang == "en":
        return 1
    if lang.startswith("en-"):
        return 2
    return 3


def check_lang(lang: str | None) -> str | None:
    """A label language tag the user asked for (``--lang de``), checked and lower-cased; None: the default."""
    if lang is None or not lang.strip():
        return None
    text = lang.strip().lower()
    if not re.fullmatch(r"[a-z]{2,8}(-[a-z0-9]{1,8})*", text):
        raise ValueError(f"label language {lang!r} is not a language tag (e.g. en, de, pt-br)")
    return text


def fallback_name(iri: str, *, predicate: bool | None = None) -> str:
    """What an IRI the KG does not name is called: its humanised local name (``ex:Ridley_Scott`` ->
    ``Ridley Scott``); a predicate's camelCase is split and lower-cased (``ex:releaseYear`` ->
    ``release year``). ``predicate=None`` guesses from the shape (a camelCase name starting lower case)."""
    name = local_name(iri)
    if predicate is None:
        predicate = bool(_CAMEL_PREDICATE_RE.match(name))
    return humanise(name, split_camel=predicate) or iri


def check_name_predicate(iri: str) -> str:
    """An IRI the user names as a naming predicate, checked (absolute, nothing IRI-illegal)."""
    text = iri.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    if not _IRI_RE.match(text):
        raise ValueError(f"label predicate {iri!r} is not an absolute IRI (e.g. http://example.org/fullName)")
    return text


@dataclass(frozen=True)
class Naming:
    """The naming predicates of one KG: the user's own (``extra``, preferred) and the standard ones;
    ``lang``: the label language shown first (None: untagged, then English, then any)."""

    extra: tuple[str, ...] = ()
    lang: str | None = None

    @classmethod
    def with_predicates(cls, predicates: Iterable[str] | None, lang: str | None = None) -> Naming:
        """A naming with the user's predicates (checked, duplicates and standard ones dropped)."""
        seen: list[str] = []
        for p in predicates or ():
            iri = check_name_predicate(p)
            if iri not in seen and iri not in STANDARD_NAME_PREDICATES and iri not in ALIAS_PREDICATES:
                seen.append(iri)
        return cls(tuple(seen), check_lang(lang))

    def in_language(self, lang: str | None) -> Naming:
        """The same naming with another preferred label language."""
        return Naming(self.extra, check_lang(lang))

    # made once per naming: a load asks them for each of millions of name literals
    @cached_property
    def name_predicates(self) -> tuple[str, ...]:
        return (*self.extra, *STANDARD_NAME_PREDICATES)

    @cached_property
    def all_predicates(self) -> tuple[str, ...]:
        """Every predicate whose literals name something (names, then aliases)."""
        return (*self.name_predicates, *ALIAS_PREDICATES)

    @cached_property
    def _name_set(self) -> frozenset[str]:
        return frozenset(self.name_predicates)

    @cached_property
    def _naming_set(self) -> frozenset[str]:
        return frozenset(self.all_predicates)

    def is_naming(self, predicate: str) -> bool:
        return predicate in self._naming_set

    def is_alias(self, predicate: str) -> bool:
        return predicate in ALIAS_PREDICATES

    def rank(self, predicate: str, lang: str | None, text: str) -> tuple[int, int, str]:
        """Sort key of one name literal: lower is preferred (predicate, then language, then text)."""
        preds = self.all_predicates
        return (preds.index(predicate) if predicate in self._naming_set else len(preds), lang_rank(lang, self.lang),
                text)

    def best(self, found: Iterable[tuple[str, str, str | None]]) -> str | None:
        """The name among ``(predicate, text, lang)`` literals of one IRI; None when none is a name."""
        names = self._name_set
        found = found if isinstance(found, list | tuple) else list(found)
        if len(found) == 1:  # most IRIs have one name literal: nothing to rank (a load labels millions)
            p, text, _lang = found[0]
            text = " ".join(text.split())
            return text if text and p in names else None
        if self.lang is not None:  # the preferred language beats a preferred predicate in another one
            ranked = [(lang_rank(lang, self.lang) >= 0, *self.rank(p, lang, " ".join(text.split())))
                      for p, text, lang in found if p in names and text.strip()]
            return min(ranked)[3] if ranked else None
        ranked = [self.rank(p, lang, " ".join(text.split())) for p, text, lang in found
                  if p in names and text.strip()]
        return min(ranked)[2] if ranked else None

    def aliases(self, found: Iterable[tuple[str, str, str | None]], primary: str, limit: int = 16) -> list[str]:
        """Every other name and alias of one IRI, preferred first, without ``primary``."""
        naming = self._naming_set
        found = found if isinstance(found, list | tuple) else list(found)
        if len(found) == 1:  # nothing to rank
            p, t, _lang = found[0]
            text = " ".join(t.split())
            return [text] if text and text != primary and p in naming else []
        seen = {primary}
        out: list[str] = []
        for _, _, text in sorted(self.rank(p, lang, " ".join(t.split())) for p, t, lang in found if p in naming):
            if text and text not in seen:
                seen.add(text)
                out.append(text)
                if len(out) >= limit:
                    break
        return out

    def names_query(self, values: str) -> str:
        """SPARQL for every name and alias literal of the IRIs in ``values`` (``<a> <b> ...``): their
        triples filtered on the naming predicates. Plain SPARQL 1.1, so any endpoint answers it; a
        second ``VALUES ?p`` instead of the filter was 70x slower on Oxigraph (benchmarks/labels_for.py)."""
        preds = ", ".join(sparql_iri(p) for p in self.all_predicates)
        return f"SELECT ?s ?p ?l WHERE {{ VALUES ?s {{ {values} }} ?s ?p ?l FILTER(?p IN ({preds}) && isLiteral(?l)) }}"

    def declared_names_query(self, values: str) -> str:
        """SPARQL for the names of the nodes that *declare* the IRIs in ``values``: a Wikibase
        property entity names its direct, statement and qualifier predicates (``wd:P36 rdfs:label
        "capital" ; wikibase:directClaim wdt:P36``), which carry no name of their own."""
        decl = ", ".join(sparql_iri(p) for p in DECLARING_PREDICATES)
        preds = ", ".join(sparql_iri(p) for p in self.all_predicates)
        return (f"SELECT ?s ?p ?l WHERE {{ VALUES ?s {{ {values} }} ?d ?decl ?s . FILTER(?decl IN ({decl})) "
                f"?d ?p ?l FILTER(?p IN ({preds}) && isLiteral(?l)) }}")

    def to_manifest(self) -> list[str]:
        return list(self.extra)


DEFAULT_NAMING = Naming()


def naming_of(manifest: dict | None, extra: Sequence[str] = (), lang: str | None = None) -> Naming:
    """The naming a KG folder records (``manifest.json``'s ``label_predicates`` and ``lang``), plus
    ``extra``; ``lang`` (``--lang``) overrides the recorded language."""
    recorded = list((manifest or {}).get("label_predicates") or [])
    return Naming.with_predicates([*extra, *recorded], lang or (manifest or {}).get("lang"))
