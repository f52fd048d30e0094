"""``VectorIndex``: nearest rows of a matrix of unit vectors, exact (numpy) or approximate.

Exact search is one matrix-vector product: on 2 cores it stays within a few tens of ms up to
``EXACT_MAX_ROWS`` rows (docs/benchmarks.md), so smaller indexes are exact and need no extra
library. Above that new indexes are faiss IVF-SQ8 (inverted lists of 8-bit scalar-quantised
vectors): trained on a sample, filled chunk by chunk, ~260 bytes a row, so a build streams in
bounded memory (docs/decisions.md, "Scale: the triple vector index"). HNSW graphs (hnswlib) of
older KGs still open and answer.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Literal

import numpy as np

from kgteam.tools.embedding.base import EmbeddingError

EXACT_MAX_ROWS = 250_000
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 100
HNSW_EF_SEARCH = 256  # recall@10 0.92 at 1.7 ms p95 on 100k rows (128: 0.87; docs/benchmarks.md)
IVF_TRAIN_ROWS = 65_536  # vectors the coarse quantiser and the scalar quantiser are trained on
KMEANS_ROUNDS = 10
IVF_NPROBE = 64  # inverted lists visited per query: recall@10 0.87 (32: 0.81; docs/decisions.md)
Kind = Literal["exact", "hnsw", "ivf"]


def ivf_lists(rows: int) -> int:
    """Inverted lists for ``rows`` vectors: ~sqrt(n)/2, at least 64, at most 4096 (never more than rows).

    Training and filling cost rows x lists. Against sqrt(n) lists at 1M rows, half as many filled
    in 3.7 s instead of 6.3 s with recall@10 0.94 instead of 0.90 (nprobe 64), for 7.4 ms a query
    instead of 4.4 (docs/decisions.md, "Scale: the triple vector index")."""
    return int(min(4096, max(1, rows), max(64, np.sqrt(max(rows, 1)) / 2)))


def ivf_train_rows(rows: int) -> int:
    """Vectors to train on: ``IVF_TRAIN_ROWS``, or 40 a list when there are more lists (faiss warns
    on stderr below 39 a list), never more than there are."""
    return min(rows, max(IVF_TRAIN_ROWS, 40 * ivf_lists(rows)))


class IVFBuilder:
    """Builds an IVF-SQ8 index in steps: ``train`` on a sample, then ``add`` chunks of rows in order."""

    def __init__(self, dim: int, rows: int, *, threads: int = 0) -> None:
        import faiss

        if threads:
            faiss.omp_set_num_threads(threads)
        self.dim = dim
        self.index = faiss.index_factory(dim, f"IVF{ivf_lists(rows)},SQ8", faiss.METRIC_INNER_PRODUCT)
        # 10 k-means rounds instead of faiss's 25: the same recall@10 (0.899 / 0.902 at 1M rows), 2.5x faster
        faiss.extract_index_ivf(self.index).cp.niter = KMEANS_ROUNDS
        self.rows = 0

    def train(self, sample: np.ndarray) -> None:
        self.index.train(np.ascontiguousarray(sample, dtype=np.float32))

    def add(self, vectors: np.ndarray) -> None:
        self.index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        self.rows += len(vectors)

    def finish(self) -> VectorIndex:
        self.index.nprobe = IVF_NPROBE
        return VectorIndex(self.dim, "ivf", ivf=self.index, rows=self.rows)


class VectorIndex:
    """Rows of unit vectors searched by inner product (cosine). Build with ``build``, then ``save``."""

    def __init__(self, dim: int, kind: Kind, *, matrix: np.ndarray | None = None, hnsw: object | None = None,
                 ivf: object | None = None, rows: int = 0) -> None:
        self.dim = dim
        self.kind = kind
        self._matrix = matrix
        self._hnsw = hnsw
        self._ivf = ivf
        self.rows = rows if matrix is None else int(matrix.shape[0])
        self._lock = threading.Lock()

    @classmethod
    def build(cls, vectors: np.ndarray, *, kind: Kind | None = None, threads: int = -1) -> VectorIndex:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        n, dim = vectors.shape
        chosen: Kind = kind or ("ivf" if n > EXACT_MAX_ROWS else "exact")
        if chosen == "exact":
            return cls(dim, "exact", matrix=vectors)
        if chosen == "ivf":
            builder = IVFBuilder(dim, n)
            train_rows = ivf_train_rows(n)
            builder.train(vectors[:: max(1, n // train_rows)][:train_rows])
            builder.add(vectors)
            return builder.finish()
        import hnswlib

        graph = hnswlib.Index(space="ip", dim=dim)
        graph.init_index(max_elements=max(n, 1), ef_construction=HNSW_EF_CONSTRUCTION, M=HNSW_M)
        if n:
            graph.add_items(vectors, np.arange(n), num_threads=threads)
        graph.set_ef(HNSW_EF_SEARCH)
        return cls(dim, "hnsw", hnsw=graph, rows=n)

    def save(self, stem: Path) -> None:
        if self.kind == "exact":
            assert self._matrix is not None
            # float16 on disk halves the folder (cosines move by < 1e-3); searched as float32
            np.save(stem.with_suffix(".npy"), self._matrix.astype(np.float16), allow_pickle=False)
        elif self.kind == "ivf":
            import faiss

            faiss.write_index(self._ivf, str(stem.with_suffix(".ivf")))
        else:
            self._hnsw.save_index(str(stem.with_suffix(".hnsw")))  # type: ignore[attr-defined]

    @classmethod
    def open(cls, stem: Path, dim: int, kind: Kind, rows: int) -> VectorIndex:
        if kind == "exact":
            path = stem.with_suffix(".npy")
            if not path.is_file():
                raise EmbeddingError(f"vector file {path} is missing; rebuild with `kgteam embed NAME`")
            matrix = np.load(path, allow_pickle=False)
            if matrix.ndim != 2 or matrix.shape[1] != dim:
                raise EmbeddingError(f"{path} holds shape {matrix.shape}, expected (*, {dim})")
            return cls(dim, "exact", matrix=np.ascontiguousarray(matrix, dtype=np.float32))
        if kind == "ivf":
            import faiss

            path = stem.with_suffix(".ivf")
            if not path.is_file():
                raise EmbeddingError(f"vector file {path} is missing; rebuild with `kgteam index NAME`")
            ivf = faiss.read_index(str(path), faiss.IO_FLAG_MMAP)  # lists stay on disk until searched
            if ivf.d != dim or ivf.ntotal != rows:
                raise EmbeddingError(f"{path} holds {ivf.ntotal} rows of {ivf.d} dims, expected {rows} of {dim}")
            ivf.nprobe = IVF_NPROBE
            return cls(dim, "ivf", ivf=ivf, rows=rows)
        import hnswlib

        path = stem.with_suffix(".hnsw")
        if not path.is_file():
            raise EmbeddingError(f"vector file {path} is missing; rebuild with `kgteam embed NAME`")
        graph = hnswlib.Index(space="ip", dim=dim)
        graph.load_index(str(path), max_elements=rows)
        graph.set_ef(HNSW_EF_SEARCH)
        return cls(dim, "hnsw", hnsw=graph, rows=rows)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Scores and row ids of the ``k`` nearest rows for each query row, best first."""
        q = np.ascontiguousarray(np.atleast_2d(query), dtype=np.float32)
        if q.shape[1] != self.dim:
            raise EmbeddingError(f"query vectors have {q.shape[1]} dims, the index {self.dim}")
        k = min(k, self.rows)
        if k <= 0:
            return np.zeros((q.shape[0], 0), np.float32), np.zeros((q.shape[0], 0), np.int64)
        if self.kind == "hnsw":
            with self._lock:  # set_ef and queries share the graph's search parameters
                self._hnsw.set_ef(max(HNSW_EF_SEARCH, k))  # type: ignore[attr-defined]
                labels, distances = self._hnsw.knn_query(q, k=k)  # type: ignore[attr-defined]
            return (1.0 - distances).astype(np.float32), labels.astype(np.int64)
        if self.kind == "ivf":
            scores, labels = self._ivf.search(q, max(k, 1))  # type: ignore[attr-defined]
            return scores.astype(np.float32), labels.astype(np.int64)
        assert self._matrix is not None
        scores = q @ self._matrix.T
        if k < scores.shape[1]:
            part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        else:
            part = np.tile(np.arange(scores.shape[1]), (q.shape[0], 1))
        top = np.take_along_axis(scores, part, axis=1)
        order = np.argsort(-top, axis=1, kind="stable")
        ids = np.take_along_axis(part, order, axis=1)
        return np.take_along_axis(top, order, axis=1), ids.astype(np.int64)
