"""ElasticLabelIndex against recorded HTTP exchanges (tests/data/elastic/*.json), replayed with respx.

No Elasticsearch server runs here. What these tests prove: the exact requests the official
client sends for our mapping, bulk indexing and queries (method, path, headers, JSON body),
and that responses in the Elasticsearch 9 shape are parsed and reranked correctly. What
they cannot prove: how a live Elasticsearch ranks candidates (see docs/labels.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

elasticsearch = pytest.importorskip("elasticsearch")
from elasticsearch import Elasticsearch, UnsupportedProductError  # noqa: E402
from elasticsearch.helpers import BulkIndexError  # noqa: E402

from kgteam.tools.backends.base import LabelDoc, LabelIndex  # noqa: E402
from kgteam.tools.backends.elastic_index import ElasticLabelIndex, index_body, search_body  # noqa: E402
from kgteam.tools.backends.tantivy_index import TantivyLabelIndex, TantivyLabelIndexWriter  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "elastic"
URL = "http://127.0.0.1:9200"
INDEX = "kgteam-labels-test"
E = "http://example.org/t/e/"
R = "http://example.org/t/r/"

DOCS = [
    LabelDoc(E + "tom_hanks", "entity", ["Tom Hanks"], ["Thomas Jeffrey Hanks"]),
    LabelDoc(E + "spielberg", "entity", ["Steven Spielberg"], ["Steven Allan Spielberg"]),
    LabelDoc(E + "franzen", "entity", ["Peter Franzén"]),
    LabelDoc(R + "directed_by", "relation", ["directed by"], ["director"]),
]


def _body(request: httpx.Request):
    content = request.content.decode()
    if not content:
        return None
    if "ndjson" in request.headers.get("content-type", ""):
        return [json.loads(line) for line in content.splitlines() if line]
    return json.loads(content)


class Replay:
    """Serves recorded exchanges in order; each request must equal the recorded one."""

    def __init__(self, name: str) -> None:
        self.recording = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
        self.pending = list(self.recording["exchanges"])

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert self.pending, f"unexpected extra request {request.method} {request.url.path}"
        exchange = self.pending.pop(0)
        want, got_body = exchange["request"], _body(request)
        assert (request.method, request.url.path) == (want["method"], want["path"])
        for header, value in want["headers"].items():
            assert request.headers.get(header) == value, header
        assert got_body == want["body"]
        resp = exchange["response"]
        content = b"" if resp["body"] is None else json.dumps(resp["body"]).encode()
        return httpx.Response(resp["status"], headers=resp["headers"], content=content)

    def done(self) -> None:
        assert not self.pending, f"{len(self.pending)} recorded requests were never sent"


@pytest.fixture
def replay():
    """``replay(name)`` -> (ElasticLabelIndex on a respx-mocked httpx node, Replay)."""
    with respx.mock(base_url=URL, assert_all_called=False) as mock:
        route = mock.route()

        def start(name: str):
            player = Replay(name)
            route.mock(side_effect=player)
            client = Elasticsearch(URL, node_class="httpx")
            return ElasticLabelIndex(client, INDEX), player

        yield start


def test_recordings_carry_product_header():
    files = sorted(DATA.glob("*.json"))
    assert len(files) >= 6
    for path in files:
        rec = json.loads(path.read_text(encoding="utf-8"))
        assert "NOT captured from a live" in rec["provenance"]
        for ex in rec["exchanges"]:
            assert ex["response"]["headers"]["X-Elastic-Product"] == "Elasticsearch"


def test_create_mapping_and_bulk(replay):
    ix, player = replay("create_and_bulk")
    assert isinstance(ix, LabelIndex)
    for doc in DOCS:
        ix.add(doc)
    ix.commit()
    player.done()
    assert ix.indexed == 7  # 4 primary labels + 3 aliases
    put = player.recording["exchanges"][1]["request"]
    assert put["body"] == index_body()
    bulk = player.recording["exchanges"][2]["request"]["body"]
    sources = bulk[1::2]
    assert [s["primary"] for s in sources[:2]] == [True, False]
    assert sources[4] == {
        "iri": E + "franzen",
        "kind": "entity",
        "primary": True,
        "label": "Peter Franzén",
        "matched": "Peter Franzén",
        "exact": "peter franzen",
        "text": "peter franzen",
    }


def test_bulk_errors_raise(replay):
    ix, player = replay("bulk_error")
    ix._created = True  # the recording starts with the index already there
    ix.add(DOCS[0])
    with pytest.raises(BulkIndexError) as err:
        ix.commit()
    assert err.value.errors[0]["index"]["status"] == 400
    player.done()


def test_search_typo_reranked_and_deduplicated(replay):
    ix, player = replay("search_typo")
    hits = ix.search("Stevn Spielberg", 10)
    player.done()
    assert [h.iri for h in hits] == [E + "spielberg", E + "seagal", E + "stevens"]
    assert hits[0].matched == "Steven Spielberg" and hits[0].label == "Steven Spielberg"
    assert not hits[0].exact
    assert hits[0].score > hits[1].score


def test_search_exact_alias_first(replay):
    ix, player = replay("search_exact_alias")
    hits = ix.search("THOMAS jeffrey_hanks", 5)
    player.done()
    assert hits[0].iri == E + "tom_hanks" and hits[0].exact
    assert (hits[0].label, hits[0].matched) == ("Tom Hanks", "Thomas Jeffrey Hanks")
    assert hits[1].iri == E + "tom_hanks_jr" and not hits[1].exact


def test_search_relation_kind_and_k(replay):
    ix, player = replay("search_relation")
    hits = ix.search("director", 1, kind="relation")
    player.done()
    assert len(hits) == 1
    assert (hits[0].iri, hits[0].kind, hits[0].exact) == (R + "directed_by", "relation", True)


def test_label_of(replay):
    ix, player = replay("label_of")
    got = ix.label_of([E + "tom_hanks", R + "directed_by", E + "unknown"])
    player.done()
    assert got == {E + "tom_hanks": "Tom Hanks", R + "directed_by": "directed by"}


@pytest.mark.parametrize("query", ["", "   ", "\t", "__"])
def test_empty_query_sends_nothing(replay, query):
    ix, player = replay("label_of")  # any request would be checked against (and fail) this
    assert ix.search(query, 10) == []
    assert ix.label_of([]) == {}
    assert len(player.pending) == 1


def test_missing_product_header_is_refused():
    with respx.mock(base_url=URL) as mock:
        mock.post(f"/{INDEX}/_search").mock(
            return_value=httpx.Response(
                200, json={"hits": {"hits": []}}, headers={"X-Elastic-Product": "Other"}
            )
        )
        ix = ElasticLabelIndex(Elasticsearch(URL, node_class="httpx"), INDEX)
        with pytest.raises(UnsupportedProductError):
            ix.search("tom hanks", 3)


def test_search_body_normalises_and_filters_kind():
    body = search_body("tom hanks", "relation", 50)
    assert body["size"] == 50
    assert body["query"]["bool"]["filter"] == [{"term": {"kind": "relation"}}]
    should = body["query"]["bool"]["should"]
    assert should[0] == {"term": {"exact": {"value": "tom hanks", "boost": 10.0}}}
    assert {"match": {"text": {"query": "tom hanks", "fuzziness": "AUTO", "boost": 3.0}}} in should


def test_same_ranking_as_embedded_index(tmp_path, replay):
    """Given the candidates ES returned, the ranking equals the tantivy index's on the same labels."""
    writer = TantivyLabelIndexWriter(tmp_path / "ix")
    for doc in [
        *DOCS,
        LabelDoc(E + "seagal", "entity", ["Steven Seagal"]),
        LabelDoc(E + "stevens", "entity", ["Stevens"]),
    ]:
        writer.add(doc)
    writer.commit()
    embedded = TantivyLabelIndex(tmp_path / "ix")
    ix, player = replay("search_typo")
    es_hits = ix.search("Stevn Spielberg", 10)
    player.done()
    tv_hits = embedded.search("Stevn Spielberg", 10)
    embedded.close()
    assert [(h.iri, h.matched, h.score) for h in es_hits] == [(h.iri, h.matched, h.score) for h in tv_hits]


def test_built_from_url_with_client_options():
    """The team factory passes a URL (plus options); that must reach the same mocked endpoint."""
    with respx.mock(base_url=URL) as mock:
        route = mock.post(f"/{INDEX}/_search").mock(
            return_value=httpx.Response(
                200, json={"hits": {"hits": []}}, headers={"X-Elastic-Product": "Elasticsearch"}
            )
        )
        ix = ElasticLabelIndex(URL, INDEX, api_key="secret", node_class="httpx", candidates=20)
        assert ix.search("tom hanks", 3) == []
        request = route.calls.last.request
        assert request.headers["authorization"] == "ApiKey secret"
        assert json.loads(request.content)["size"] == 20
