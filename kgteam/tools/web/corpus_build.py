"""``build_corpus``: files → a named local corpus under ``<home>/corpora/<name>/``.

Layout: ``manifest.json`` (written last: what made the corpus), ``chunks.sqlite`` (one row per
chunk: text, title, url, document id, chunk number), ``bm25/`` (a tantivy index over titles and
chunk text, English stemming, BM25), and ``vectors.npy`` or ``vectors.hnsw`` (one unit row per
chunk from the embedder named in the manifest). Row ``i`` is the same chunk in all three.

Like a KG load, the corpus is built in a hidden sibling folder and renamed into place only when
complete, under a per-name lock, so a bad file, a crash or Ctrl-C leaves the previous corpus (or
none) as it was.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import tantivy
from pydantic import BaseModel

from kgteam.tools.embedding.base import Embedder, EmbeddingError
from kgteam.tools.loading.layout import (
    OLD_PREFIX,
    TMP_PREFIX,
    dir_size,
    kg_home,
    name_lock,
    recover,
    swap_into_place,
)
from kgteam.tools.vectors.index import VectorIndex
from kgteam.tools.web.chunking import DEFAULT_CHUNK_CHARS, DEFAULT_OVERLAP, check_sizes, chunk_text
from kgteam.tools.web.errors import CorpusError
from kgteam.tools.web.readers import CsvColumns, SourceDoc, detect_format, read_documents

LAYOUT_VERSION = 1
MANIFEST = "manifest.json"
CHUNKS_DB = "chunks.sqlite"
BM25_DIR = "bm25"
VECTORS_STEM = "vectors"
EMBED_BATCH = 2048
# Above this many chunks the dense index is HNSW: an exact scan reads rows x dim x 4 bytes per query
# (100 MB at 100k chunks: 10-35 ms on the loaded 2-core machine), HNSW about a millisecond.
DENSE_EXACT_MAX_ROWS = 50_000
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")

# (phase, done, total): phases "read" (files), "index" (chunks into BM25), "embed" (chunks embedded)
CorpusProgress = Callable[[str, int, int], None]


class CorpusSource(BaseModel):
    path: str
    format: str
    bytes: int
    documents: int


class CorpusVectors(BaseModel):
    embedder: str
    dim: int
    kind: str  # exact (numpy) or hnsw


class CorpusManifest(BaseModel):
    layout_version: int = LAYOUT_VERSION
    name: str
    documents: int
    chunks: int
    chunk_chars: int
    overlap: int
    sources: list[CorpusSource]
    vectors: CorpusVectors | None = None
    disk_bytes: int = 0
    build_seconds: float = 0.0
    created_at: str
    path: str | None = None  # where it was read from (not written)


def corpora_dir(home: Path | str | None = None) -> Path:
    """``<home>/corpora``: beside ``kgs/`` in the kgteam home (``$KGTEAM_HOME`` or ``~/.kgteam``)."""
    return Path(home if home is not None else kg_home()).expanduser() / "corpora"


def check_corpus_name(name: str) -> str:
    if not _NAME_RE.match(name) or ".." in name:
        raise CorpusError(f"invalid corpus name {name!r}: use letters, digits, '_', '.', '-' "
                          "(start with a letter or digit)")
    return name


def bm25_schema() -> tantivy.Schema:
    """Chunk text and title under English stemming (BM25); ``row`` links a hit to its chunk."""
    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("row", stored=False, indexed=False, fast=True)
    sb.add_text_field("title", stored=False, tokenizer_name="en_stem", index_option="freq")
    sb.add_text_field("text", stored=False, tokenizer_name="en_stem", index_option="freq")
    return sb.build()


def embedding_text(title: str | None, text: str) -> str:
    """What is embedded for a chunk: its title on top, since later chunks do not repeat it."""
    return f"{title}\n{text}" if title else text


def _unique(doc_id: str, seen: dict[str, int]) -> str:
    n = seen.get(doc_id, 0)
    seen[doc_id] = n + 1
    return doc_id if n == 0 else f"{doc_id}~{n + 1}"


def _read_all(files: Sequence[Path], csv_columns: CsvColumns | None,
              progress: CorpusProgress | None) -> tuple[list[SourceDoc], list[CorpusSource]]:
    for path in files:  # every file type is checked before any is read
        if not path.exists():
            raise CorpusError(f"{path}: no such file")
        detect_format(path)
    docs: list[SourceDoc] = []
    sources: list[CorpusSource] = []
    for n, path in enumerate(files):
        before = len(docs)
        docs.extend(read_documents(path, csv_columns=csv_columns))
        if len(docs) == before:
            raise CorpusError(f"{path}: holds no text to index")
        sources.append(CorpusSource(path=str(path.resolve()), format=detect_format(path), bytes=path.stat().st_size,
                                    documents=len(docs) - before))
        if progress is not None:
            progress("read", n + 1, len(files))
    return docs, sources


def _write_chunks(folder: Path, docs: list[SourceDoc], chunk_chars: int, overlap: int) -> list[tuple]:
    rows: list[tuple] = []
    seen: dict[str, int] = {}
    for doc in docs:
        doc_id = _unique(doc.doc_id, seen)
        for n, text in enumerate(chunk_text(doc.text, chunk_chars, overlap)):
            rows.append((len(rows), doc_id, n, doc.title, doc.url, text))
    db = sqlite3.connect(folder / CHUNKS_DB)
    try:
        db.execute("CREATE TABLE chunks (row INTEGER PRIMARY KEY, doc_id TEXT NOT NULL, chunk INTEGER NOT NULL, "
                   "title TEXT, url TEXT, text TEXT NOT NULL)")
        db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)", rows)
        db.commit()
    finally:
        db.close()
    return rows


def _index_bm25(folder: Path, rows: list[tuple], progress: CorpusProgress | None) -> None:
    path = folder / BM25_DIR
    path.mkdir()
    index = tantivy.Index(bm25_schema(), path=str(path))
    writer = index.writer(heap_size=128_000_000)
    step = max(1, len(rows) // 100)
    for row, _doc_id, _n, title, _url, text in rows:
        doc = tantivy.Document(title=title or "", text=text)
        doc.add_unsigned("row", row)  # a keyword int would be an i64, which the u64 column refuses
        writer.add_document(doc)
        if progress is not None and (row + 1) % step == 0:
            progress("index", row + 1, len(rows))
    writer.commit()
    writer.wait_merging_threads()
    if progress is not None:
        progress("index", len(rows), len(rows))


def _embed(folder: Path, rows: list[tuple], embedder: Embedder, progress: CorpusProgress | None,
           ann_threshold: int) -> CorpusVectors:
    vectors = np.empty((len(rows), embedder.dim), dtype=np.float32)
    for start in range(0, len(rows), EMBED_BATCH):
        batch = rows[start : start + EMBED_BATCH]
        out = embedder.embed([embedding_text(r[3], r[5]) for r in batch])
        if out.shape != (len(batch), embedder.dim):
            raise EmbeddingError(f"embedder {embedder.name} returned shape {out.shape} for {len(batch)} chunks")
        vectors[start : start + len(batch)] = out
        if progress is not None:
            progress("embed", start + len(batch), len(rows))
    index = VectorIndex.build(vectors, kind="hnsw" if len(rows) > ann_threshold else "exact")
    index.save(folder / VECTORS_STEM)
    return CorpusVectors(embedder=embedder.name, dim=embedder.dim, kind=index.kind)


def _default_embedder() -> Embedder | None:
    from kgteam.tools.embedding import default_embedder

    return default_embedder()


def build_corpus(name: str, files: Sequence[str | Path], *, home: Path | str | None = None,
                 chunk_chars: int = DEFAULT_CHUNK_CHARS, overlap: int = DEFAULT_OVERLAP,
                 csv_columns: CsvColumns | None = None, embed: bool | Embedder = True,
                 progress: CorpusProgress | None = None, ann_threshold: int = DENSE_EXACT_MAX_ROWS) -> CorpusManifest:
    """Builds (or rebuilds) corpus ``name`` from ``files``; the previous one stays until this succeeds.

    ``embed``: True for the embedded default embedder (skipped when it is not installed), False
    for BM25 only, or an ``Embedder`` to use. Raises :class:`CorpusError` for bad names, sizes
    and files (nothing is written then).
    """
    check_corpus_name(name)
    try:
        check_sizes(chunk_chars, overlap)
    except ValueError as exc:
        raise CorpusError(str(exc)) from None
    paths = [Path(f).expanduser() for f in files]
    if not paths:
        raise CorpusError("give at least one file to index")
    embedder = (_default_embedder() if embed is True else None) if isinstance(embed, bool) else embed
    started = time.perf_counter()
    corpora = corpora_dir(home)
    with name_lock(corpora, name):
        recover(corpora, name)
        tmp = corpora / f"{TMP_PREFIX}{name}+{uuid.uuid4().hex[:12]}"
        tmp.mkdir(parents=True)
        try:
            docs, sources = _read_all(paths, csv_columns, progress)
            rows = _write_chunks(tmp, docs, chunk_chars, overlap)
            _index_bm25(tmp, rows, progress)
            vectors = _embed(tmp, rows, embedder, progress, ann_threshold) if embedder is not None else None
            manifest = CorpusManifest(
                name=name, documents=len(docs), chunks=len(rows), chunk_chars=chunk_chars, overlap=overlap,
                sources=sources, vectors=vectors, created_at=datetime.now(UTC).isoformat(timespec="seconds"))
            del rows, docs
            manifest.disk_bytes = dir_size(tmp)
            manifest.build_seconds = round(time.perf_counter() - started, 3)
            (tmp / MANIFEST).write_text(manifest.model_dump_json(indent=2, exclude={"path"}), encoding="utf-8")
            final = swap_into_place(corpora, name, tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    manifest.path = str(final)
    return manifest


def read_manifest(folder: Path) -> CorpusManifest:
    path = folder / MANIFEST
    try:
        manifest = CorpusManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorpusError(f"{folder} is not a corpus (no {MANIFEST})") from None
    except ValueError as exc:
        raise CorpusError(f"{path} is unreadable ({exc}); rebuild the corpus with `kgteam corpus add`") from None
    if manifest.layout_version != LAYOUT_VERSION:
        raise CorpusError(f"{folder} has corpus layout {manifest.layout_version}, this kgteam reads "
                          f"{LAYOUT_VERSION}; rebuild it with `kgteam corpus add`")
    manifest.path = str(folder)
    return manifest


def list_corpora(home: Path | str | None = None) -> list[CorpusManifest]:
    """Every complete corpus in the home, by name (unfinished or broken folders are left out)."""
    root = corpora_dir(home)
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and _NAME_RE.match(folder.name) and (folder / MANIFEST).is_file():
            try:
                found.append(read_manifest(folder))
            except CorpusError:
                continue
    return found


def remove_corpus(name: str, home: Path | str | None = None) -> Path:
    """Deletes corpus ``name`` (under its lock, so a build of it is not cut in half)."""
    check_corpus_name(name)
    corpora = corpora_dir(home)
    with name_lock(corpora, name):
        recover(corpora, name)
        final = corpora / name
        if not (final / MANIFEST).is_file():
            raise CorpusError(f"no corpus {name!r} in {corpora}{_available(home)}")
        old = corpora / f"{OLD_PREFIX}{name}+{uuid.uuid4().hex[:12]}"
        os.rename(final, old)
        shutil.rmtree(old, ignore_errors=True)
    return final


def _available(home: Path | str | None) -> str:
    from kgteam.tools.web.builtin import BUILTIN_CORPORA

    names = [m.name for m in list_corpora(home)]
    there = f"; corpora there: {', '.join(names)}" if names else ""
    builtin = [n for n in BUILTIN_CORPORA if n not in names]
    return (there + (f"; built in: {', '.join(builtin)}" if builtin else "")
            + "; create one with `kgteam corpus add NAME FILES...`")


def corpus_folder(name: str, home: Path | str | None = None) -> Path:
    """The folder of an existing corpus, or a CorpusError that lists the ones there are."""
    check_corpus_name(name)
    folder = corpora_dir(home) / name
    if not (folder / MANIFEST).is_file():
        raise CorpusError(f"no corpus {name!r} in {corpora_dir(home)}{_available(home)}")
    return folder
