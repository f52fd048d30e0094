"""The triple vector index, built streaming: facts -> sentences -> vectors -> index, chunk by chunk.

A 4M-fact KG never holds its sentences or float32 vectors in memory at once. Facts are turned
into sentences on a thread while the previous chunk is embedded (the embedder's tokenizer and
numpy release the GIL, so the two overlap on two cores); vectors are spilled to a float16 file
beside the index, then an IVF index is trained on an even sample of it and filled from it
chunk by chunk. Every step reports progress per chunk: ``triples`` (embedded), ``training``,
``indexing``. Small KGs (``<= ann_threshold`` facts) get the exact index, saved from the same
spill file. Resident memory is about: one chunk of sentences and vectors, the term table, the
id array, and the IVF-SQ8 index (~260 bytes a row) - see docs/decisions.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import queue
import threading
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pyoxigraph as ox

from kgteam.tools.embedding.base import Embedder, EmbeddingError
from kgteam.tools.naming import Naming
from kgteam.tools.vectors.compose import FactComposer, additive, sentence
from kgteam.tools.vectors.index import IVFBuilder, VectorIndex, ivf_train_rows
from kgteam.tools.vectors.met_facts import MetFacts
from kgteam.tools.vectors.verbalise import TermTable, fact_triples

DEFAULT_MEMORY_MB = 1024
SPILL = "triples.spill.f16"
# (what, done, total) -> None, called between chunks from the building (caller's) thread
StepProgress = Callable[[str, int, int], None]


def chunk_rows(memory_mb: int, dim: int) -> int:
    """Rows per chunk so that a chunk's sentences and vectors (float32, plus the embedder's own
    working copies) take about a tenth of the budget: 1,024 to 65,536."""
    per_row = dim * 4 * 4 + 400  # vectors and the embedder's intermediates, plus one sentence
    return int(min(65_536, max(1_024, memory_mb * 1_000_000 // 10 // per_row)))


def _chunks(store: ox.Store, labels: dict[str, str], table: TermTable, naming: Naming, rows: int,
            texts: bool = True) -> Iterator[tuple[np.ndarray, list[str]]]:
    """Chunks of ``rows`` facts: term ids and (``texts``) sentences; without, an empty list."""
    ids: array[int] = array("i")
    sentences: list[str] = []
    n = 0
    for s, p, o, text in fact_triples(store, labels, table, naming, texts=texts):
        ids.extend((s, p, o))
        if texts:
            sentences.append(text)
        n += 1
        if n == rows:
            yield np.frombuffer(ids, dtype=np.int32).reshape(-1, 3).copy(), sentences
            ids, sentences, n = array("i"), [], 0
    if n:
        yield np.frombuffer(ids, dtype=np.int32).reshape(-1, 3).copy(), sentences


def _ahead(chunks: Iterator[tuple[np.ndarray, list[str]]]) -> Iterator[tuple[np.ndarray, list[str]]]:
    """The chunks, made one ahead on a thread (a bounded queue: at most two wait in memory)."""
    box: queue.Queue[tuple[np.ndarray, list[str]] | BaseException | None] = queue.Queue(maxsize=2)
    stop = threading.Event()

    def run() -> None:
        try:
            for chunk in chunks:
                while not stop.is_set():
                    try:
                        box.put(chunk, timeout=0.2)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            box.put(None)
        except BaseException as exc:  # re-raised in the caller's thread
            box.put(exc)

    worker = threading.Thread(target=run, name="kg-verbalise", daemon=True)
    worker.start()
    try:
        while True:
            item = box.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # let a producer blocked on a full queue see the stop
            with contextlib.suppress(queue.Empty):
                box.get_nowait()
            worker.join(0.05)


def _give_back_freed_memory() -> None:
    """Asks glibc to return freed heap pages to the system (elsewhere: nothing to do)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _spilled(spill: Path, dim: int, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of the spill file as float32, read (not mapped: pages of a 2 GB map
    that a build has walked count in its resident memory)."""
    with open(spill, "rb") as fh:
        fh.seek(start * dim * 2)
        rows = np.fromfile(fh, dtype=np.float16, count=(stop - start) * dim)
    return rows.reshape(-1, dim).astype(np.float32)


def _training_sample(spill: Path, dim: int, n: int, rows: int, train_rows: int) -> np.ndarray:
    """The first ``train_rows`` of every ``n // train_rows``-th spilled row (an even sample),
    read a chunk of ``rows`` at a time. Each chunk's rows are copied out: a strided view would
    keep the whole chunk alive (4 GB at 4M rows)."""
    step = max(1, n // max(1, train_rows))
    sample = [_spilled(spill, dim, start, min(n, start + rows))[(-start) % step :: step].copy()
              for start in range(0, n, rows)]
    return np.concatenate(sample)[:train_rows] if sample else np.zeros((0, dim), np.float32)


def build_triple_index(store: ox.Store, folder: Path, embedder: Embedder, labels: dict[str, str], naming: Naming,
                       *, facts: int, progress: StepProgress | None = None, ann_threshold: int,
                       memory_mb: int = DEFAULT_MEMORY_MB, met: MetFacts | None = None,
                       ) -> tuple[int, str]:
    """Writes ``triples.{npy,ivf}``, ``triples.ids.npy`` and ``terms.json`` into ``folder``;
    returns the rows indexed and the index kind. ``facts`` (an estimate) sizes the progress bars.
    ``met``: the facts as the load met them; else they are read from the store. The term table,
    the ids and the composer are let go before the index is filled (a 4M-fact build's peak)."""

    def report(what: str, done: int, total: int) -> None:
        if progress is not None:
            progress(what, done, total)

    rows = chunk_rows(memory_mb, embedder.dim)
    if met is not None:
        report("facts", 0, 2)
        table = met.table()
        report("facts", 1, 2)
        met_ids = met.fact_ids()
        met.release()
        facts = len(met_ids)
        report("facts", 2, 2)
    else:
        table = TermTable()
    spill = folder / SPILL
    id_chunks: list[np.ndarray] = []
    n = 0
    report("triples", 0, facts)
    try:
        with open(spill, "wb") as fh:
            adds = additive(embedder)
            composer = FactComposer(adds, table) if adds is not None else None
            # with an additive embedder, the verbalising thread makes no sentences
            chunks = ((met_ids[i : i + rows], []) for i in range(0, facts, rows)) if met is not None else \
                _ahead(_chunks(store, labels, table, naming, rows, texts=composer is None))
            for ids, sentences in chunks:
                vecs = composer.vectors(ids) if composer is not None else None
                if vecs is None:
                    vecs = embedder.embed(sentences or [sentence(table, *row) for row in ids.tolist()])
                if vecs.shape != (len(ids), embedder.dim):
                    raise EmbeddingError(f"embedder {embedder.name} returned shape {vecs.shape} for triples")
                fh.write(np.ascontiguousarray(vecs, dtype=np.float16).tobytes())
                if met is None:  # the met ids are one array already
                    id_chunks.append(ids)
                n += len(ids)
                report("triples", n, max(facts, n))
            ids = vecs = None  # the last chunk: its ids are a view that would keep all the ids alive
        if met is not None:
            ids_all = met_ids
            del met_ids
        else:
            ids_all = np.concatenate(id_chunks) if id_chunks else np.zeros((0, 3), np.int32)
        np.save(folder / "triples.ids.npy", ids_all.reshape(-1, 3), allow_pickle=False)
        (folder / "terms.json").write_text(json.dumps(table.to_json()), encoding="utf-8")
        del id_chunks, ids_all, table, composer, chunks
        _give_back_freed_memory()
        if n <= ann_threshold:
            index = VectorIndex.build(_spilled(spill, embedder.dim, 0, n), kind="exact")
        else:
            builder = IVFBuilder(embedder.dim, n)
            report("training", 0, 1)
            builder.train(_training_sample(spill, embedder.dim, n, rows, ivf_train_rows(n)))
            report("training", 1, 1)
            report("indexing", 0, n)
            for start in range(0, n, rows):
                builder.add(_spilled(spill, embedder.dim, start, min(n, start + rows)))
                report("indexing", min(n, start + rows), n)
            index = builder.finish()
        index.save(folder / "triples")
        return n, index.kind
    finally:
        spill.unlink(missing_ok=True)
