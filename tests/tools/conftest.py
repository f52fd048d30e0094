"""Backends for the KG-tool suite: one small KG loaded into embedded Oxigraph, Virtuoso and the
Oxigraph server; the same tantivy label index (built from the same file) serves all three."""

from __future__ import annotations

import gc
from collections import defaultdict
from pathlib import Path

import pyoxigraph
import pytest

from kgteam.tools.backends.base import LabelDoc
from kgteam.tools.backends.oxigraph_store import OxigraphStore
from kgteam.tools.kg_tools import RDFS_LABEL, SKOS_ALT, KGTools

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "tools" / "kg.ttl"
# Small on purpose: the 40-edge hub in the fixture then needs several pages from Virtuoso.
VIRTUOSO_TEST_MAX_ROWS = 25


def build_label_index(path: Path) -> object:
    from kgteam.tools.backends.tantivy_index import TantivyLabelIndex, TantivyLabelIndexWriter

    labels: dict[str, list[str]] = defaultdict(list)
    aliases: dict[str, list[str]] = defaultdict(list)
    predicates: set[str] = set()
    for t in pyoxigraph.parse(path=str(FIXTURE), format=pyoxigraph.RdfFormat.TURTLE):
        predicates.add(t.predicate.value)
        if t.predicate.value == RDFS_LABEL:
            labels[t.subject.value].append(t.object.value)
        elif t.predicate.value == SKOS_ALT:
            aliases[t.subject.value].append(t.object.value)
    writer = TantivyLabelIndexWriter(path, overwrite=True)
    for iri in sorted(set(labels) | predicates):
        kind = "relation" if iri in predicates else "entity"
        names = sorted(labels.get(iri, [])) or [iri.rsplit("/", 1)[-1].replace("_", " ")]
        writer.add(LabelDoc(iri=iri, kind=kind, labels=names, aliases=sorted(aliases.get(iri, []))))
    writer.commit()
    return TantivyLabelIndex(path)


@pytest.fixture(scope="session")
def kg_fixture() -> Path:
    return FIXTURE


@pytest.fixture(scope="session")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An on-disk Oxigraph store with the fixture in the default graph, then closed (read-only users)."""
    path = tmp_path_factory.mktemp("oxigraph") / "store"
    st = pyoxigraph.Store(str(path))
    st.bulk_load(path=str(FIXTURE), format=pyoxigraph.RdfFormat.TURTLE)
    st.flush()
    del st
    gc.collect()
    return path


@pytest.fixture(scope="session")
def label_index(tmp_path_factory: pytest.TempPathFactory):
    idx = build_label_index(tmp_path_factory.mktemp("labels") / "labels")
    yield idx
    idx.close()


@pytest.fixture(scope="session")
def embedded_tools(store_dir: Path, label_index):
    store = OxigraphStore(store_dir)
    yield KGTools(store, label_index)
    store.close()  # stops the run_sparql worker process


@pytest.fixture(scope="session")
def virtuoso_server(tmp_path_factory: pytest.TempPathFactory):
    from servers import start_virtuoso, virtuoso_available

    if not virtuoso_available():
        pytest.skip("virtuoso-t / isql-vt not installed (Debian package virtuoso-opensource-7-bin)")
    data = tmp_path_factory.mktemp("virtuoso-data")
    nt = data / "kg.nt"
    nt.write_bytes(
        pyoxigraph.serialize(
            pyoxigraph.parse(path=str(FIXTURE), format=pyoxigraph.RdfFormat.TURTLE),
            format=pyoxigraph.RdfFormat.N_TRIPLES,
        )
    )
    server = start_virtuoso(data, result_set_max_rows=VIRTUOSO_TEST_MAX_ROWS, max_exec_s=5)
    try:
        server.bulk_load([nt])
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def oxigraph_server(tmp_path_factory: pytest.TempPathFactory):
    from servers import oxigraph_cli, oxigraph_load, start_oxigraph

    if oxigraph_cli() is None:
        pytest.skip("the oxigraph CLI is not installed (pip install oxigraph)")
    location = tmp_path_factory.mktemp("oxigraph-server") / "store"
    oxigraph_load(location, [FIXTURE])
    server = start_oxigraph(location, query_timeout_s=5)  # stops queries the client gave up on
    try:
        yield server
    finally:
        server.stop()


BACKENDS = [
    "embedded",
    pytest.param("virtuoso", marks=pytest.mark.integration),
    pytest.param("oxigraph-server", marks=pytest.mark.integration),
]


@pytest.fixture(scope="session", params=BACKENDS)
def tools(request: pytest.FixtureRequest, label_index, embedded_tools: KGTools) -> KGTools:
    """The KG tools over each backend, all loaded with the same fixture."""
    if request.param == "embedded":
        return embedded_tools
    server = request.getfixturevalue("virtuoso_server" if request.param == "virtuoso" else "oxigraph_server")
    return KGTools(server.endpoint_store(timeout_s=30), label_index)
