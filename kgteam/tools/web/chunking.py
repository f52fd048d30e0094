"""Splits a document into overlapping chunks on paragraph and sentence boundaries.

A chunk is what the corpus indexes and returns: small enough that the answer-bearing sentence
is not drowned in BM25's length normalisation or averaged away in one embedding, and cut where a
reader would cut (paragraph, then sentence, then word), so a fenced snippet reads as prose. The
last sentences of a chunk (up to ``overlap`` characters) open the next one, so a fact that spans
a boundary is whole in at least one chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_CHUNK_CHARS = 1000
DEFAULT_OVERLAP = 150
MIN_CHUNK_CHARS = 100
MAX_CHUNK_CHARS = 1500  # a Document's snippet is capped at 1,500 characters

_PARAGRAPHS = re.compile(r"\n\s*\n")
# a sentence ends at . ! ? (and closing quotes/brackets after it) followed by space
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+")


@dataclass(frozen=True)
class _Unit:
    text: str
    starts_paragraph: bool
    paragraph_chars: int = 0  # on a paragraph's first unit: the whole paragraph's length


def check_sizes(chunk_chars: int, overlap: int) -> None:
    """Raises ValueError unless ``MIN ≤ chunk_chars ≤ MAX`` and ``0 ≤ overlap ≤ chunk_chars / 2``."""
    if not MIN_CHUNK_CHARS <= chunk_chars <= MAX_CHUNK_CHARS:
        raise ValueError(f"chunk size must be between {MIN_CHUNK_CHARS} and {MAX_CHUNK_CHARS} characters "
                         f"(got {chunk_chars})")
    if not 0 <= overlap <= chunk_chars // 2:
        raise ValueError(f"overlap must be between 0 and half the chunk size ({chunk_chars // 2}); got {overlap}")


def _split_long(sentence: str, limit: int) -> list[str]:
    """A sentence longer than ``limit`` cut at word boundaries (a word longer than that is cut hard)."""
    pieces: list[str] = []
    current = ""
    for word in sentence.split():
        while len(word) > limit:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(word[:limit])
            word = word[limit:]
        if current and len(current) + 1 + len(word) > limit:
            pieces.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        pieces.append(current)
    return pieces


def _units(text: str, limit: int) -> list[_Unit]:
    units: list[_Unit] = []
    for paragraph in _PARAGRAPHS.split(text):
        paragraph = " ".join(paragraph.split())
        if not paragraph:
            continue
        first = True
        for sentence in _SENTENCE_END.split(paragraph):
            sentence = sentence.strip()
            if not sentence:
                continue
            for piece in _split_long(sentence, limit) if len(sentence) > limit else [sentence]:
                units.append(_Unit(piece, first, len(paragraph) if first else 0))
                first = False
    return units


def _join(units: list[_Unit]) -> str:
    out = ""
    for n, unit in enumerate(units):
        if n:
            out += "\n\n" if unit.starts_paragraph else " "
        out += unit.text
    return out


def _length(units: list[_Unit]) -> int:
    return len(_join(units))


def chunk_text(text: str, chunk_chars: int = DEFAULT_CHUNK_CHARS, overlap: int = DEFAULT_OVERLAP) -> list[str]:
    """``text`` as chunks of at most ``chunk_chars`` characters, consecutive chunks sharing up to
    ``overlap`` characters of whole sentences. Whitespace inside paragraphs is collapsed."""
    check_sizes(chunk_chars, overlap)
    chunks: list[str] = []
    current: list[_Unit] = []
    fresh = 0  # units in ``current`` that no earlier chunk holds
    for unit in _units(text, chunk_chars):
        candidate = current + [unit]
        fits = _length(candidate) <= chunk_chars
        # a paragraph that will not fit whole starts a new chunk when this one is at least half full
        used = _length(current)
        early = (unit.starts_paragraph and fresh > 0 and used >= chunk_chars // 2
                 and used + 2 + unit.paragraph_chars > chunk_chars)
        if fits and not early:
            current, fresh = candidate, fresh + 1
            continue
        if fresh:
            chunks.append(_join(current))
            carry: list[_Unit] = []
            for prev in reversed(current):  # the last whole sentences, up to ``overlap`` characters
                if _length([prev, *carry]) > overlap:
                    break
                carry.insert(0, prev)
            current = carry
        while current and _length(current + [unit]) > chunk_chars:
            current = current[1:]
        current, fresh = current + [unit], 1
    if fresh:
        chunks.append(_join(current))
    return chunks
