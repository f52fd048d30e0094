"""``build_kg``: input files -> a KG folder (Oxigraph store + tantivy label index + manifest), atomically.

The KG is built in a hidden sibling folder and swapped in with two renames only after every
input was read and indexed without error. A bad line, an exception or Ctrl-C at any point
removes the half-built folder and leaves the previous KG of that name as it was.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import queue
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyoxigraph as ox

from kgteam import __version__
from kgteam.tools.backends.base import LabelDoc
from kgteam.tools.embedding.base import Embedder
from kgteam.tools.iri import (
    RDFS_LABEL,
    SKOS_ALT_LABEL,
    SKOS_NOTATION,
    check_base_iri,
    default_base_iri,
    mint_entity_iri,
    mint_relation_iri,
)
from kgteam.tools.loading.errors import LoadError
from kgteam.tools.loading.formats import RDF_FORMATS, detect_format, normalise_format
from kgteam.tools.loading.labels import (
    LabelCollector,
    iri_label,
    name_label,
    relation_name_label,
)
from kgteam.tools.loading.layout import (
    LABELS_DIR,
    STORE_DIR,
    TMP_PREFIX,
    VECTORS_DIR,
    check_kg_name,
    dir_size,
    kgs_dir,
    name_lock,
    recover,
    swap_into_place,
)
from kgteam.tools.loading.manifest import KGCounts, KGManifest, SourceInfo
from kgteam.tools.loading.progress import LoadProgress, ProgressCallback, RichProgress
from kgteam.tools.loading.rdf_reader import read_rdf
from kgteam.tools.loading.sources import OpenedSource, first_line, open_source, sha256_file
from kgteam.tools.loading.text_readers import (
    INVERSE_SUFFIX,
    NameTriple,
    read_label_map,
    read_metaqa,
    read_tsv,
)
from kgteam.tools.naming import DEFAULT_NAMING, Naming
from kgteam.tools.vectors.met_facts import MetFacts
from kgteam.tools.vectors.policy import AUTO_TRIPLES_MAX_FACTS, VECTORS_MODES, VectorsMode, wants_triples
from kgteam.tools.vectors.stream import DEFAULT_MEMORY_MB
from kgteam.tools.vocabulary import DECLARING_PREDICATES

METAQA_BASE_IRI = "http://example.org/metaqa/"
_REPORT_EVERY = 1 << 14  # triples between progress events


@dataclass
class _Input:
    path: Path
    format: str
    size: int
    records: int = 0


@dataclass
class _Collected:
    """Everything met while streaming, needed afterwards for labels, counts and the index."""

    base: str
    entity_labels: dict[str, str]
    relation_labels: dict[str, str]
    text_entities: dict[str, str] = field(default_factory=dict)  # name -> its IRI as an N-Triples term, "<...>"
    text_relations: dict[str, str] = field(default_factory=dict)
    rdf_nodes: set[str] = field(default_factory=set)  # IRIs used as subject or object
    rdf_predicates: set[str] = field(default_factory=set)
    prefixes: dict[str, str] = field(default_factory=dict)  # the RDF files' own @prefix names
    naming: Naming = DEFAULT_NAMING
    rdf_labels: LabelCollector = field(init=False)
    # predicate IRI -> the node declaring it (``wd:P36 wikibase:directClaim wdt:P36``): its names are the predicate's
    declared: dict[str, str] = field(default_factory=dict)
    label_triples: int = 0
    met: MetFacts | None = None  # the facts' term ids, when the vectors will want them

    def __post_init__(self) -> None:
        self.rdf_labels = LabelCollector(self.naming)


_DECLARING = frozenset(DECLARING_PREDICATES)
_DISAMBIGUATED = re.compile(r"^(.*\S)\s+\([^()]+\)$")  # a title with a disambiguating suffix

# A load above this many triples is compacted once at its end (``Store.optimize``): one
# ``bulk_extend`` leaves its batches' files overlapping, and so do a name-triple load's last
# chunks, and nothing compacts a store opened read-only. Measured (docs/decisions.md): an RDF
# load at 1.4M triples took 1.9 s longer and queries were no faster; at 5.5M it took 5.4 s longer
# and the store answered 2.5x faster. At 5.5M triples of names it took 7.6 s, overlapping the
# label index's commit, and the questions' p95 fell by about a quarter.
OPTIMIZE_AFTER_TRIPLES = 2_000_000


def _compact(store: ox.Store) -> None:
    """Merges the store's overlapping files (RocksDB's full compaction, on this thread)."""
    store.optimize()


class _Reporter:
    """Turns stream positions into progress events, rate-limited by triple count."""

    def __init__(self, callback: ProgressCallback | None, inputs: list[_Input]) -> None:
        self.callback = callback
        self.total = sum(i.size for i in inputs)
        self.done_before = 0
        self.triples = 0
        self.position = 0  # input bytes read, of all inputs

    def read(self, source: str, position: int) -> None:
        self.position = self.done_before + position
        if self.callback is not None:
            self.callback(LoadProgress("read", source, self.triples, self.position, self.total))

    def embed(self, what: str, done: int, total: int) -> None:
        if self.callback is not None:
            self.callback(LoadProgress("embed", what, self.triples, self.total, self.total, docs=done,
                                       docs_total=total))

    def finish(self, what: str) -> None:
        """A step after the last input triple that shows no count (the store's final write)."""
        if self.callback is not None:
            self.callback(LoadProgress("finish", what, self.triples, self.total, self.total))

    def index(self, docs: int, docs_total: int) -> None:
        if self.callback is not None:
            self.callback(
                LoadProgress("index", None, self.triples, self.total, self.total, docs=docs, docs_total=docs_total)
            )


def _default_base(formats: Iterable[str], name: str) -> str:
    """MetaQA input gets MetaQA's published base (gold SPARQL uses it); anything else a per-KG base."""
    text_formats = {f for f in formats if f not in RDF_FORMATS}
    if text_formats == {"metaqa"}:
        return METAQA_BASE_IRI
    return default_base_iri(name)


def _resolve_inputs(sources: Sequence[str | Path], format: str | None) -> list[_Input]:
    if not sources:
        raise LoadError("no input files given")
    forced = normalise_format(format) if format else None
    inputs = []
    for source in sources:
        path = Path(source).expanduser()
        if not path.is_file():
            raise LoadError("no such file" if not path.exists() else "not a regular file", file=path)
        fmt = forced or _detect(path)
        inputs.append(_Input(path=path.resolve(), format=fmt, size=path.stat().st_size))
    return inputs


def _detect(path: Path) -> str:
    try:
        return detect_format(path)
    except LoadError:
        return detect_format(path, first_line(path))  # .txt: decided by the first line


def _read_labels_file(path: str | Path | None) -> tuple[dict[str, str], SourceInfo | None]:
    if path is None:
        return {}, None
    p = Path(path).expanduser()
    if not p.is_file():
        raise LoadError("no such labels file", file=p)
    with open_source(p) as src:
        mapping = read_label_map(src)
    info = SourceInfo(path=str(p.resolve()), format="tsv", sha256=sha256_file(p), bytes=p.stat().st_size,
                      records=len(mapping))
    return mapping, info


def _text_lines(triples: Iterator[NameTriple], col: _Collected, inp: _Input, rep: _Reporter,
                position: Callable[[], int], labeller: _Labeller | None) -> Iterator[str]:
    """N-Triples lines of name triples; with a ``labeller``, each new IRI's label lines follow its first triple.

    This is the hot loop of MetaQA/TSV loads: names are minted once (dict lookups after that),
    lines are plain strings (no pyoxigraph objects) and counters are kept in locals.
    """
    base = col.base
    entities = col.text_entities
    relations = col.text_relations
    source = str(inp.path)
    fresh: list[tuple[str, str, str]] = []
    met = col.met
    term_ids = met.ids if met is not None else None
    met_rows = met.rows if met is not None else None
    n = reported = 0
    next_report = _REPORT_EVERY
    try:
        last_s = last_st = None
        for s, r, o, _line in triples:
            if s == last_s:  # files are often grouped by subject: no lookup in the (big) name table
                st = last_st
            else:
                st = entities.get(s)
                if st is None:
                    st = entities[s] = f"<{mint_entity_iri(base, s)}>"
                    fresh.append((st, "entity", s))
                last_s, last_st = s, st
            ot = entities.get(o)
            if ot is None:
                ot = entities[o] = f"<{mint_entity_iri(base, o)}>"
                fresh.append((ot, "entity", o))
            rt = relations.get(r)
            if rt is None:
                rt = relations[r] = f"<{mint_relation_iri(base, r)}>"
                fresh.append((rt, "relation", r))
            if met_rows is not None:
                if fresh:
                    for term, _kind, _name in fresh:
                        met.term(term)  # type: ignore[union-attr]
                met_rows.extend((term_ids[st], term_ids[rt], term_ids[ot]))  # type: ignore[index]
            n += 1
            if n == next_report:
                next_report += _REPORT_EVERY
                rep.triples += n - reported
                inp.records += n - reported
                reported = n
                rep.read(source, position())
                if met is not None and met.over_limit():  # the triple index will not be built
                    col.met = met = term_ids = met_rows = None
            yield f"{st} {rt} {ot} .\n"
            if fresh:
                if labeller is not None:
                    for term, kind, name in fresh:
                        yield from labeller.lines(term, kind, name)
                fresh.clear()
    finally:
        rep.triples += n - reported
        inp.records += n - reported


def _text_quads(triples: Iterator[NameTriple], col: _Collected, inp: _Input, rep: _Reporter,
                position: Callable[[], int]) -> Iterator[ox.Quad]:
    """Quads of name triples, for loads that mix them with RDF files (labelled after the last triple)."""
    nodes: dict[str, ox.NamedNode] = {}
    named = ox.NamedNode
    for line in _text_lines(triples, col, inp, rep, position, None):
        s, p, o, _dot = line.split(" ", 3)
        terms = []
        for term in (s, p, o):
            node = nodes.get(term)
            if node is None:
                node = nodes[term] = named(term[1:-1])
            terms.append(node)
        yield ox.Quad(*terms)


def _rdf_quads(quads: Iterator[ox.Quad], col: _Collected, inp: _Input, rep: _Reporter,
               position: Callable[[], int], blank_prefix: str) -> Iterator[ox.Quad]:
    """Passes RDF quads through, noting IRIs, predicates and label literals on the way."""
    nodes = col.rdf_nodes
    predicates = col.rdf_predicates
    labels = col.rdf_labels
    declared = col.declared
    naming_predicates = frozenset(col.naming.all_predicates)
    named, literal, blank = ox.NamedNode, ox.Literal, ox.BlankNode
    blanks: dict[str, ox.BlankNode] = {}
    source = str(inp.path)
    n = reported = 0
    next_report = _REPORT_EVERY
    try:
        for quad in quads:
            s, p, o = quad.subject, quad.predicate, quad.object
            pv = p.value
            predicates.add(pv)
            if type(s) is named:
                nodes.add(s.value)
            if type(o) is named:
                nodes.add(o.value)
            elif type(o) is literal and pv in naming_predicates and type(s) is named:
                labels.add(s.value, pv, o.value, o.language)
            if pv in _DECLARING and type(o) is named and type(s) is named:
                declared.setdefault(o.value, s.value)
            if type(s) is blank or type(o) is blank:
                # Parsers name anonymous nodes ([] in Turtle) randomly, and ids are local to a file:
                # renumber them by first appearance per file, so reloads are identical and files never clash.
                if type(s) is blank:
                    s = blanks.get(s.value) or blanks.setdefault(s.value, blank(f"{blank_prefix}{len(blanks)}"))
                if type(o) is blank:
                    o = blanks.get(o.value) or blanks.setdefault(o.value, blank(f"{blank_prefix}{len(blanks)}"))
                quad = ox.Quad(s, p, o)
            n += 1
            if n == next_report:
                next_report += _REPORT_EVERY
                rep.triples += n - reported
                inp.records += n - reported
                reported = n
                rep.read(source, position())
            yield quad
    finally:
        rep.triples += n - reported
        inp.records += n - reported


def _source_quads(inp: _Input, index: int, col: _Collected, rep: _Reporter,
                  inverse_suffix: str | None) -> Iterator[ox.Quad]:
    """One input's quads (RDF, or name triples loaded together with RDF files)."""
    with open_source(inp.path) as src:
        position = src.bytes_read
        rep.read(str(inp.path), 0)
        if inp.format in RDF_FORMATS:
            blank_prefix = f"f{index}b"
            yield from _rdf_quads(read_rdf(src, inp.format, base_iri=col.base, prefixes=col.prefixes), col, inp, rep, position,
                                  blank_prefix)
        else:
            yield from _text_quads(_name_triples(src, inp, inverse_suffix), col, inp, rep, position)
    rep.done_before += inp.size
    rep.read(str(inp.path), 0)


def _source_lines(inp: _Input, col: _Collected, rep: _Reporter, inverse_suffix: str | None,
                  labeller: _Labeller) -> Iterator[str]:
    """One name-triple input's N-Triples lines, labels included."""
    with open_source(inp.path) as src:
        rep.read(str(inp.path), 0)
        yield from _text_lines(_name_triples(src, inp, inverse_suffix), col, inp, rep, src.bytes_read, labeller)
    rep.done_before += inp.size
    rep.read(str(inp.path), 0)


def _name_triples(src: OpenedSource, inp: _Input, inverse_suffix: str | None) -> Iterator[NameTriple]:
    if inp.format == "metaqa":
        return read_metaqa(src, inverse_suffix=inverse_suffix)
    return read_tsv(src, inverse_suffix=inverse_suffix)


_NT_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})
_NEEDS_ESCAPE = re.compile(r'["\\\n\r]')


class _Labeller:
    """Makes the label triples of each IRI and hands its index document to the index worker.

    With only name-based (MetaQA/TSV) input an IRI's labels are final when it is first met, so
    they are emitted right then and the label index is built while the store loads. RDF input
    may label an IRI anywhere in the file, so RDF IRIs are labelled after the last triple.
    """

    def __init__(self, col: _Collected, index: _IndexWorker, *, remember: bool = True) -> None:
        self.col = col
        self.index = index
        # the IRIs labelled so far, for remaining(); a names-only load labels each IRI once, as met
        self.done: set[str] | None = set() if remember else None
        self.predicates = {RDFS_LABEL: ox.NamedNode(RDFS_LABEL), SKOS_ALT_LABEL: ox.NamedNode(SKOS_ALT_LABEL),
                           SKOS_NOTATION: ox.NamedNode(SKOS_NOTATION)}

    def _labels(self, iri: str, kind: str, name: str | None) -> list[tuple[str, str, str | None]]:
        """The (predicate IRI, literal, language) label triples ``iri`` needs; sends its index document."""
        col = self.col
        if self.done is not None:
            self.done.add(iri)
        found = col.rdf_labels.get(iri)
        primary = found.primary() if found else None
        aliases: list[str] = []
        out: list[tuple[str, str, str | None]] = []
        declarer = col.declared.get(iri) if primary is None else None
        if declarer is not None and (named := col.rdf_labels.get(declarer)) is not None and named.primary():
            # a predicate named on the node that declares it: its names are written on the predicate
            # too, each in its language, so a reader's language choice holds for relations as well
            found, primary = named, named.primary()
            out += [(SKOS_ALT_LABEL if col.naming.is_alias(p) else RDFS_LABEL, t, lang)
                    for p, t, lang in dict.fromkeys(named.found)]
            col.label_triples += len(out)
        if primary is None:
            names = col.entity_labels if kind == "entity" else col.relation_labels
            if name is not None:
                mapped = names.get(name)
                if mapped is not None:
                    primary = " ".join(mapped.split()) or name
                    # the file's key is an identifier (e.g. a Freebase MID), not a name: not indexed
                    out.append((SKOS_NOTATION, name, None))
                else:
                    primary = name_label(name) if kind == "entity" else relation_name_label(name)
                    if primary != name:
                        aliases.append(name)
                        out.append((SKOS_ALT_LABEL, name, None))
            else:
                primary = iri_label(iri, predicate=kind == "relation")
            out.append((RDFS_LABEL, primary, None))
            col.label_triples += len(out)
        if col.met is not None:
            col.met.names[iri] = primary
        if found:
            kept = found.aliases(primary)
            aliases = kept + [a for a in aliases if a not in kept]
        bare = _DISAMBIGUATED.match(primary) if primary.endswith(")") else None
        if bare and bare.group(1) not in aliases:
            aliases.append(bare.group(1))  # "Apollo (spacecraft)" is found as "Apollo" too; the rest is a type hint
        self.index.put(LabelDoc(iri=iri, kind=kind, labels=[primary], aliases=aliases))  # type: ignore[arg-type]
        return out

    def quads(self, node: ox.NamedNode, kind: str, name: str | None) -> Iterator[ox.Quad]:
        for predicate, text, lang in self._labels(node.value, kind, name):
            yield ox.Quad(node, self.predicates[predicate], ox.Literal(text, language=lang) if lang else ox.Literal(text))

    def lines(self, term: str, kind: str, name: str | None) -> list[str]:
        """The same as N-Triples lines, for ``term`` = ``<IRI>``."""
        out = []
        for predicate, text, lang in self._labels(term[1:-1], kind, name):
            if _NEEDS_ESCAPE.search(text):  # translate() costs a dict lookup a character: only when needed
                text = text.translate(_NT_ESCAPES)
            out.append(f'{term} <{predicate}> "{text}"@{lang} .\n' if lang else f'{term} <{predicate}> "{text}" .\n')
        return out

    def _unlabelled(self) -> Iterator[tuple[str, str, str | None]]:
        """(IRI, kind, name) of every IRI not labelled yet: relations first, then entities, each sorted by IRI."""
        col = self.col
        done = self.done
        if done is None:  # labelled as met: asking again would label every IRI twice
            raise RuntimeError("this labeller keeps no record of what it labelled")
        relations: dict[str, str | None] = {}
        for name, term in col.text_relations.items():
            relations[term[1:-1]] = name
        for iri in col.rdf_predicates:
            relations.setdefault(iri, None)
        entities: dict[str, str | None] = {term[1:-1]: name for name, term in col.text_entities.items()}
        for iri in col.rdf_nodes:
            if iri not in relations:
                entities.setdefault(iri, None)
        for iri in sorted(relations):
            if iri not in done:
                yield iri, "relation", relations[iri]
        for iri in sorted(entities):
            if iri not in done:
                yield iri, "entity", entities[iri]

    def remaining(self) -> Iterator[ox.Quad]:
        """Labels of every IRI not labelled yet, as quads."""
        for iri, kind, name in self._unlabelled():
            yield from self.quads(ox.NamedNode(iri), kind, name)


class _FedThread:
    """A worker thread fed through a bounded queue; its failure is raised again in the thread
    feeding it, as a ``LoadError`` that starts with ``failure``."""

    failure = "the load's worker failed"

    def __init__(self, name: str, maxsize: int) -> None:
        self.queue: queue.Queue = queue.Queue(maxsize=maxsize)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:  # pragma: no cover - each worker has its own
        raise NotImplementedError

    def _send(self, item: object) -> None:
        while True:
            self._raise_failure(dead=not self.thread.is_alive())
            try:
                self.queue.put(item, timeout=0.5)
                return
            except queue.Full:
                continue

    def _raise_failure(self, *, dead: bool = False) -> None:
        if self.error is not None or dead:
            raise LoadError(f"{self.failure}: {self.error}") from self.error


class _StoreLoader(_FedThread):
    """Hands N-Triples text, in chunks, to the store's bulk loader on a thread of its own.

    pyoxigraph parses and writes a chunk without holding the GIL, so the store's work overlaps
    the reading, minting and labelling done in Python; ``bulk_extend`` needs the GIL for every quad
    it pulls from a Python iterator, which left one of the two cores idle (docs/decisions.md).
    The queue is bounded, so a slow store slows the reader instead of piling text up in memory.
    """

    _LINES = 200_000  # ~20 MB of text: the first chunks
    _MAX_LINES = 600_000  # the most a chunk grows to
    _GROWTH = 0.5  # a chunk's lines, as a share of the lines sent before it
    _MAX_CHUNKS = 2
    failure = "writing the store failed"

    def __init__(self, store: ox.Store) -> None:
        super().__init__("kg-store-load", self._MAX_CHUNKS)
        self.store = store
        self.thread.start()

    @classmethod
    def _chunk_lines(cls, sent: int, read: float) -> int:
        """Lines in the next chunk, after ``sent`` lines and a share ``read`` of the input bytes.

        Chunks grow with the store: each chunk's files overlap all that is stored, and RocksDB
        merges them in again and again; fewer, bigger chunks late in a big load cut that work
        (docs/decisions.md), at a bounded cost in memory. Near the end of the input they shrink
        again, so that little is left to write once the reading is done.
        """
        size = min(cls._MAX_LINES, max(cls._LINES, int(sent * cls._GROWTH)))
        if read > 0:  # 0: nothing known yet
            left = sent * max(0.0, 1 - read) / read  # lines still to come, at the rate so far
            size = min(size, max(cls._LINES, int(left / 2)))
        return size

    def load(self, lines: Iterable[str], read: Callable[[], float]) -> None:
        """Sends ``lines`` in chunks; ``read()`` is the share of the input bytes read so far.

        Compressed inputs count compressed bytes, so with plain and compressed inputs mixed the
        share is rough; only the chunk sizes depend on it.
        """
        chunk: list[str] = []
        sent = 0
        size = self._chunk_lines(sent, read())
        for line in lines:
            chunk.append(line)
            if len(chunk) >= size:
                self._send("".join(chunk))
                sent += len(chunk)
                size = self._chunk_lines(sent, read())
                chunk = []
        if chunk:
            self._send("".join(chunk))

    def _run(self) -> None:
        try:
            while True:
                chunk = self.queue.get()
                if chunk is None:
                    return
                # minted IRIs are percent-encoded under a checked base, literals escaped: no validation
                self.store.bulk_load(chunk, format=ox.RdfFormat.N_TRIPLES, lenient=True)
        except BaseException as exc:  # reported to the main thread by _send()/finish()
            self.error = exc

    def finish(self) -> None:
        """Waits for the last chunk to be written; re-raises a loader failure."""
        self._send(None)
        self.thread.join()
        self._raise_failure()

    def cancel(self) -> None:
        """Drops queued chunks and waits for the one being written (it cannot be interrupted)."""
        with contextlib.suppress(queue.Empty):
            while True:
                self.queue.get_nowait()
        with contextlib.suppress(queue.Full):
            self.queue.put_nowait(None)
        self.thread.join()


class _IndexWorker(_FedThread):
    """Builds the tantivy label index on a thread, fed in batches, so it overlaps the store load.

    The queue is bounded, so a slow index slows the reader down instead of piling documents up
    in memory. The thread never calls user code: its progress is reported from the main thread
    while waiting, so an exception from a progress callback (or Ctrl-C) surfaces in the main
    thread, which then cancels the worker.
    """

    _BATCH = 2048
    _MAX_BATCHES = 32
    failure = "building the label index failed"

    def __init__(self, folder: Path) -> None:
        super().__init__("kg-label-index", self._MAX_BATCHES)
        self.folder = folder
        self.batch: list[LabelDoc] = []
        self.submitted = 0
        self.indexed = 0
        self.ended = False
        self.cancelled = threading.Event()
        self.thread.start()

    def put(self, doc: LabelDoc) -> None:
        if self.ended:
            raise RuntimeError("the label index's input has ended")
        self.batch.append(doc)
        self.submitted += 1
        if len(self.batch) >= self._BATCH:
            self._send(self.batch)
            self.batch = []

    def _run(self) -> None:
        try:
            from kgteam.tools.backends.tantivy_index import TantivyLabelIndexWriter

            writer = TantivyLabelIndexWriter(self.folder)
            while not self.cancelled.is_set():
                batch = self.queue.get()
                if batch is None:
                    if not self.cancelled.is_set():
                        writer.commit()
                    return
                for doc in batch:
                    writer.add(doc)
                self.indexed += len(batch)
        except BaseException as exc:  # reported to the main thread by _send()/finish()
            self.error = exc

    def end_input(self) -> None:
        """No more documents: sends the last batch and lets the worker commit while the caller
        goes on (the store's last write, the vectors); :meth:`finish` then waits for it."""
        if self.ended:
            return
        if self.batch:
            self._send(self.batch)
            self.batch = []
        self._send(None)
        self.ended = True

    def finish(self, rep: _Reporter) -> int:
        """Flushes, waits for the commit (reporting progress), re-raises a worker failure."""
        self.end_input()
        while self.thread.is_alive():
            rep.index(self.indexed, self.submitted)
            self.thread.join(0.2)
        self._raise_failure()
        rep.index(self.submitted, self.submitted)
        return self.submitted

    def cancel(self) -> None:
        """Stops the worker after its current batch; nothing it wrote is kept (the folder is removed)."""
        self.cancelled.set()
        with contextlib.suppress(queue.Full):
            self.queue.put_nowait(None)  # wakes a worker waiting on an empty queue
        self.thread.join()


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a load reads: the reading loop makes no cycles, but
    its millions of small objects set off collections that walked the growing name tables again
    and again (a sixth of the reading thread's samples at 1M facts)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _when_done(call: Callable[[str], None], what: str) -> Iterator[ox.Quad]:
    """No quads; calls ``call(what)`` when the stream reaches it (the bulk loader's last batch
    is written after that, for seconds to a minute on millions of triples)."""
    call(what)
    yield from ()


def _build_into(tmp: Path, name: str, inputs: list[_Input], base: str, rep: _Reporter,
                entity_labels: tuple[dict[str, str], SourceInfo | None],
                relation_labels: tuple[dict[str, str], SourceInfo | None],
                inverse_suffix: str | None, embedder: Embedder | None, naming: Naming,
                vectors_mode: VectorsMode = "auto", memory_mb: int = DEFAULT_MEMORY_MB) -> KGManifest:
    started = time.perf_counter()
    tmp.mkdir(parents=True)
    col = _Collected(base=base, entity_labels=entity_labels[0], relation_labels=relation_labels[0], naming=naming)
    n_rdf = sum(1 for i in inputs if i.format in RDF_FORMATS)
    if n_rdf == 0 and embedder is not None and vectors_mode in ("auto", "triples"):
        # a name-triple load keeps its facts' ids for the triple vectors; ``auto`` stops keeping them
        # past the size it builds a triple index for (duplicates could bring it back: the store is read then)
        col.met = MetFacts(limit=AUTO_TRIPLES_MAX_FACTS if vectors_mode == "auto" else None)
    index = _IndexWorker(tmp / LABELS_DIR)
    try:
        labeller = _Labeller(col, index, remember=n_rdf > 0)
        store = ox.Store(str(tmp / STORE_DIR))
        try:
            with _gc_paused():
                if n_rdf == 0:  # names only: every label is known at first sight, the text goes to the bulk loader
                    loader = _StoreLoader(store)
                    try:
                        # every name is labelled where it first appears: nothing is left for the end
                        loader.load(itertools.chain.from_iterable(
                            _source_lines(inp, col, rep, inverse_suffix, labeller) for inp in inputs),
                            read=lambda: rep.position / rep.total if rep.total else 0.0)
                        index.end_input()  # every name is labelled: commit while the store writes
                        rep.finish("writing the store")
                        loader.finish()
                    except BaseException:
                        loader.cancel()
                        raise
                else:
                    streams = [_source_quads(inp, i, col, rep, inverse_suffix) for i, inp in enumerate(inputs)]
                    store.bulk_extend(itertools.chain(*streams, labeller.remaining(),
                                                      _when_done(rep.finish, "writing the store")))
            store.flush()
            total_triples = len(store)
            if total_triples > OPTIMIZE_AFTER_TRIPLES:  # bulk_extend's batches, or the last chunks, overlap
                rep.finish("optimizing the store")
                _compact(store)
            if not any(i.records for i in inputs):
                # almost certainly the wrong file or format; never replace a KG with an empty one
                raise LoadError("no triples found in the input", file=inputs[0].path if len(inputs) == 1 else None)
            # what only the reading needed goes before the vectors are built (~0.3 GB at 1.4M names)
            col.text_entities.clear()
            col.rdf_nodes.clear()
            labeller.done = None
            vectors = None
            if embedder is not None and vectors_mode != "none":
                from kgteam.tools.vectors.store import build_vectors

                facts = total_triples - col.label_triples
                met = col.met if col.met is not None and col.met.usable(set(naming.extra)) else None
                col.met = None
                index._raise_failure()  # a failed label index ends the load now, not after the vectors
                vectors = build_vectors(store, tmp / VECTORS_DIR, embedder, progress=rep.embed, naming=naming,
                                        triples=wants_triples(vectors_mode, facts), facts=facts,
                                        memory_mb=memory_mb, met=met)
                del met
        finally:
            del store
            gc.collect()  # the RocksDB handle must be released before the folder is renamed
        label_docs = index.finish(rep)
    except BaseException:
        index.cancel()
        raise
    relations = len({t[1:-1] for t in col.text_relations.values()} | col.rdf_predicates)
    entities = label_docs - relations
    fmts = {i.format for i in inputs}
    manifest = KGManifest(
        name=name,
        format=fmts.pop() if len(fmts) == 1 else "mixed",
        base_iri=base,
        sources=[
            SourceInfo(path=str(i.path), format=i.format, sha256=sha256_file(i.path), bytes=i.size, records=i.records)
            for i in inputs
        ],
        entity_labels=entity_labels[1],
        relation_labels=relation_labels[1],
        inverse_suffix=inverse_suffix,
        label_predicates=naming.to_manifest(),
        lang=naming.lang,
        prefixes=col.prefixes,
        counts=KGCounts(
            triples=total_triples,
            facts=total_triples - col.label_triples,
            label_triples=col.label_triples,
            entities=entities,
            relations=relations,
            label_docs=label_docs,
        ),
        build_seconds=round(time.perf_counter() - started, 3),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        kgteam_version=__version__,
        vectors=vectors,
    )
    manifest.disk_bytes = dir_size(tmp)
    manifest.write(tmp)
    return manifest


def _load_embedder(embed: bool | Embedder | None) -> Embedder | None:
    if embed is None or embed is False:
        return None
    if embed is True:
        from kgteam.tools.embedding.wordllama import default_embedder

        return default_embedder()
    return embed


def build_kg(
    sources: Sequence[str | Path] | str | Path,
    name: str,
    home: Path | None = None,
    format: str | None = None,
    base_iri: str | None = None,
    progress: bool | ProgressCallback = True,
    *,
    entity_labels: str | Path | None = None,
    relation_labels: str | Path | None = None,
    inverse_suffix: str | None = INVERSE_SUFFIX,
    embed: bool | Embedder | None = False,
    label_predicates: Sequence[str] = (),
    vectors: VectorsMode = "auto",
    memory_mb: int = DEFAULT_MEMORY_MB,
    lang: str | None = None,
) -> KGManifest:
    """Builds (or rebuilds) KG ``name`` under ``<home>/kgs/`` from ``sources`` and returns its manifest.

    ``format`` forces one format for all sources (else: by extension, ``.txt`` sniffed).
    ``base_iri`` prefixes IRIs minted for MetaQA/TSV names (default: MetaQA's for MetaQA input,
    ``http://example.org/<name>/`` otherwise). ``entity_labels``/``relation_labels`` are
    ``id<TAB>label`` files naming the ids of TSV input (e.g. FB15k-237). ``progress`` is
    ``True`` for a rich progress bar on stderr, ``False`` for none, or a callback receiving
    ``LoadProgress`` events (an exception raised there aborts the load cleanly).
    ``embed`` also builds the ``vectors/`` folder (relation and triple vectors): ``True`` with the
    embedded embedder (skipped when it is not installed), or with the ``Embedder`` given;
    ``vectors`` says which (:mod:`kgteam.tools.vectors.policy`: ``auto`` builds the triple index
    of small KGs only) and ``memory_mb`` bounds the triple index build.
    ``label_predicates`` are IRIs of the KG's own naming predicates beyond the standard ones
    (:mod:`kgteam.tools.naming`), preferred over them; the manifest records them for every reader.
    ``lang`` is the label language shown first (each IRI's primary name in the label index; recorded).
    Raises ``LoadError`` (file:line: problem) for bad input; the previous KG is then untouched.
    """
    if isinstance(sources, str | Path):
        sources = [sources]
    check_kg_name(name)
    inputs = _resolve_inputs(sources, format)
    base = base_iri or _default_base((i.format for i in inputs), name)
    try:
        check_base_iri(base)
    except ValueError as exc:
        raise LoadError(str(exc)) from exc
    try:
        naming = Naming.with_predicates(label_predicates, lang)
    except ValueError as exc:
        raise LoadError(str(exc)) from exc
    if vectors not in VECTORS_MODES:
        raise LoadError(f"vectors must be one of {', '.join(VECTORS_MODES)}, not {vectors!r}")
    embedder = _load_embedder(embed)
    labels = _read_labels_file(entity_labels)
    rel_labels = _read_labels_file(relation_labels)
    kgs = kgs_dir(home)
    show: RichProgress | None = RichProgress(name) if progress is True else None
    callback: ProgressCallback | None = show if show is not None else (progress if callable(progress) else None)
    with name_lock(kgs, name):
        recover(kgs, name)
        tmp = kgs / f"{TMP_PREFIX}{name}+{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            with show if show is not None else nullcontext():
                manifest = _build_into(tmp, name, inputs, base, _Reporter(callback, inputs), labels, rel_labels,
                                       inverse_suffix, embedder, naming, vectors, memory_mb)
            manifest.path = swap_into_place(kgs, name, tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return manifest
