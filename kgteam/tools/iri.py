"""Deterministic, safe IRIs for knowledge graphs loaded from non-RDF files, and readable names back.

Names from TSV/MetaQA files can hold anything (spaces, quotes, ``>``, unicode). Percent-encoding
every character outside the unreserved set gives an IRI that is valid in N-Triples and in SPARQL
``<...>`` without further escaping, and is the same on every load: gold SPARQL written once
(e.g. MetaQA ``dev_consistent.jsonl``) keeps matching.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

ENTITY_SEGMENT = "e/"
RELATION_SEGMENT = "r/"

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SKOS_PREF_LABEL = "http://www.w3.org/2004/02/skos/core#prefLabel"
SKOS_ALT_LABEL = "http://www.w3.org/2004/02/skos/core#altLabel"
SKOS_NOTATION = "http://www.w3.org/2004/02/skos/core#notation"
SCHEMA_NAME = "http://schema.org/name"
SCHEMA_NAME_HTTPS = "https://schema.org/name"
FOAF_NAME = "http://xmlns.com/foaf/0.1/name"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"

_BASE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]*[/#]$")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def check_base_iri(base: str) -> str:
    """Returns ``base`` if it can prefix minted IRIs (absolute, no IRI-illegal characters, ends in / or #)."""
    if not _BASE_RE.match(base):
        raise ValueError(
            f"base IRI {base!r} must be an absolute IRI without spaces or <>\"{{}}|\\^` and end with '/' or '#'"
        )
    return base


def default_base_iri(kg_name: str) -> str:
    """The base used when the user gives none: stable for a KG name, so reloads mint the same IRIs."""
    return f"http://example.org/{quote(kg_name, safe='')}/"


# Percent-encoded words, kept for the next names that use them (bounded: cleared when full).
_ENCODED_WORDS: dict[str, str] = {}
_ENCODED_WORDS_MAX = 1 << 16
_CACHED_WORD_CHARS = 64  # longer words are encoded each time, not kept


def percent_encode(name: str) -> str:
    """``quote(name, safe="")``, encoded word by word through a bounded cache.

    A load mints an IRI for each of millions of names, and ``quote`` walks every character in
    Python once a name holds one character to encode (a space will do). Names share most of their
    words, so each word is encoded once; encoding is per character, so the words' encodings joined
    by ``%20`` are the name's.
    """
    if " " not in name:  # one word (often an id, met once): nothing to share
        return quote(name, safe="")
    cache = _ENCODED_WORDS
    encoded = []
    for word in name.split(" "):
        done = cache.get(word)
        if done is None:
            done = quote(word, safe="")
            if len(word) <= _CACHED_WORD_CHARS:
                if len(cache) >= _ENCODED_WORDS_MAX:
                    cache.clear()
                cache[word] = done
        encoded.append(done)
    return "%20".join(encoded)


def mint_entity_iri(base: str, name: str) -> str:
    """``base + "e/" + percent-encoded name`` (every reserved character encoded, ``/`` included)."""
    return base + ENTITY_SEGMENT + percent_encode(name)


def mint_relation_iri(base: str, name: str) -> str:
    """``base + "r/" + percent-encoded name``."""
    return base + RELATION_SEGMENT + percent_encode(name)


def name_from_iri(base: str, iri: str) -> str | None:
    """The original name of an IRI minted under ``base`` (entity or relation), else ``None``."""
    for segment in (ENTITY_SEGMENT, RELATION_SEGMENT):
        prefix = base + segment
        if iri.startswith(prefix):
            return unquote(iri[len(prefix) :])
    return None


def local_name(iri: str) -> str:
    """The part after the last ``#`` or ``/`` (or ``:`` for URNs), percent-decoded."""
    trimmed = iri.rstrip("/#")
    cut = max(trimmed.rfind("#"), trimmed.rfind("/"))
    if cut < 0:
        cut = trimmed.rfind(":")
    return unquote(trimmed[cut + 1 :]) if cut >= 0 else unquote(trimmed)


def humanise(name: str, *, split_camel: bool = False) -> str:
    """A readable label: underscores become spaces, whitespace collapses; camelCase splits on request.

    Camel-case splitting is meant for predicate local names (``birthPlace`` -> ``birth place``);
    entity names keep their capitals (``McDonald`` stays whole).
    """
    text = name.replace("_", " ")
    if split_camel:
        text = _CAMEL_RE.sub(" ", text)
        if text and not text.isupper():
            text = " ".join(w.lower() if not w.isupper() else w for w in text.split())
    return " ".join(text.split())


def readable_name(iri: str) -> str:
    """A label for an IRI that has none: its local name, camelCase and ``_/.`` split, lower case
    (``.../birthPlace`` -> ``birth place``, ``.../directed_by`` -> ``directed by``)."""
    name = local_name(iri) or iri
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    name = re.sub(r"[_/.\s]+", " ", name).strip()
    return name.lower() if name else iri
