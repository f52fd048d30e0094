"""``connect_endpoint``: a SPARQL endpoint registered as an installed KG (``kgteam kg connect``).

The KG folder gets a manifest saying where the endpoint is and a tantivy label index built by
streaming the endpoint's naming triples in LIMIT/OFFSET pages; no triple is copied to disk. Then
``open_kg(NAME)`` (so ``--kg NAME`` everywhere) reads the triples from the server and names from
the local index. The folder is built aside and swapped in only when everything succeeded: an
unreachable server, a page that times out or Ctrl-C leave no half-registered KG behind.

Pages carry no ORDER BY (sorting a million labels once per page costs more than the page): one
triple pattern per query keeps a read-only server's scan order stable from page to page.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from kgteam import __version__
from kgteam.tools.backends.base import LabelDoc
from kgteam.tools.loading.errors import LoadError
from kgteam.tools.loading.layout import (
    LABELS_DIR,
    TMP_PREFIX,
    check_kg_name,
    dir_size,
    kgs_dir,
    name_lock,
    recover,
    swap_into_place,
)
from kgteam.tools.loading.manifest import EndpointInfo, KGCounts, KGManifest
from kgteam.tools.naming import Naming, fallback_name
from kgteam.tools.sparql_guard import sparql_iri
from kgteam.tools.types import RDFTerm, ToolError

DEFAULT_PAGE_SIZE = 10_000  # Virtuoso's default ResultSetMaxRows: a page no server cuts short
PAGE_BYTES = 256 * 1024 * 1024  # a page's values may be large (long labels); the row count is the cap
# (what, rows so far) after every page
PageProgress = Callable[[str, int], None]


def open_endpoint(info: EndpointInfo):  # -> SparqlEndpointStore (import kept lazy)
    """The store of an endpoint KG, as its manifest describes it."""
    from kgteam.tools.backends.sparql_endpoint import SparqlEndpointStore

    return SparqlEndpointStore(info.url, default_graph=info.default_graph, timeout_s=info.timeout_s,
                               page_size=info.page_size)


def _source_errors() -> tuple[type[Exception], ...]:
    """What a request to the endpoint raises when it fails: a ToolError (the query) or an
    EndpointUnavailable (the server); ``kg connect`` and ``embed`` stop on either in one line."""
    from kgteam.tools.backends.sparql_endpoint import EndpointUnavailable

    return ToolError, EndpointUnavailable


def _fail(url: str, exc: Exception) -> LoadError:
    return LoadError(f"{url}: not usable as a SPARQL endpoint: {exc}")


def paged_rows(store, info: EndpointInfo, select: str, page: int, what: str,
               progress: PageProgress | None = None) -> Iterator[dict[str, RDFTerm]]:
    """Every solution of the query ``select`` (written without LIMIT/OFFSET), ``page`` rows at a time."""
    offset = 0
    while True:
        try:
            result = store.query(f"{select} LIMIT {page} OFFSET {offset}", timeout_s=info.timeout_s,
                                 max_rows=page, max_bytes=PAGE_BYTES)
        except _source_errors() as exc:
            raise _fail(info.url, exc) from None
        yield from result.rows
        offset += len(result.rows)
        if progress is not None:
            progress(what, offset)
        if len(result.rows) < page:
            return


def endpoint_triples(info: EndpointInfo, page: int = DEFAULT_PAGE_SIZE,
                     progress: PageProgress | None = None) -> Iterator[tuple[RDFTerm, RDFTerm, RDFTerm]]:
    """Every triple of the endpoint (its default graph), streamed in pages (``kgteam embed`` of an endpoint KG)."""
    store = open_endpoint(info)
    for row in paged_rows(store, info, "SELECT ?s ?p ?o WHERE { ?s ?p ?o }", page, "triples", progress):
        if "s" in row and "p" in row and "o" in row:
            yield row["s"], row["p"], row["o"]


def _ox_term(term: RDFTerm):
    import pyoxigraph as ox

    if term.type == "uri":
        return ox.NamedNode(term.value)
    if term.type == "bnode":
        return ox.BlankNode(term.value)
    if term.lang:
        return ox.Literal(term.value, language=term.lang)
    return ox.Literal(term.value, datatype=ox.NamedNode(term.datatype) if term.datatype else None)


def fill_scratch_store(info: EndpointInfo, folder: Path, page: int = DEFAULT_PAGE_SIZE,
                       progress: PageProgress | None = None):  # -> pyoxigraph.Store
    """A scratch on-disk Oxigraph store holding the endpoint's triples, streamed in pages, for
    builders that read a store (the vector index); the caller deletes ``folder`` afterwards."""
    import pyoxigraph as ox

    store = ox.Store(str(folder))
    quads = (ox.Quad(_ox_term(s), _ox_term(p), _ox_term(o)) for s, p, o in endpoint_triples(info, page, progress)
             if s.type != "triple" and o.type != "triple" and p.type == "uri")
    store.bulk_extend(quads)
    store.flush()
    return store


def _count_triples(store, info: EndpointInfo) -> int:
    """The endpoint's triple count; 0 when the server will not count in time (huge public endpoints)."""
    try:
        result = store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", timeout_s=info.timeout_s, max_rows=1)
    except _source_errors() as exc:
        if getattr(exc, "timed_out", False) or "timed out" in str(exc) or "time limit" in str(exc):
            return 0
        raise _fail(info.url, exc) from None
    try:
        return int(result.rows[0]["n"].value)
    except (IndexError, KeyError, ValueError):
        return 0


def _namespace(iri: str) -> str:
    cut = max(iri.rfind("/"), iri.rfind("#"))
    return iri[: cut + 1] if cut > 0 else iri


def _guess_base(predicates: Sequence[str], naming: Naming) -> str:
    """The namespace most of the KG's own predicates share (the manifest's ``base_iri``)."""
    own = Counter(_namespace(p) for p in predicates
                  if not naming.is_naming(p) and not p.startswith("http://www.w3.org/"))
    return own.most_common(1)[0][0] if own else "http://example.org/"


def _collect(store, info: EndpointInfo, naming: Naming, page: int, progress: PageProgress | None
             ) -> tuple[list[str], dict[str, list[tuple[str, str, str | None]]], int]:
    """The predicates, and every naming literal by IRI, read from the endpoint."""
    # no ORDER BY: on Oxigraph it sorts every triple first (12 s instead of 0.4 s at 171k triples)
    predicates = sorted({row["p"].value for row in paged_rows(store, info, "SELECT DISTINCT ?p WHERE { ?s ?p ?o }",
                                                              page, "relations", progress)
                         if "p" in row and row["p"].type == "uri"})
    found: dict[str, list[tuple[str, str, str | None]]] = {}
    n = 0
    for pred in naming.all_predicates:
        select = f"SELECT ?s ?l WHERE {{ ?s {sparql_iri(pred)} ?l }}"
        for row in paged_rows(store, info, select, page, "label triples",
                              None if progress is None else (lambda what, k, base=n: progress(what, base + k))):
            n += 1
            s, label = row.get("s"), row.get("l")
            if s is None or label is None or s.type != "uri" or label.type != "literal":
                continue
            text = " ".join(label.value.split())
            if text:
                found.setdefault(s.value, []).append((pred, text, label.lang))
    return predicates, found, n


def _write_labels(folder: Path, predicates: list[str], found: dict[str, list[tuple[str, str, str | None]]],
                  naming: Naming) -> tuple[int, int]:
    """The label index: every predicate (a relation) and every named IRI (an entity)."""
    from kgteam.tools.backends.tantivy_index import TantivyLabelIndexWriter

    relations = set(predicates)
    entities = 0
    writer = TantivyLabelIndexWriter(folder)
    for iri in predicates:
        names = found.get(iri, [])
        primary = naming.best(names) or fallback_name(iri, predicate=True)
        writer.add(LabelDoc(iri=iri, kind="relation", labels=[primary], aliases=naming.aliases(names, primary)))
    for iri, names in found.items():
        if iri in relations:
            continue
        primary = naming.best(names) or fallback_name(iri)
        writer.add(LabelDoc(iri=iri, kind="entity", labels=[primary], aliases=naming.aliases(names, primary)))
        entities += 1
    writer.commit()
    return entities, len(predicates)


def _build_into(tmp: Path, name: str, info: EndpointInfo, naming: Naming, page: int,
                progress: PageProgress | None) -> KGManifest:
    started = time.perf_counter()
    store = open_endpoint(info)
    try:
        probe = store.query("ASK { ?s ?p ?o }", timeout_s=info.timeout_s, max_rows=1)
    except _source_errors() as exc:
        raise _fail(info.url, exc) from None
    if probe.boolean is None:
        raise LoadError(f"{info.url}: not usable as a SPARQL endpoint: it did not answer an ASK query")
    if not probe.boolean:
        graph = f" in graph {info.default_graph}" if info.default_graph else ""
        raise LoadError(f"{info.url}: the endpoint holds no triples{graph}; nothing to connect")
    triples = _count_triples(store, info)
    predicates, found, label_triples = _collect(store, info, naming, page, progress)
    tmp.mkdir(parents=True)
    entities, relations = _write_labels(tmp / LABELS_DIR, predicates, found, naming)
    manifest = KGManifest(
        name=name, format="sparql-endpoint", base_iri=_guess_base(predicates, naming), sources=[],
        inverse_suffix=None, label_predicates=naming.to_manifest(),
        counts=KGCounts(triples=triples, facts=max(triples - label_triples, 0), label_triples=label_triples,
                        entities=entities, relations=relations, label_docs=entities + relations),
        build_seconds=round(time.perf_counter() - started, 3),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"), kgteam_version=__version__, endpoint=info,
    )
    manifest.disk_bytes = dir_size(tmp)
    manifest.write(tmp)
    return manifest


def _check_replaceable(folder: Path, replace: bool) -> None:
    """A loaded KG (with its own store) is replaced only when asked: its triples exist nowhere else."""
    try:
        existing = KGManifest.read(folder)
    except (OSError, ValueError):
        return
    if existing.endpoint is None and not replace:
        raise LoadError(f"KG {folder.name!r} is a loaded KG with its own store; connecting would replace it. "
                        "Pick another name, or pass --replace")


def connect_endpoint(name: str, url: str, *, home: Path | None = None, default_graph: str | None = None,
                     timeout_s: float = 60.0, page_size: int = DEFAULT_PAGE_SIZE,
                     label_predicates: Sequence[str] = (), progress: PageProgress | None = None,
                     replace: bool = False) -> KGManifest:
    """Registers the SPARQL endpoint ``url`` as KG ``name`` under ``<home>/kgs`` and returns its manifest.
    An endpoint KG of that name is replaced on success; a loaded KG only with ``replace=True``.
    Raises ``LoadError`` with a one-line reason; nothing is left behind then."""
    check_kg_name(name)
    if not url.startswith(("http://", "https://")):
        raise LoadError(f"{url!r} is not an http(s) URL of a SPARQL endpoint (e.g. http://127.0.0.1:7878/query)")
    if page_size < 1:
        raise LoadError("--page-size must be at least 1")
    if timeout_s <= 0:
        raise LoadError("--timeout must be more than 0 seconds")
    try:
        naming = Naming.with_predicates(label_predicates)
        info = EndpointInfo(url=url, default_graph=default_graph, timeout_s=timeout_s, page_size=page_size)
        open_endpoint(info)  # checks the URL and graph IRIs
    except (ValueError, ToolError) as exc:
        raise LoadError(str(exc)) from None
    kgs = kgs_dir(home)
    _check_replaceable(kgs / name, replace)
    with name_lock(kgs, name):
        recover(kgs, name)
        _check_replaceable(kgs / name, replace)
        tmp = kgs / f"{TMP_PREFIX}{name}+{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            manifest = _build_into(tmp, name, info, naming, page_size, progress)
            manifest.path = swap_into_place(kgs, name, tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return manifest
