"""Embedded label index on tantivy: words + character 3-grams + fuzzy words, reranked with rapidfuzz.

Layout of ``path``: ``entity/`` and ``relation/`` (one tantivy index per kind, so a relation
search never scans entity postings) and ``labels.json`` (format version, counts).

Every label or alias of an IRI is one tantivy document, so the label that matched is known
without re-scoring all of an IRI's labels. Normalisation is computed in Python
(:mod:`kgteam.tools.text_normalize`); the query side uses the very same functions and asks for
exact terms, so it needs no tokenizer. Format 2 lets tantivy cut the padded label into 3-grams
(a tokenizer registered by the writer; the Python n-grams of format 1 held the GIL the loader's
reading thread needs) and indexes no term of the fields only read back (docs/decisions.md). A
format-1 index still opens, and is appended to in its own format.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

import tantivy

from kgteam.tools.backends.base import LabelDoc, LabelKind
from kgteam.tools.text_normalize import (
    GRAM_PAD,
    GRAM_SIZE,
    Candidate,
    label_grams,
    label_words,
    name_edits,
    normalize_label,
    rerank,
)
from kgteam.tools.types import LabelHit

FORMAT_VERSION = 2
READABLE_FORMATS = (1, 2)
GRAM_TOKENIZER = "label_grams3"  # format 2: tantivy's own 3-grams of the padded label
STORED_ONLY_TOKENIZER = "label_unsearched"  # format 2: a field kept to be read back, with no terms
KINDS: tuple[LabelKind, ...] = ("entity", "relation")
META_FILE = "labels.json"

# Candidate budget: how many docs the BM25 query may hand to the reranker, and how many
# exact (normalised-equal) matches are always fetched on top of those.
DEFAULT_CANDIDATES = 100
DEFAULT_EXACT_CANDIDATES = 50
DEFAULT_FUZZY_LABEL_CANDIDATES = 50
# Run the (costlier) fuzzy-word pass only when the best first-pass score is below this;
# 101 = always, 0 = never.
DEFAULT_FUZZY_WORDS_BELOW = 80.0
WORD_BOOST = 3.0
# The entity writer's memory budget: the most it holds before writing a segment (see the writer).
ENTITY_HEAP_BYTES = 1_500_000_000
FUZZY_BOOST = 1.5
_GRAM_ANALYZER = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.ngram(GRAM_SIZE, GRAM_SIZE, False)).build()
# tantivy-py has no stored-only text field: the whole text as one token, dropped unless a single byte
_STORED_ONLY_ANALYZER = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).filter(tantivy.Filter.remove_long(2)).build()


def _schema(format: int = FORMAT_VERSION) -> tantivy.Schema:
    """The fields. Format 2 differs in tokenizers: ``grams`` is cut by tantivy (basic postings, so
    its BM25 length counts repeated grams, where format 1 counted distinct ones) and ``iri``,
    ``label`` and ``matched`` hold no terms."""
    sb = tantivy.SchemaBuilder()
    # Read back, never searched: format 2 indexes no term of them (a unique term per document made
    # the commit build three dictionaries as big as the KG's names: 5.6 s instead of 1.9 s at 342k).
    shown = "raw" if format == 1 else STORED_ONLY_TOKENIZER
    sb.add_text_field("iri", stored=True, tokenizer_name=shown, index_option="basic")
    # Indexed only on the primary-label document of each IRI: label_of() looks it up here.
    sb.add_text_field("primary_iri", stored=False, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("label", stored=True, tokenizer_name=shown, index_option="basic")
    sb.add_text_field("matched", stored=True, tokenizer_name=shown, index_option="basic")
    # The whole normalised label as one token: exact lookup, and fuzzy lookup of whole labels.
    sb.add_text_field("exact", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("words", stored=False, tokenizer_name="whitespace", index_option="freq")
    if format == 1:
        sb.add_text_field("grams", stored=False, tokenizer_name="whitespace", index_option="freq")
    else:
        sb.add_text_field("grams", stored=False, tokenizer_name=GRAM_TOKENIZER, index_option="basic")
    return sb.build()


def _padded(norm: str) -> str:
    """The text a format-2 ``grams`` field is given: the 3-grams tantivy cuts from it are
    :func:`~kgteam.tools.text_normalize.label_grams` of ``norm`` (repeats included)."""
    return GRAM_PAD + norm.replace(" ", GRAM_PAD) + GRAM_PAD


def _distinct_words(norm: str) -> str:
    """The text a ``words`` field is given: ``norm``'s distinct words in order. A normalised label
    is single-spaced, so one with no repeated word is given as it is (the common case at load)."""
    words = norm.split(" ")
    if len(words) == len(set(words)):
        return norm
    return " ".join(label_words(norm))


def _fuzzy_distance(word: str) -> int:
    """Edit distance allowed for one query word: none for tiny words, 2 for long ones."""
    if len(word) <= 3:
        return 0
    if len(word) <= 7:
        return 1
    return 2


def _label_distance(norm: str) -> int:
    """Edit distance allowed between the whole query and a whole label (tantivy caps it at 2)."""
    if len(norm) <= 2:
        return 0
    if len(norm) <= 5:
        return 1
    return 2


class TantivyLabelIndexWriter:
    """Bulk writer: ``add`` label docs, then ``commit`` once.

    Writes into ``path`` (created if missing). An existing index there is appended to unless
    ``overwrite=True``; KG loads build into a fresh directory and swap it in.

    One indexing thread and a large memory budget by default, so a load ends with one segment
    per kind: every fuzzy (edit-distance) lookup walks each segment's term dictionary, and at
    1.3M names six segments made the two-edit name check 6x dearer than one (0.71 ms vs 4.3 ms
    a span) while one segment cost the same as at 40k names. tantivy takes the budget as pages
    are filled, so a small KG does not use it.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        overwrite: bool = False,
        heap_size: int = ENTITY_HEAP_BYTES,
        num_threads: int = 1,
        format: int = FORMAT_VERSION,  # of a new index; an existing one is appended to in its own
    ) -> None:
        self.path = Path(path)
        if overwrite and self.path.exists():
            shutil.rmtree(self.path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._indexes: dict[str, tantivy.Index] = {}
        self._writers: dict[str, tantivy.IndexWriter] = {}
        self._heap = {"entity": heap_size, "relation": max(20_000_000, heap_size // 8)}
        self._threads = num_threads
        self._counts = {kind: 0 for kind in KINDS}
        self._closed = False
        self.format = _checked_format(self.path, {"format": format})
        meta = _read_meta(self.path)
        if meta:
            self.format = _checked_format(self.path, meta)  # an existing index is appended to in its own format
            for kind in KINDS:
                self._counts[kind] = int(meta.get("counts", {}).get(kind, 0))
        self._schema = _schema(self.format)

    def _writer(self, kind: str) -> tantivy.IndexWriter:
        writer = self._writers.get(kind)
        if writer is None:
            sub = self.path / kind
            sub.mkdir(exist_ok=True)
            index = tantivy.Index(self._schema, path=str(sub), reuse=True)
            if self.format >= 2:
                index.register_tokenizer(GRAM_TOKENIZER, _GRAM_ANALYZER)
                index.register_tokenizer(STORED_ONLY_TOKENIZER, _STORED_ONLY_ANALYZER)
            threads = self._threads if kind == "entity" else 1
            writer = index.writer(heap_size=self._heap[kind], num_threads=threads)
            self._indexes[kind] = index
            self._writers[kind] = writer
        return writer

    def add(self, doc: LabelDoc) -> None:
        if self._closed:
            raise RuntimeError("writer already committed")
        if doc.kind not in KINDS:
            raise ValueError(f"unknown label kind {doc.kind!r}")
        texts = [t for t in (*doc.labels, *doc.aliases) if t and t.strip()]
        if not texts:
            return
        primary = texts[0].strip()
        writer = self._writer(doc.kind)
        seen: set[str] = set()
        first = True
        for text in texts:
            text = text.strip()
            norm = normalize_label(text)
            if not norm or norm in seen:
                continue
            seen.add(norm)
            fields: dict[str, str] = {
                "iri": doc.iri,
                "label": primary,
                "matched": text,
                "exact": norm,
                "words": _distinct_words(norm),
                "grams": _padded(norm) if self.format >= 2 else " ".join(label_grams(norm)),
            }
            if first:
                fields["primary_iri"] = doc.iri
                first = False
            writer.add_document(tantivy.Document(**fields))
        if not first:
            self._counts[doc.kind] += 1

    def add_many(self, docs: Iterable[LabelDoc]) -> int:
        n = 0
        for doc in docs:
            self.add(doc)
            n += 1
        return n

    def commit(self) -> None:
        """Commit both kinds, wait for merges, and record counts; the writer is then closed."""
        if self._closed:
            return
        for kind in KINDS:
            self._writer(kind)  # make sure both sub-indexes exist, even when empty
        for writer in self._writers.values():
            writer.commit()
            writer.wait_merging_threads()
        self._writers.clear()
        self._indexes.clear()
        meta = {"format": self.format, "backend": "tantivy", "counts": self._counts}
        (self.path / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        self._closed = True

    def __enter__(self) -> TantivyLabelIndexWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()


def _read_meta(path: Path) -> dict | None:
    meta_path = path / META_FILE
    if not meta_path.exists():
        return None
    return json.loads(meta_path.read_text(encoding="utf-8"))


def _checked_format(path: Path, meta: dict) -> int:
    """The index's format, when this code reads it; else a ValueError that says what to do."""
    found = meta.get("format")
    if found not in READABLE_FORMATS:
        raise ValueError(f"label index at {path} has format {found}, this kgteam reads "
                         f"{', '.join(map(str, READABLE_FORMATS))}: load the KG again")
    return int(found)


class TantivyLabelIndex:
    """Read side: ``search`` (gather candidates in tantivy, rerank with rapidfuzz) and ``label_of``."""

    name = "tantivy"

    def __init__(
        self,
        path: str | Path,
        *,
        candidates: int = DEFAULT_CANDIDATES,
        exact_candidates: int = DEFAULT_EXACT_CANDIDATES,
        fuzzy_label_candidates: int = DEFAULT_FUZZY_LABEL_CANDIDATES,
        fuzzy_words: bool = True,
        fuzzy_words_below: float = DEFAULT_FUZZY_WORDS_BELOW,
    ) -> None:
        self.path = Path(path)
        meta = _read_meta(self.path)
        if meta is None:
            raise FileNotFoundError(f"no label index at {self.path} (missing {META_FILE})")
        self.format = _checked_format(self.path, meta)
        self.counts: dict[str, int] = dict(meta.get("counts", {}))
        self.candidates = candidates
        self.exact_candidates = exact_candidates
        self.fuzzy_label_candidates = fuzzy_label_candidates
        self.fuzzy_words = fuzzy_words
        self.fuzzy_words_below = fuzzy_words_below
        self._schema = _schema(self.format)
        self._searchers: dict[str, tantivy.Searcher] = {}
        for kind in KINDS:
            index = tantivy.Index.open(str(self.path / kind))
            self._searchers[kind] = index.searcher()

    def __len__(self) -> int:
        return sum(self.counts.values())

    def _query(self, norm: str, fuzzy_words: bool) -> tantivy.Query:
        schema = self._schema
        q = tantivy.Query
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for word in label_words(norm):
            clauses.append(
                (tantivy.Occur.Should, q.boost_query(q.term_query(schema, "words", word), WORD_BOOST))
            )
            distance = _fuzzy_distance(word) if fuzzy_words else 0
            if distance:
                fuzzy = q.fuzzy_term_query(
                    schema, "words", word, distance=distance, transposition_cost_one=True
                )
                clauses.append((tantivy.Occur.Should, q.boost_query(fuzzy, FUZZY_BOOST)))
        for gram in label_grams(norm):
            clauses.append((tantivy.Occur.Should, q.term_query(schema, "grams", gram)))
        return q.boolean_query(clauses)

    def _fetch(self, searcher: tantivy.Searcher, addresses, seen: set[tuple[int, int]]) -> list[Candidate]:
        out: list[Candidate] = []
        for addr in addresses:
            key = (addr.segment_ord, addr.doc)
            if key in seen:
                continue
            seen.add(key)
            doc = searcher.doc(addr)
            out.append(
                Candidate(
                    doc.get_first("iri"),
                    doc.get_first("label"),
                    doc.get_first("matched"),
                    doc.get_first("exact"),
                )
            )
        return out

    def _search_addresses(self, searcher: tantivy.Searcher, query: tantivy.Query, limit: int) -> list:
        return [addr for _, addr in searcher.search(query, limit, count=False).hits]

    def candidates_for(self, text: str, kind: LabelKind = "entity") -> list[Candidate]:
        """All candidates the cascade of :meth:`search` would gather, unranked (for benchmarks)."""
        return self._gather(text, kind, k=10)[0]

    def _gather(self, text: str, kind: LabelKind, k: int) -> tuple[list[Candidate], list]:
        """Gather candidates in cheap-to-costly passes, stopping as soon as the answer is clear.

        1. labels equal to the query (normalised) + BM25 top of words and 3-grams (a pure term
           disjunction, so tantivy's block-max pruning applies). Stop if an exact match exists.
        2. whole labels within edit distance 1 of the query (one automaton over the ``exact``
           terms: cheap). It catches typos in short names, whose grams match too much else.
        3. whole labels within distance 2, only if pass 2 found none (that automaton costs ~5x).
        4. fuzzy words (distance 1-2 per word) in the BM25 query, only if the best score so far
           is below ``fuzzy_words_below``: fuzzy clauses switch block-max pruning off.
        """
        norm = normalize_label(text)
        if not norm:
            return [], []
        searcher = self._searchers[kind]
        schema = self._schema
        Q = tantivy.Query
        seen: set[tuple[int, int]] = set()
        exact = self._search_addresses(searcher, Q.term_query(schema, "exact", norm), self.exact_candidates)
        addresses = exact + self._search_addresses(searcher, self._query(norm, False), self.candidates)
        candidates = self._fetch(searcher, addresses, seen)
        ranked = rerank(text, candidates, k)
        if exact:
            return candidates, ranked
        if self.fuzzy_label_candidates and len(norm) >= 3:
            hits = self._search_addresses(
                searcher, Q.fuzzy_term_query(schema, "exact", norm, distance=1), self.fuzzy_label_candidates
            )
            if not hits and _label_distance(norm) >= 2:
                hits = self._search_addresses(
                    searcher,
                    Q.fuzzy_term_query(schema, "exact", norm, distance=2),
                    self.fuzzy_label_candidates,
                )
            new = self._fetch(searcher, hits, seen)
            if new:
                candidates += new
                ranked = rerank(text, candidates, k)
        if self.fuzzy_words and (not ranked or ranked[0].score < self.fuzzy_words_below):
            hits = self._search_addresses(searcher, self._query(norm, True), self.candidates)
            new = self._fetch(searcher, hits, seen)
            if new:
                candidates += new
                ranked = rerank(text, candidates, k)
        return candidates, ranked

    def search(self, text: str, k: int = 10, kind: LabelKind = "entity") -> list[LabelHit]:
        """Best ``k`` labels of ``kind`` for ``text``: exact normalised matches first."""
        if kind not in KINDS:
            raise ValueError(f"unknown label kind {kind!r}")
        if k <= 0 or not text or not normalize_label(text):
            return []
        _, ranked = self._gather(text, kind, k)
        return [
            LabelHit(iri=r.iri, label=r.label, matched=r.matched, score=r.score, exact=r.exact, kind=kind)
            for r in ranked
        ]

    def search_names(self, text: str, k: int = 10, kind: LabelKind = "entity") -> list[LabelHit]:
        """Labels equal to ``text`` (normalised) or within :func:`name_edits` of it, best ``k`` first.

        Only the whole-label field is read: one term lookup and one edit-distance automaton over
        the label dictionary, no word or 3-gram postings. Its cost hardly grows with the number of
        labels, so a caller can ask "does this span name anything?" of every span of a question
        and run the full :meth:`search` only on the few that do.
        """
        if kind not in KINDS:
            raise ValueError(f"unknown label kind {kind!r}")
        norm = normalize_label(text) if text else ""
        if k <= 0 or not norm:
            return []
        searcher = self._searchers[kind]
        Q = tantivy.Query
        addresses = self._search_addresses(searcher, Q.term_query(self._schema, "exact", norm), self.exact_candidates)
        edits = name_edits(norm)
        if edits:
            near = Q.fuzzy_term_query(self._schema, "exact", norm, distance=edits)
            addresses += self._search_addresses(searcher, near, self.fuzzy_label_candidates)
        ranked = rerank(text, self._fetch(searcher, addresses, set()), k)
        return [LabelHit(iri=r.iri, label=r.label, matched=r.matched, score=r.score, exact=r.exact, kind=kind)
                for r in ranked]

    def label_of(self, iris: Iterable[str]) -> dict[str, str]:
        """Primary label of each known IRI (entities and relations); unknown IRIs are left out."""
        wanted = list(dict.fromkeys(i for i in iris if i))
        out: dict[str, str] = {}
        if not wanted:
            return out
        for kind in KINDS:
            missing = [i for i in wanted if i not in out]
            if not missing:
                break
            searcher = self._searchers[kind]
            query = tantivy.Query.term_set_query(self._schema, "primary_iri", missing)
            for _, addr in searcher.search(query, len(missing), count=False).hits:
                doc = searcher.doc(addr)
                out[doc.get_first("iri")] = doc.get_first("label")
        return out

    def close(self) -> None:
        self._searchers.clear()

    def __enter__(self) -> TantivyLabelIndex:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
