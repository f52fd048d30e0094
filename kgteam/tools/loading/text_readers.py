"""Streaming readers for name-based triple files: MetaQA ``kb.txt`` and tab-separated triples.

They yield ``(subject, relation, object, line)`` with names as written in the file. A relation
ending in ``_inverse`` (WC2014 style) is folded into its forward relation with subject and object
swapped, so ``A r_inverse B`` and ``B r A`` become one triple instead of two predicates.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from importlib import resources
from typing import NamedTuple

from kgteam.tools.loading.errors import LoadError
from kgteam.tools.loading.sources import OpenedSource, read_line_blocks, read_lines

INVERSE_SUFFIX = "_inverse"



def _format_relations(name: str) -> frozenset[str]:
    """Relation names a line format needs to split ambiguous lines, from the package's data files."""
    text = resources.files("kgteam.data").joinpath(f"{name}_relations.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


# The relations of the MetaQA / WikiMovies KB (a data file): used to split lines whose names contain '|'.
METAQA_RELATIONS: frozenset[str] = _format_relations("metaqa")


class NameTriple(NamedTuple):
    subject: str
    relation: str
    object: str
    line: int


def fold_inverse(subject: str, relation: str, obj: str, suffix: str | None) -> tuple[str, str, str]:
    """``(A, r_inverse, B)`` -> ``(B, r, A)``; anything else unchanged."""
    if suffix and relation.endswith(suffix) and len(relation) > len(suffix):
        return obj, relation[: -len(suffix)], subject
    return subject, relation, obj


def _split_pipes(parts: list[str], known: Iterable[str]) -> tuple[str, str, str] | None:
    """Splits a line with more than two '|' at the one field that is a known relation."""
    known_set = set(known)
    hits = [i for i in range(1, len(parts) - 1) if parts[i].strip() in known_set]
    if len(hits) != 1:
        return None
    i = hits[0]
    return "|".join(parts[:i]), parts[i], "|".join(parts[i + 1 :])


def read_metaqa(
    src: OpenedSource,
    *,
    known_relations: Iterable[str] = METAQA_RELATIONS,
    inverse_suffix: str | None = INVERSE_SUFFIX,
) -> Iterator[NameTriple]:
    """Reads ``subject|relation|object`` lines; names that contain '|' are split at a known relation.

    Relations seen on clean three-field lines are learned, so a KB with other relations than
    MetaQA's still splits robustly. Blank lines are skipped. Yields plain tuples shaped like
    :class:`NameTriple` (cheaper to build on the hot path).
    """
    known = set(known_relations)
    path = src.path
    suffix = inverse_suffix or None
    for first, lines in read_line_blocks(src):
        for lineno, line in enumerate(lines, first):
            parts = line.split("|")
            if len(parts) == 3:
                s, r, o = parts
                r = r.strip()
                if r not in known:
                    known.add(r)
            elif len(parts) < 3:
                if not line.strip():
                    continue
                raise LoadError(
                    f"expected 'subject|relation|object', found {len(parts) - 1} '|' separator(s): {line[:120]!r}",
                    file=path,
                    line=lineno,
                )
            else:
                split = _split_pipes(parts, known)
                if split is None:
                    raise LoadError(
                        f"{len(parts) - 1} '|' separators and no single known relation to split at "
                        f"(known: {', '.join(sorted(known)[:12])}): {line[:120]!r}",
                        file=path,
                        line=lineno,
                    )
                s, r, o = split
                r = r.strip()
            s = s.strip()
            o = o.strip()
            if not s or not r or not o:
                raise LoadError(f"empty subject, relation or object: {line[:120]!r}", file=path, line=lineno)
            if suffix and r.endswith(suffix):
                s, r, o = fold_inverse(s, r, o, suffix)
            yield (s, r, o, lineno)  # type: ignore[misc]


def read_tsv(src: OpenedSource, *, inverse_suffix: str | None = INVERSE_SUFFIX) -> Iterator[NameTriple]:
    """Reads ``subject<TAB>relation<TAB>object`` lines; empty columns (double tabs) are ignored.

    PathQuestion's KB is documented as ``subject<TAB><TAB>relation<TAB>object``; dropping empty
    columns reads that and the plain three-column form alike.
    """
    path = src.path
    suffix = inverse_suffix or None
    for first, lines in read_line_blocks(src):
        for lineno, line in enumerate(lines, first):
            fields = line.split("\t")
            if len(fields) == 3:
                s, r, o = fields[0].strip(), fields[1].strip(), fields[2].strip()
            else:
                fields = [f.strip() for f in fields]
                fields = [f for f in fields if f]
                if not fields:
                    continue
                if len(fields) != 3:
                    raise LoadError(
                        f"expected 3 tab-separated columns (subject, relation, object), found {len(fields)}: "
                        f"{line[:120]!r}",
                        file=path,
                        line=lineno,
                    )
                s, r, o = fields
            if not s or not r or not o:
                if not line.strip():
                    continue
                raise LoadError(
                    f"expected 3 tab-separated columns (subject, relation, object), an empty one: {line[:120]!r}",
                    file=path,
                    line=lineno,
                )
            if suffix and r.endswith(suffix):
                s, r, o = fold_inverse(s, r, o, suffix)
            yield (s, r, o, lineno)  # type: ignore[misc]


def read_label_map(src: OpenedSource) -> dict[str, str]:
    """Reads an ``id<TAB>label`` file (e.g. FB15k-237 ``entity2text.txt``); the first label of an id wins."""
    labels: dict[str, str] = {}
    for lineno, line in read_lines(src):
        if not line.strip():
            continue
        key, sep, label = line.partition("\t")
        key, label = key.strip(), label.split("\t")[0].strip()
        if not sep or not key or not label:
            raise LoadError(f"expected 'id<TAB>label': {line[:120]!r}", file=src.path, line=lineno)
        labels.setdefault(key, label)
    return labels
