"""Input formats a KG can be loaded from, and how a file's format is recognised."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from kgteam.tools.loading.errors import LoadError

InputFormat = Literal["ntriples", "turtle", "nquads", "trig", "rdfxml", "metaqa", "tsv"]
RDF_FORMATS: frozenset[str] = frozenset({"ntriples", "turtle", "nquads", "trig", "rdfxml"})
FORMATS: tuple[str, ...] = ("ntriples", "turtle", "nquads", "trig", "rdfxml", "metaqa", "tsv")

COMPRESSION_SUFFIXES: dict[str, str] = {".gz": "gzip", ".xz": "xz", ".bz2": "bzip2"}

_ALIASES: dict[str, str] = {
    "ntriples": "ntriples",
    "n-triples": "ntriples",
    "nt": "ntriples",
    "turtle": "turtle",
    "ttl": "turtle",
    "nquads": "nquads",
    "n-quads": "nquads",
    "nq": "nquads",
    "trig": "trig",
    "rdfxml": "rdfxml",
    "rdf/xml": "rdfxml",
    "rdf": "rdfxml",
    "xml": "rdfxml",
    "owl": "rdfxml",
    "metaqa": "metaqa",
    "kb": "metaqa",
    "pipe": "metaqa",
    "tsv": "tsv",
    "tab": "tsv",
}

_EXTENSIONS: dict[str, str] = {
    ".nt": "ntriples",
    ".ntriples": "ntriples",
    ".ttl": "turtle",
    ".turtle": "turtle",
    ".nq": "nquads",
    ".nquads": "nquads",
    ".trig": "trig",
    ".rdf": "rdfxml",
    ".owl": "rdfxml",
    ".tsv": "tsv",
    ".tab": "tsv",
}


def normalise_format(name: str) -> str:
    """Maps a user-given format name (``nt``, ``N-Triples``, ``kb`` ...) to a canonical one."""
    fmt = _ALIASES.get(name.strip().lower())
    if fmt is None:
        raise LoadError(f"unknown format {name!r}; choose one of: {', '.join(FORMATS)}")
    return fmt


def compression_of(path: Path) -> str | None:
    return COMPRESSION_SUFFIXES.get(path.suffix.lower())


def detect_format(path: Path, first_line: str | None = None) -> str:
    """Format from the extension (compression suffix ignored); ``.txt`` is sniffed from its first line.

    ``.txt`` is used both by MetaQA (``s|p|o``) and by WC2014/PathQuestion (tab-separated), so the
    first non-empty line decides: a tab means TSV, a ``|`` means MetaQA.
    """
    inner = path.with_suffix("") if compression_of(path) else path
    ext = inner.suffix.lower()
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    if ext in {".txt", ".kb", ""} and first_line is not None:
        if "\t" in first_line:
            return "tsv"
        if "|" in first_line:
            return "metaqa"
    raise LoadError(
        f"cannot tell the format from the name {path.name!r}; pass --format ({', '.join(FORMATS)})",
        file=path,
    )
