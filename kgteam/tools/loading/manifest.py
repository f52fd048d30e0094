"""``manifest.json``: what a KG folder was built from, so a KG can be listed, checked and rebuilt."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, Field

from kgteam.tools.loading.layout import MANIFEST


class SourceInfo(BaseModel):
    path: str
    format: str
    sha256: str
    bytes: int
    records: int = 0  # triples read (before de-duplication) or label lines read


class KGCounts(BaseModel):
    triples: int  # distinct triples in the store, label triples included
    facts: int  # distinct triples from the input (without the labels the loader added)
    label_triples: int  # rdfs:label / skos:altLabel / skos:notation triples the loader added
    entities: int  # distinct IRIs used as subject or object (not as predicate)
    relations: int  # distinct predicates of the input
    label_docs: int  # documents in the label index (entities + relations)


class VectorsInfo(BaseModel):
    """The ``vectors/`` folder: which embedder made it (an index answers only that embedder's queries)."""

    embedder: str
    dim: int
    relations: int  # relations indexed
    relation_rows: int  # their texts (label, aliases, descriptions)
    triples: int = 0  # triples indexed (0: relation index only)
    triples_kind: str = "exact"  # exact (numpy) or hnsw
    build_seconds: float = 0.0


class EndpointInfo(BaseModel):
    """A KG registered with ``kgteam kg connect``: its triples stay on this SPARQL server; only the
    label index (and maybe vectors) live in the KG folder."""

    url: str
    default_graph: str | None = None  # sent as default-graph-uri (Virtuoso: the data's graph)
    timeout_s: float = 60.0  # the longest any one request may take
    page_size: int | None = None  # the server's row cap: larger SELECTs are fetched in pages


class KGManifest(BaseModel):
    layout_version: int = 1
    name: str
    format: str  # the input format, or "mixed"
    base_iri: str
    sources: list[SourceInfo]
    entity_labels: SourceInfo | None = None
    relation_labels: SourceInfo | None = None
    inverse_suffix: str | None = "_inverse"
    # predicates the user named as naming ones (`kgteam load --label-predicate`); read back by every
    # reader of names (kgteam.tools.naming), so they need not be given again
    label_predicates: list[str] = Field(default_factory=list)
    lang: str | None = None  # the label language shown first (`kgteam load --lang`), None: English or untagged
    # the input files' own prefixes (Turtle/TriG @prefix): `kgteam sparql` declares the ones a query
    # uses without declaring them, so a query can be written as the data file is
    prefixes: dict[str, str] = Field(default_factory=dict)
    counts: KGCounts
    disk_bytes: int = 0
    build_seconds: float = 0.0
    created_at: str
    kgteam_version: str
    vectors: VectorsInfo | None = None
    endpoint: EndpointInfo | None = None  # set: no store/ folder, the triples are on this endpoint
    path: Path | None = Field(default=None, exclude=True)  # where it was read from / built to

    def write(self, folder: Path) -> None:
        target = folder / MANIFEST
        tmp = folder / (MANIFEST + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(self.model_dump_json(indent=2))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)

    @classmethod
    def read(cls, folder: Path) -> KGManifest:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        manifest = cls.model_validate(data)
        manifest.path = folder
        return manifest
