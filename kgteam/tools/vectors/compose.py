"""Fact vectors composed from their terms' tokens, for additive embedders (WordLlama).

An additive embedder's vector for a text is the normalised sum of its tokens' rows. A fact's
sentence is "subject predicate object" (:func:`~kgteam.tools.vectors.verbalise.fact_triples`),
and a tokenizer that never merges across a space (WordLlama's Llama-2 BPE) gives it exactly the
tokens of its three labels. So each distinct term is tokenised once, and a chunk of facts costs
one gather and sum of token rows per distinct term in it, three row additions per fact and a
normalisation: no sentence strings, no tokenising of 4M sentences (see docs/decisions.md).

Rows whose sentence would be cut at ``MAX_TEXT_CHARS`` are embedded as sentences, and the first
chunk is checked against the embedder's own output; a mismatch turns composition off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from kgteam.tools.embedding.base import Embedder
from kgteam.tools.vectors.verbalise import MAX_TEXT_CHARS, TermTable

CHECK_ROWS = 64
CHECK_TOLERANCE = 1e-4  # float32 sums in another order differ by ~1e-7
TOKENISE_BATCH = 65_536  # terms tokenised in one call


@runtime_checkable
class AdditiveEmbedder(Protocol):
    """An embedder whose vectors are normalised sums of token rows."""

    name: str
    dim: int
    token_vectors: np.ndarray

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def token_ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]: ...


def additive(embedder: Embedder) -> AdditiveEmbedder | None:
    """The embedder (or the one a cache wraps) when it is additive, else None."""
    for cand in (embedder, getattr(embedder, "inner", None)):
        if isinstance(cand, AdditiveEmbedder) and cand.name == embedder.name:
            return cand
    return None


def sentence(table: TermTable, s: int, p: int, o: int) -> str:
    """The sentence fact_triples gives the fact with these term ids."""
    return " ".join(x for x in (table.labels[s], table.labels[p], table.labels[o]) if x)[:MAX_TEXT_CHARS]


class FactComposer:
    """Vectors for rows of (subject, predicate, object) term ids of a growing :class:`TermTable`."""

    def __init__(self, embedder: AdditiveEmbedder, table: TermTable) -> None:
        self.embedder = embedder
        self.table = table
        self.weights = np.ascontiguousarray(embedder.token_vectors, dtype=np.float32)
        self._flat = np.zeros(0, np.int32)  # every tokenised term's ids, concatenated
        self._offsets = np.zeros(1, np.int64)  # term i's ids: _flat[_offsets[i]:_offsets[i+1]]
        self._chars = np.zeros(0, np.int64)  # term i's label length
        self.checked = False
        self.usable = True

    def _tokenise_upto(self, n_terms: int) -> None:
        """Token ids of terms up to ``n_terms``, a batch at a time (the tokenizer's per-text objects
        for all 1.4M terms of a 4M-fact KG at once took over a gigabyte)."""
        while len(self._chars) < n_terms:
            self._tokenise_batch(min(n_terms, len(self._chars) + TOKENISE_BATCH))

    def _tokenise_batch(self, n_terms: int) -> None:
        done = len(self._chars)
        labels = self.table.labels[done:n_terms]  # append-only; ids < n_terms are already there
        filled = [i for i, label in enumerate(labels) if label]  # an empty label is left out of the sentence
        flat, some = self.embedder.token_ids([labels[i] for i in filled])
        counts = np.zeros(len(labels), np.int64)
        counts[filled] = some
        self._flat = np.concatenate([self._flat, flat])
        self._offsets = np.concatenate([self._offsets, self._offsets[-1] + np.cumsum(counts)])
        self._chars = np.concatenate([self._chars, np.fromiter(map(len, labels), np.int64, len(labels))])

    def _term_sums(self, terms: np.ndarray) -> np.ndarray:
        """Token-row sums (float32) of the given distinct term ids: one vectorised gather and add
        per token position (np.add.reduceat over rows is ~50x slower here)."""
        out = np.zeros((len(terms), self.weights.shape[1]), np.float32)
        starts = self._offsets[terms]
        lens = self._offsets[terms + 1] - starts
        rows = np.flatnonzero(lens > 0)  # an unlabelled term adds nothing
        k = 0
        while len(rows):
            out[rows] += self.weights[self._flat[starts[rows] + k]]
            k += 1
            rows = rows[lens[rows] > k]
        return out

    def vectors(self, ids: np.ndarray) -> np.ndarray | None:
        """Unit float32 rows for the (n, 3) term ids; None when composition is off (embed sentences)."""
        if not self.usable:
            return None
        ids = np.asarray(ids, dtype=np.int64).reshape(-1, 3)
        if not len(ids):
            return np.zeros((0, self.weights.shape[1]), np.float32)
        self._tokenise_upto(int(ids.max()) + 1)
        terms, inverse = np.unique(ids, return_inverse=True)
        sums = self._term_sums(terms)
        inverse = inverse.reshape(-1, 3)
        out = sums[inverse[:, 0]]
        out += sums[inverse[:, 1]]
        out += sums[inverse[:, 2]]
        norms = np.sqrt(np.einsum("ij,ij->i", out, out))[:, None]
        np.divide(out, norms, out=out, where=norms > 0)  # zero rows (no token) stay zero
        chars = self._chars[ids]
        length = chars.sum(axis=1) + np.maximum((chars > 0).sum(axis=1) - 1, 0)
        long_rows = np.flatnonzero(length > MAX_TEXT_CHARS)
        if len(long_rows):  # cut sentences: their vectors are the cut text's
            out[long_rows] = self.embedder.embed([sentence(self.table, *ids[r]) for r in long_rows])
        if not self.checked:
            self.checked = True
            sample = np.linspace(0, len(ids) - 1, min(CHECK_ROWS, len(ids))).astype(np.int64)
            ref = self.embedder.embed([sentence(self.table, *ids[r]) for r in sample])
            if float(np.abs(ref - out[sample]).max()) > CHECK_TOLERANCE:
                self.usable = False
                return None
        return out
