"""Elasticsearch label backend: the scale-out twin of :mod:`tantivy_index`.

Same documents (one per label or alias of an IRI), same normalised strings and the same
rapidfuzz reranker (:func:`kgteam.tools.text_normalize.rerank`); only candidate gathering
runs in Elasticsearch, as one ``bool``/``should`` query: exact keyword (boosted), words with
``fuzziness: AUTO``, character 3-grams, and a fuzzy match on the whole normalised label.

Implements both ``LabelIndex`` (``search``, ``label_of``) and ``LabelIndexWriter`` (``add``,
``commit``), so a KG load can fill it the way it fills the tantivy index.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

from kgteam.tools.backends.base import LabelDoc, LabelKind
from kgteam.tools.text_normalize import Candidate, normalize_label, rerank
from kgteam.tools.types import LabelHit

KINDS: tuple[LabelKind, ...] = ("entity", "relation")
DEFAULT_INDEX = "kgteam-labels"

# Boosts of the should-clauses; only the candidate set matters, the order comes from rerank().
EXACT_BOOST = 10.0
FUZZY_LABEL_BOOST = 4.0
WORDS_BOOST = 3.0
NGRAM_BOOST = 1.0

SOURCE_FIELDS = ["iri", "label", "matched", "exact"]


def index_body() -> dict[str, Any]:
    """Settings and mappings of the label index (``PUT /<index>`` body)."""
    return {
        "settings": {
            "analysis": {
                "normalizer": {
                    "label_exact": {"type": "custom", "filter": ["lowercase", "asciifolding"]},
                },
                "tokenizer": {
                    "label_3gram": {
                        "type": "ngram",
                        "min_gram": 3,
                        "max_gram": 3,
                        "token_chars": ["letter", "digit", "whitespace"],
                    },
                },
                "analyzer": {
                    "label_words": {
                        "type": "custom",
                        "tokenizer": "standard",
                        "filter": ["lowercase", "asciifolding"],
                    },
                    "label_3gram": {
                        "type": "custom",
                        "tokenizer": "label_3gram",
                        "filter": ["lowercase", "asciifolding"],
                    },
                },
            },
        },
        "mappings": {
            "dynamic": "strict",
            "properties": {
                "iri": {"type": "keyword"},
                "kind": {"type": "keyword"},
                "primary": {"type": "boolean"},
                "label": {"type": "keyword", "index": False},
                "matched": {"type": "keyword", "index": False},
                # normalize_label(matched): exact lookups and fuzzy whole-label lookups
                "exact": {"type": "keyword", "normalizer": "label_exact"},
                "text": {
                    "type": "text",
                    "analyzer": "label_words",
                    "fields": {"ngram": {"type": "text", "analyzer": "label_3gram"}},
                },
            },
        },
    }


def search_body(norm: str, kind: LabelKind, size: int) -> dict[str, Any]:
    """The candidate query for an already-normalised, non-empty query text."""
    return {
        "size": size,
        "_source": SOURCE_FIELDS,
        "query": {
            "bool": {
                "filter": [{"term": {"kind": kind}}],
                "should": [
                    {"term": {"exact": {"value": norm, "boost": EXACT_BOOST}}},
                    {"fuzzy": {"exact": {"value": norm, "fuzziness": "AUTO", "boost": FUZZY_LABEL_BOOST}}},
                    {"match": {"text": {"query": norm, "fuzziness": "AUTO", "boost": WORDS_BOOST}}},
                    {"match": {"text.ngram": {"query": norm, "boost": NGRAM_BOOST}}},
                ],
                "minimum_should_match": 1,
            }
        },
    }


def doc_id(kind: str, iri: str, norm: str) -> str:
    """Deterministic document id: re-indexing the same labels overwrites, never duplicates."""
    return hashlib.sha1(f"{kind}\x00{iri}\x00{norm}".encode()).hexdigest()


def label_actions(doc: LabelDoc, index: str) -> Iterator[dict[str, Any]]:
    """Bulk ``index`` actions for one LabelDoc (one per distinct normalised label/alias)."""
    texts = [t.strip() for t in (*doc.labels, *doc.aliases) if t and t.strip()]
    if not texts:
        return
    primary = texts[0]
    seen: set[str] = set()
    for text in texts:
        norm = normalize_label(text)
        if not norm or norm in seen:
            continue
        yield {
            "_op_type": "index",
            "_index": index,
            "_id": doc_id(doc.kind, doc.iri, norm),
            "_source": {
                "iri": doc.iri,
                "kind": doc.kind,
                "primary": not seen,
                "label": primary,
                "matched": text,
                "exact": norm,
                "text": norm,
            },
        }
        seen.add(norm)


class ElasticLabelIndex:
    """Label search on Elasticsearch through the official client.

    ``client`` is an ``elasticsearch.Elasticsearch`` or a URL (or list of URLs) to build one
    from, with ``api_key`` and any further ``Elasticsearch(...)`` keyword arguments (e.g.
    ``node_class="httpx"``, ``verify_certs``). The index is created by :meth:`create` (or
    lazily by the first :meth:`commit`).
    """

    name = "elasticsearch"

    def __init__(
        self,
        client: Any,
        index: str = DEFAULT_INDEX,
        *,
        candidates: int = 100,
        chunk_size: int = 1000,
        request_timeout: float = 10.0,
        api_key: str | None = None,
        **client_kwargs: Any,
    ) -> None:
        if isinstance(client, str | list | tuple):
            from elasticsearch import Elasticsearch

            if api_key:
                client_kwargs["api_key"] = api_key
            client = Elasticsearch(client, **client_kwargs)
        elif client_kwargs or api_key:
            raise TypeError("client options are only accepted together with a URL, not a client object")
        self.client = client
        self.index = index
        self.candidates = candidates
        self.chunk_size = chunk_size
        self.request_timeout = request_timeout
        self._pending: list[dict[str, Any]] = []
        self._created = False
        self.indexed = 0

    @classmethod
    def from_url(cls, url: str, index: str = DEFAULT_INDEX, **kwargs: Any) -> ElasticLabelIndex:
        """Same as ``ElasticLabelIndex(url, index, **kwargs)``; reads better at call sites."""
        return cls(url, index, **kwargs)

    # ------------------------------------------------------------------ writing

    def create(self, *, recreate: bool = False) -> None:
        """Create the index with :func:`index_body`; with ``recreate`` drop an existing one first."""
        exists = bool(self.client.indices.exists(index=self.index))
        if exists and recreate:
            self.client.indices.delete(index=self.index)
            exists = False
        if not exists:
            self.client.indices.create(index=self.index, **index_body())
        self._created = True

    def add(self, doc: LabelDoc) -> None:
        if doc.kind not in KINDS:
            raise ValueError(f"unknown label kind {doc.kind!r}")
        self._pending.extend(label_actions(doc, self.index))
        if len(self._pending) >= self.chunk_size:
            self._flush()

    def add_many(self, docs: Iterable[LabelDoc]) -> None:
        for doc in docs:
            self.add(doc)

    def _flush(self) -> None:
        if not self._pending:
            return
        from elasticsearch import helpers

        if not self._created:
            self.create()
        actions, self._pending = self._pending, []
        ok, _ = helpers.bulk(self.client, actions, chunk_size=self.chunk_size, stats_only=True)
        self.indexed += ok

    def commit(self) -> None:
        """Send what is buffered and refresh, so the next search sees it."""
        self._flush()
        if not self._created:
            self.create()
        self.client.indices.refresh(index=self.index)

    # ------------------------------------------------------------------ reading

    def _client(self) -> Any:
        return self.client.options(request_timeout=self.request_timeout)

    def search(self, text: str, k: int = 10, kind: LabelKind = "entity") -> list[LabelHit]:
        if kind not in KINDS:
            raise ValueError(f"unknown label kind {kind!r}")
        norm = normalize_label(text) if text else ""
        if k <= 0 or not norm:
            return []
        body = search_body(norm, kind, max(self.candidates, k))
        resp = self._client().search(index=self.index, **body)
        candidates = [
            Candidate(src["iri"], src["label"], src["matched"], src.get("exact"))
            for src in (hit.get("_source") or {} for hit in resp["hits"]["hits"])
            if src.get("iri") and src.get("matched")
        ]
        return [
            LabelHit(iri=r.iri, label=r.label, matched=r.matched, score=r.score, exact=r.exact, kind=kind)
            for r in rerank(text, candidates, k)
        ]

    def label_of(self, iris: Iterable[str]) -> dict[str, str]:
        """Primary label per known IRI, one ``terms`` query for the whole batch."""
        wanted = list(dict.fromkeys(i for i in iris if i))
        if not wanted:
            return {}
        resp = self._client().search(
            index=self.index,
            size=len(wanted),
            _source=["iri", "label"],
            query={"bool": {"filter": [{"terms": {"iri": wanted}}, {"term": {"primary": True}}]}},
        )
        out: dict[str, str] = {}
        for hit in resp["hits"]["hits"]:
            src = hit.get("_source") or {}
            if src.get("iri") and src.get("label") is not None:
                out.setdefault(src["iri"], src["label"])
        return out

    def close(self) -> None:
        self.client.close()
