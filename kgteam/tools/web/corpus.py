"""``LocalCorpus``: search a corpus built by ``kgteam corpus add`` — BM25, dense, or both fused.

BM25 (tantivy, English stemming, titles boosted) finds chunks that share the question's words,
names above all; the dense index (the corpus's embedder, exact or HNSW) finds paraphrases.
Hybrid adds the two scores: BM25 divided by the query's best BM25 score (so 0-1 whatever the
query's length) plus the cosine. Unlike reciprocal-rank fusion this keeps BM25's margins: a chunk
that matches a film's name far better than anything else stays first even when the embedder does
not rank it (docs/decisions.md has the measurement). Opening loads the vectors and opens the BM25 index and the chunk table;
a search is a few milliseconds (docs/benchmarks.md, "web_search").
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import threading
from pathlib import Path
from typing import Literal

import numpy as np
import tantivy

from kgteam.tools.embedding.base import Embedder, EmbeddingError
from kgteam.tools.vectors.index import VectorIndex
from kgteam.tools.web.corpus_build import (
    BM25_DIR,
    CHUNKS_DB,
    VECTORS_STEM,
    CorpusManifest,
    bm25_schema,
    corpus_folder,
    read_manifest,
)
from kgteam.tools.web.document import Document
from kgteam.tools.web.errors import CorpusError

Mode = Literal["hybrid", "bm25", "dense"]
MODES: tuple[Mode, ...] = ("hybrid", "bm25", "dense")
TITLE_BOOST = 2.0
# each ranking hands the fusion this many candidates per result asked for (at least MIN_CANDIDATES)
CANDIDATES_PER_RESULT = 3
MIN_CANDIDATES = 30
DENSE_WEIGHT = 1.0  # cosine (about 0.2-0.7 for WordLlama) against BM25 / best BM25 (0-1)
_WORD = re.compile(r"\w+")
# Words that carry no topic: dropped from the BM25 query (they only cost posting-list time).
STOP_WORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "been", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "for", "from", "had", "has", "have", "having", "he", "her", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "me", "my", "no", "nor", "not", "of", "on", "or", "our", "ours", "she", "so", "than", "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "to", "too", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "whose", "why", "will", "with", "would", "you", "your", "yours", "about", "after", "before", "during", "over", "under", "again", "also", "just", "any", "all", "each", "few", "more", "most", "other", "some", "such", "only", "own", "same", "very", "s", "t"]
)


def exact_top(matrix: np.ndarray, query: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores and rows of the ``n`` rows of ``matrix`` closest to one query vector, best first.

    ``einsum`` rather than ``@``: numpy's matrix product goes to OpenBLAS, whose worker threads
    spin against each other on a busy 2-core machine (a 4,400 x 256 product took 15 ms p50 and
    40 ms p95 there, against 0.1 ms for einsum's single-threaded loop; docs/decisions.md).
    """
    scores = np.einsum("ij,j->i", matrix, query)
    n = min(n, scores.shape[0])
    if n <= 0:
        return scores[:0], np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, n - 1)[:n] if n < scores.shape[0] else np.arange(scores.shape[0])
    order = part[np.argsort(-scores[part], kind="stable")]
    return scores[order], order


def fuse_scores(lexical: list[tuple[int, float]], dense: list[tuple[int, float]],
                dense_weight: float = DENSE_WEIGHT) -> list[tuple[int, float]]:
    """Rows of both lists by ``bm25 / best bm25 + dense_weight * max(cosine, 0)``, best first
    (a row missing from a list scores 0 there; ties keep BM25's order, then the dense list's)."""
    best = max((score for _, score in lexical), default=0.0)
    scores: dict[int, float] = {row: (score / best if best > 0 else 0.0) for row, score in lexical}
    for row, cosine in dense:
        scores[row] = scores.get(row, 0.0) + dense_weight * max(cosine, 0.0)
    order = {row: n for n, row in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))


def query_words(query: str) -> list[str]:
    """The query's words for BM25: lower-cased, stop words dropped (all kept if nothing else is left)."""
    words = [w for w in _WORD.findall(query.lower()) if w != "_"]
    content = [w for w in words if w not in STOP_WORDS]
    return content or words


class LocalCorpus:
    """An opened corpus: ``search`` (async, the ``SearchProvider`` method) and ``search_sync``."""

    def __init__(self, folder: Path, *, mode: Mode = "hybrid", embedder: Embedder | None = None) -> None:
        if mode not in MODES:
            raise CorpusError(f"unknown search mode {mode!r}; use {', '.join(MODES)}")
        self.folder = Path(folder)
        self.manifest: CorpusManifest = read_manifest(self.folder)
        self.name = f"corpus:{self.manifest.name}"
        self.corpus = self.manifest.name
        self._schema = bm25_schema()
        try:
            self._index = tantivy.Index.open(str(self.folder / BM25_DIR))
            self._searcher = self._index.searcher()
            self._db = sqlite3.connect(f"file:{self.folder / CHUNKS_DB}?mode=ro", uri=True, check_same_thread=False)
        except (ValueError, OSError, sqlite3.Error) as exc:
            raise CorpusError(f"corpus {self.corpus!r} at {self.folder} cannot be opened ({exc}); rebuild it "
                              "with `kgteam corpus add`") from None
        self._lock = threading.Lock()
        self._matrix: np.ndarray | None = None  # an exact index's rows, searched by exact_top
        self._hnsw: VectorIndex | None = None  # an approximate index (large corpora)
        self._embedder: Embedder | None = None
        vec = self.manifest.vectors
        if vec is not None and mode != "bm25":
            self._embedder = self._check_embedder(embedder, vec.embedder, vec.dim)
            if self._embedder is not None:
                self._open_dense(vec.kind, vec.dim)
        if mode == "dense" and not self.has_dense:
            raise CorpusError(f"corpus {self.corpus!r} has no usable dense index "
                              f"({self._why_no_vectors()}); use mode bm25 or hybrid, or rebuild it")
        # hybrid without vectors searches BM25 alone; ``mode`` says what really runs
        self.mode: Mode = "bm25" if mode == "hybrid" and not self.has_dense else mode

    def _open_dense(self, kind: str, dim: int) -> None:
        stem = self.folder / VECTORS_STEM
        try:
            if kind == "exact":
                path = stem.with_suffix(".npy")
                matrix = np.load(path, allow_pickle=False)
                if matrix.shape != (self.manifest.chunks, dim):
                    raise CorpusError(f"{path} holds shape {matrix.shape}, expected ({self.manifest.chunks}, {dim})")
                self._matrix = np.ascontiguousarray(matrix, dtype=np.float32)
            else:
                self._hnsw = VectorIndex.open(stem, dim, "hnsw", self.manifest.chunks)
        except (OSError, ValueError, EmbeddingError) as exc:
            raise CorpusError(f"corpus {self.corpus!r}: its dense index cannot be read ({exc}); rebuild it with "
                              "`kgteam corpus add`") from None

    @property
    def has_dense(self) -> bool:
        return self._embedder is not None and (self._matrix is not None or self._hnsw is not None)

    def _why_no_vectors(self) -> str:
        vec = self.manifest.vectors
        if vec is None:
            return "it was built without embeddings"
        return f"its embedder {vec.embedder} is not available here"

    @staticmethod
    def _check_embedder(embedder: Embedder | None, wanted: str, dim: int) -> Embedder | None:
        if embedder is None:
            from kgteam.tools.embedding import default_embedder

            embedder = default_embedder()
            if embedder is None or embedder.name != wanted:
                return None
        if embedder.name != wanted or embedder.dim != dim:
            raise CorpusError(f"the corpus was embedded with {wanted} ({dim} dims), not {embedder.name} "
                              f"({embedder.dim} dims); search it with that embedder or rebuild it")
        return embedder

    def __len__(self) -> int:
        return self.manifest.chunks

    # ------------------------------------------------------------ rankings (row numbers, best first)

    def bm25_rows(self, query: str, n: int) -> list[tuple[int, float]]:
        words = query_words(query)
        if not words:
            return []
        parsed = self._index.parse_query(" ".join(words), ["title", "text"], field_boosts={"title": TITLE_BOOST})
        hits = self._searcher.search(parsed, n, count=False).hits
        if not hits:
            return []
        rows = self._searcher.fast_field_values("row", [addr for _, addr in hits])
        return [(int(row), float(score)) for (score, _), row in zip(hits, rows, strict=True) if row is not None]

    def dense_rows(self, query: str, n: int) -> list[tuple[int, float]]:
        if not self.has_dense:
            raise CorpusError(f"corpus {self.corpus!r} has no usable dense index ({self._why_no_vectors()})")
        vector = self._embedder.embed([query])
        if not vector.any():  # no known token: similar to nothing
            return []
        if self._matrix is not None:
            scores, found = exact_top(self._matrix, vector[0], n)
            return [(int(r), float(s)) for s, r in zip(scores, found, strict=True)]
        assert self._hnsw is not None
        scores, rows = self._hnsw.search(vector, n)
        return [(int(r), float(s)) for s, r in zip(scores[0], rows[0], strict=True) if r >= 0]

    def ranked_rows(self, query: str, k: int, mode: Mode | None = None) -> list[tuple[int, float]]:
        mode = mode or self.mode
        if mode not in MODES:
            raise CorpusError(f"unknown search mode {mode!r}; use {', '.join(MODES)}")
        if mode == "bm25" or (mode == "hybrid" and not self.has_dense):
            return self.bm25_rows(query, k)
        if mode == "dense":
            return self.dense_rows(query, k)
        n = max(MIN_CANDIDATES, k * CANDIDATES_PER_RESULT)
        return fuse_scores(self.bm25_rows(query, n), self.dense_rows(query, n), DENSE_WEIGHT)[:k]

    # ------------------------------------------------------------ documents

    def documents(self, ranked: list[tuple[int, float]]) -> list[Document]:
        """The chunks of ``ranked`` (row, score) as ``Document`` s, in that order."""
        if not ranked:
            return []
        rows = [r for r, _ in ranked]
        with self._lock:
            found = {r[0]: r for r in self._db.execute(
                f"SELECT row, doc_id, chunk, title, url, text FROM chunks WHERE row IN ({','.join('?' * len(rows))})",
                rows)}
        out = []
        for row, score in ranked:
            hit = found.get(row)
            if hit is None:
                continue
            _, doc_id, chunk, title, url, text = hit
            out.append(Document(id=f"{self.name}:{doc_id}#{chunk}", source=self.name, title=title, url=url,
                                snippet=text, score=round(score, 6), doc_id=doc_id, chunk=chunk))
        return out

    def search_sync(self, query: str, k: int = 10, *, mode: Mode | None = None) -> list[Document]:
        """The best ``k`` chunks for ``query`` (``mode``: hybrid, bm25 or dense; default the corpus's)."""
        if k <= 0 or not query.strip():
            return []
        return self.documents(self.ranked_rows(query, k, mode))

    async def search(self, query: str, k: int = 10, *, mode: Mode | None = None) -> list[Document]:
        """``search_sync`` in a worker thread, so a team's other branches run meanwhile."""
        return await asyncio.to_thread(self.search_sync, query, k, mode=mode)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> LocalCorpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_corpus(name: str, home: Path | str | None = None, *, mode: Mode = "hybrid",
                embedder: Embedder | None = None) -> LocalCorpus:
    """Opens corpus ``name`` from ``<home>/corpora`` (home: ``$KGTEAM_HOME`` or ``~/.kgteam``); a
    built-in corpus (``kgteam.tools.web.builtin``) is built there first if it is not yet."""
    from kgteam.tools.web.builtin import ensure_builtin_corpus

    ensure_builtin_corpus(name, home)
    return LocalCorpus(corpus_folder(name, home), mode=mode, embedder=embedder)
