"""Streaming RDF reading with pyoxigraph's parsers; syntax errors become LoadErrors with file:line."""

from __future__ import annotations

import lzma
import re
import zlib
from collections.abc import Iterator

import pyoxigraph as ox

from kgteam.tools.loading.errors import LoadError
from kgteam.tools.loading.sources import OpenedSource

_OX_FORMATS = {
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "turtle": ox.RdfFormat.TURTLE,
    "nquads": ox.RdfFormat.N_QUADS,
    "trig": ox.RdfFormat.TRIG,
    "rdfxml": ox.RdfFormat.RDF_XML,
}

_POSITION = re.compile(r"^Parser error (?:at|between) (.*?): ")


def _problem(exc: SyntaxError) -> str:
    """pyoxigraph's message without the position prefix (the line goes into the location instead)."""
    message = str(exc.args[0]) if exc.args else str(exc)
    match = _POSITION.match(message)
    return f"{message[match.end():]} ({match.group(1)})" if match else message


def read_rdf(src: OpenedSource, fmt: str, *, base_iri: str | None = None,
             prefixes: dict[str, str] | None = None) -> Iterator[ox.Quad]:
    """Yields the quads of ``src``, all in the default graph.

    A KG here is one graph: named graphs of N-Quads/TriG input are merged into the default graph so
    every backend (embedded, Oxigraph server, Virtuoso) answers the same queries the same way.
    The file's own prefixes (Turtle/TriG ``@prefix``) are added to ``prefixes`` once it is read; a
    name already there keeps its first meaning.
    """
    try:
        parser = ox.parse(src.stream, _OX_FORMATS[fmt], base_iri=base_iri)
        for quad in parser:
            if not isinstance(quad.graph_name, ox.DefaultGraph):
                quad = ox.Quad(quad.subject, quad.predicate, quad.object)
            yield quad
        if prefixes is not None:
            for name, iri in parser.prefixes.items():
                prefixes.setdefault(name, iri)
    except SyntaxError as exc:
        raise LoadError(_problem(exc), file=src.path, line=exc.lineno) from exc
    except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error) as exc:
        raise LoadError(f"cannot read: {exc}", file=src.path) from exc
