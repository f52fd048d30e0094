"""A KG's ``vectors/`` folder: building it from the store, opening it, and searching it.

Files: ``relations.npy`` (one row per relation text) + ``relations.json`` (IRIs, labels, texts,
row owners); ``triples.npy`` or ``triples.ivf`` (an older KG: ``triples.hnsw``) + ``triples.ids.npy``
(subject, predicate, object term ids per row) + ``terms.json``. Which embedder made them is in the KG manifest.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyoxigraph as ox

from kgteam.tools.embedding.base import Embedder, EmbeddingError
from kgteam.tools.loading.layout import VECTORS_DIR
from kgteam.tools.loading.manifest import VectorsInfo
from kgteam.tools.naming import DEFAULT_NAMING, Naming
from kgteam.tools.vectors.index import EXACT_MAX_ROWS, VectorIndex
from kgteam.tools.vectors.met_facts import MetFacts
from kgteam.tools.vectors.stream import DEFAULT_MEMORY_MB, build_triple_index
from kgteam.tools.vectors.verbalise import fact_predicates, read_labels, relation_texts

EMBED_BATCH = 4096
INFO_FILE = "info.json"
# (what, done, total) -> None, called between batches from the building thread
EmbedProgress = Callable[[str, int, int], None]


def _embed_all(embedder: Embedder, texts: list[str], what: str, progress: EmbedProgress | None) -> np.ndarray:
    out = np.empty((len(texts), embedder.dim), dtype=np.float32)
    if progress is not None:
        progress(what, 0, len(texts))
    for i in range(0, len(texts), EMBED_BATCH):
        chunk = embedder.embed(texts[i : i + EMBED_BATCH])
        if chunk.shape != (min(EMBED_BATCH, len(texts) - i), embedder.dim):
            raise EmbeddingError(f"embedder {embedder.name} returned shape {chunk.shape} for {what}")
        out[i : i + len(chunk)] = chunk
        if progress is not None:
            progress(what, i + len(chunk), len(texts))
    return out


def build_vectors(store: ox.Store, folder: Path, embedder: Embedder, *, triples: bool = True,
                  progress: EmbedProgress | None = None, ann_threshold: int = EXACT_MAX_ROWS,
                  naming: Naming = DEFAULT_NAMING, facts: int | None = None,
                  memory_mb: int = DEFAULT_MEMORY_MB, met: MetFacts | None = None) -> VectorsInfo:
    """Embeds the store's relations (and facts) into ``folder`` (created; must not exist yet).

    ``facts`` (the KG's fact count, for progress totals; default: the store's size) and
    ``memory_mb`` (the triple build's budget) matter only with ``triples``. ``met``: the facts and
    names the load met, instead of reading them back from the store."""
    started = time.perf_counter()
    folder.mkdir(parents=True)
    if met is not None:
        predicates, labels = met.predicates(), met.names
    else:
        if progress is not None:  # seconds to a minute on millions of names: a step of its own
            progress("names", 0, 1)
        predicates = fact_predicates(store, naming)
        labels = read_labels(store, naming, None if triples else predicates)
        if progress is not None:
            progress("names", 1, 1)
    iris, texts, owners = relation_texts(store, labels, naming, predicates)
    rel_vecs = _embed_all(embedder, texts, "relations", progress)
    np.save(folder / "relations.npy", rel_vecs, allow_pickle=False)
    first_text = {owner: row for row, owner in reversed(list(enumerate(owners)))}
    meta = {"iris": iris, "labels": [texts[first_text[n]] for n in range(len(iris))], "texts": texts, "owners": owners}
    (folder / "relations.json").write_text(json.dumps(meta), encoding="utf-8")
    n_triples, kind = 0, "exact"
    if triples:
        n_triples, kind = build_triple_index(
            store, folder, embedder, labels, naming, facts=len(store) if facts is None else facts,
            progress=progress, ann_threshold=ann_threshold, memory_mb=memory_mb, met=met)
    info = VectorsInfo(embedder=embedder.name, dim=embedder.dim, relations=len(iris), relation_rows=len(texts),
                       triples=n_triples, triples_kind=kind, build_seconds=round(time.perf_counter() - started, 3))
    # written last and inside the folder, so the files and what made them are swapped in together
    (folder / INFO_FILE).write_text(info.model_dump_json(indent=2), encoding="utf-8")
    return info


@dataclass(frozen=True)
class RelationMatch:
    iri: str
    label: str
    matched: str  # the relation text that was closest
    score: float  # cosine similarity


@dataclass(frozen=True)
class TripleMatch:
    subject: str
    predicate: str
    object: str
    object_kind: str  # u, l or b
    object_datatype: str  # literal datatype, "@lang", or ""
    subject_label: str
    predicate_label: str
    object_label: str
    score: float


class KGVectors:
    """An opened ``vectors/`` folder. Relation vectors load at once (small); triples on first use."""

    def __init__(self, folder: Path, info: VectorsInfo) -> None:
        self.folder = folder
        self.info = info
        meta = json.loads((folder / "relations.json").read_text(encoding="utf-8"))
        self.relation_iris: list[str] = meta["iris"]
        self.relation_labels: list[str] = meta["labels"]
        self.relation_texts: list[str] = meta["texts"]
        self.relation_owners = np.asarray(meta["owners"], dtype=np.int64)
        self.relations = VectorIndex(info.dim, "exact", matrix=np.load(folder / "relations.npy", allow_pickle=False))
        self._triples: tuple[VectorIndex, np.ndarray, dict[str, list[str]]] | None = None
        self._lock = threading.Lock()

    @classmethod
    def open(cls, kg_folder: Path) -> KGVectors | None:
        """The KG's vectors, or None when it has none (or an unfinished folder)."""
        folder = kg_folder / VECTORS_DIR
        if not (folder / INFO_FILE).is_file():
            return None
        try:
            info = VectorsInfo.model_validate_json((folder / INFO_FILE).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise EmbeddingError(f"{folder / INFO_FILE} is unreadable ({exc}); rebuild with `kgteam embed NAME`") \
                from None
        return cls(folder, info)

    @property
    def embedder_name(self) -> str:
        return self.info.embedder

    @property
    def has_triples(self) -> bool:
        return self.info.triples > 0

    def check(self, embedder: Embedder | None) -> Embedder:
        """The embedder itself, if it is the one the vectors were made with; else a clear error."""
        if embedder is None:
            raise EmbeddingError(f"this KG's vectors were made with {self.info.embedder}, and no embedder is "
                                 "configured (kg.embedder)")
        if embedder.name != self.info.embedder or embedder.dim != self.info.dim:
            raise EmbeddingError(
                f"this KG's vectors were made with {self.info.embedder} ({self.info.dim} dims), not with "
                f"{embedder.name} ({embedder.dim} dims): use that embedder (kg.embedder in the team file) or "
                f"rebuild the vectors with `kgteam embed NAME`"
            )
        return embedder

    def search_relations(self, query: np.ndarray, k: int) -> list[RelationMatch]:
        """The ``k`` relations with the closest text (each relation once, by its best text)."""
        scores, rows = self.relations.search(query, min(self.relations.rows, k * 4 + 8))
        out: list[RelationMatch] = []
        seen: set[int] = set()
        for score, row in zip(scores[0], rows[0], strict=True):
            owner = int(self.relation_owners[row])
            if owner in seen:
                continue
            seen.add(owner)
            out.append(RelationMatch(self.relation_iris[owner], self.relation_labels[owner],
                                     self.relation_texts[row], float(score)))
            if len(out) == k:
                break
        return out

    def _triple_index(self) -> tuple[VectorIndex, np.ndarray, dict[str, list[str]]]:
        with self._lock:
            if self._triples is None:
                if not self.has_triples:
                    raise EmbeddingError("this KG has no triple vectors; build them with `kgteam index NAME`")
                ids = np.load(self.folder / "triples.ids.npy", allow_pickle=False)
                terms = json.loads((self.folder / "terms.json").read_text(encoding="utf-8"))
                index = VectorIndex.open(self.folder / "triples", self.info.dim, self.info.triples_kind,  # type: ignore[arg-type]
                                         int(ids.shape[0]))
                self._triples = (index, ids, terms)
            return self._triples

    def search_triples(self, query: np.ndarray, k: int) -> list[TripleMatch]:
        index, ids, terms = self._triple_index()
        scores, rows = index.search(query, k)
        values, kinds, dts, labels = terms["values"], terms["kinds"], terms["datatypes"], terms["labels"]
        out = []
        for score, row in zip(scores[0], rows[0], strict=True):
            if row < 0:  # an IVF search that found fewer than k rows in the lists it visited
                continue
            s, p, o = (int(x) for x in ids[row])
            out.append(TripleMatch(values[s], values[p], values[o], kinds[o], dts[o], labels[s], labels[p],
                                   labels[o], float(score)))
        return out
