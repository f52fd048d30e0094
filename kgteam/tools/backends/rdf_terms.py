"""One canonical shape for RDF terms in results, whatever backend produced them.

Why: the same KG answers slightly differently from Oxigraph and Virtuoso (``typed-literal``
vs ``literal``, ``xsd:int`` kept vs folded to ``xsd:integer``, booleans as ``1``, decimals
re-printed, language tags case, explicit ``xsd:string``). Tools and tests compare results
across backends, so every backend passes its terms through :func:`normalise_term`.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

from kgteam.tools.types import RDFTerm

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
XSD_STRING = XSD + "string"
XSD_INTEGER = XSD + "integer"

# Integer-valued XSD types folded into xsd:integer (Oxigraph folds some of them on load, Virtuoso keeps them).
_INTEGER_TYPES = {
    XSD + t
    for t in (
        "integer", "int", "long", "short", "byte", "nonNegativeInteger", "nonPositiveInteger",
        "positiveInteger", "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte",
    )
}


def _canon_decimal(value: str) -> str:
    try:
        d = Decimal(value.strip())
    except InvalidOperation:
        return value
    if d == d.to_integral_value():
        return f"{d.quantize(Decimal(1))}.0"
    return format(d.normalize(), "f")


def _canon_double(value: str) -> str:
    try:
        f = float(value.strip())
    except ValueError:
        return value
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "INF" if f > 0 else "-INF"
    return repr(f)


def canonical_datatype(datatype: str) -> str:
    """Datatype IRI as results report it: integer-valued types fold into ``xsd:integer``."""
    return XSD_INTEGER if datatype in _INTEGER_TYPES else datatype


def canonical_literal(value: str, datatype: str | None) -> tuple[str, str | None]:
    """Canonical (lexical form, datatype); ``None`` datatype means a plain string."""
    if datatype in (None, XSD_STRING, RDF_LANGSTRING):
        return value, None
    if datatype in _INTEGER_TYPES:
        try:
            return str(int(value.strip())), XSD_INTEGER
        except ValueError:
            return value, datatype
    if datatype == XSD + "boolean":
        v = value.strip().lower()
        if v in ("1", "true"):
            return "true", datatype
        if v in ("0", "false"):
            return "false", datatype
        return value, datatype
    if datatype == XSD + "decimal":
        return _canon_decimal(value), datatype
    if datatype in (XSD + "double", XSD + "float"):
        return _canon_double(value), datatype
    return value, datatype


def normalise_term(kind: str, value: str, datatype: str | None = None, lang: str | None = None) -> RDFTerm:
    """Build an :class:`RDFTerm` in canonical form from SPARQL-JSON-like parts."""
    if kind in ("typed-literal", "literal"):
        if lang:
            return RDFTerm(type="literal", value=value, lang=lang.lower())
        value, datatype = canonical_literal(value, datatype)
        return RDFTerm(type="literal", value=value, datatype=datatype)
    if kind == "bnode":
        return RDFTerm(type="bnode", value=value)
    if kind == "triple":
        return RDFTerm(type="triple", value=value)
    return RDFTerm(type="uri", value=value)


def term_sort_key(t: RDFTerm | None) -> tuple[int, str, str]:
    """Total order on terms (unbound < bnode < IRI < triple < literal), the same on every backend."""
    if t is None:
        return (0, "", "")
    order = {"bnode": 1, "uri": 2, "triple": 3, "literal": 4}[t.type]
    return (order, t.value, t.datatype or t.lang or "")


def sort_triple_rows(rows: list[dict[str, RDFTerm]]) -> list[dict[str, RDFTerm]]:
    """CONSTRUCT/DESCRIBE return a graph (a set): give it one canonical order."""
    return sorted(rows, key=lambda r: tuple(term_sort_key(r.get(k)) for k in ("subject", "predicate", "object")))
