"""Regenerate the recorded exchanges in this folder.

Runs ElasticLabelIndex against respx (no server), captures the requests the official client
sends, and pairs each with a hand-written response in the Elasticsearch 9 REST shape. Run it
after an intended change of the mapping or queries, then review the diff:

    .venv/bin/python tests/data/elastic/regenerate.py
"""

import json
from pathlib import Path

import httpx
import respx
from elasticsearch import Elasticsearch

from kgteam.tools.backends.base import LabelDoc
from kgteam.tools.backends.elastic_index import ElasticLabelIndex, doc_id

OUT = Path(__file__).resolve().parent
URL = "http://127.0.0.1:9200"
INDEX = "kgteam-labels-test"
E = "http://example.org/t/e/"
R = "http://example.org/t/r/"
H = {
    "X-Elastic-Product": "Elasticsearch",
    "Content-Type": "application/vnd.elasticsearch+json;compatible-with=9",
}
PROV = (
    "Request bodies were captured from ElasticLabelIndex through elasticsearch-py 9.5.1 "
    "(httpx node); response bodies are hand-written in the Elasticsearch 9 REST API shape. "
    "They were NOT captured from a live Elasticsearch server."
)


def hit(iri, label, matched, exact, score, kind="entity"):
    return {
        "_index": INDEX,
        "_id": doc_id(kind, iri, exact),
        "_score": score,
        "_source": {"iri": iri, "label": label, "matched": matched, "exact": exact},
    }


def search_resp(hits):
    return {
        "took": 4,
        "timed_out": False,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
        "hits": {
            "total": {"value": len(hits), "relation": "eq"},
            "max_score": max((h["_score"] for h in hits), default=None),
            "hits": hits,
        },
    }


def record(name, description, responses, action):
    exchanges = []
    queue = list(responses)

    def handler(request: httpx.Request):
        status, body = queue.pop(0)
        if callable(body):
            body = body(request)
        content = request.content.decode()
        ctype = request.headers.get("content-type", "")
        if "ndjson" in ctype:
            req_body = [json.loads(line) for line in content.splitlines() if line]
        elif content:
            req_body = json.loads(content)
        else:
            req_body = None
        exchanges.append(
            {
                "request": {
                    "method": request.method,
                    "path": request.url.path,
                    "headers": {
                        k: request.headers[k] for k in ("accept", "content-type") if k in request.headers
                    },
                    "body": req_body,
                },
                "response": {"status": status, "headers": H, "body": body},
            }
        )
        return httpx.Response(status, headers=H, content=b"" if body is None else json.dumps(body).encode())

    with respx.mock(base_url=URL, assert_all_called=False) as mock:
        mock.route().mock(side_effect=handler)
        client = Elasticsearch(URL, node_class="httpx")
        ix = ElasticLabelIndex(client, INDEX)
        result = action(ix)
    assert not queue, name
    (OUT / f"{name}.json").write_text(
        json.dumps(
            {"description": description, "provenance": PROV, "exchanges": exchanges},
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    print(name, result)


DOCS = [
    LabelDoc(E + "tom_hanks", "entity", ["Tom Hanks"], ["Thomas Jeffrey Hanks"]),
    LabelDoc(E + "spielberg", "entity", ["Steven Spielberg"], ["Steven Allan Spielberg"]),
    LabelDoc(E + "franzen", "entity", ["Peter Franzén"]),
    LabelDoc(R + "directed_by", "relation", ["directed by"], ["director"]),
]


def bulk_ok(request):
    lines = [json.loads(line) for line in request.content.decode().splitlines() if line]
    items = []
    for i, meta in enumerate(lines[0::2]):
        m = meta["index"]
        items.append(
            {
                "index": {
                    "_index": m["_index"],
                    "_id": m["_id"],
                    "_version": 1,
                    "result": "created",
                    "_shards": {"total": 2, "successful": 1, "failed": 0},
                    "_seq_no": i,
                    "_primary_term": 1,
                    "status": 201,
                }
            }
        )
    return {"errors": False, "took": 12, "items": items}


def build(ix):
    for d in DOCS:
        ix.add(d)
    ix.commit()
    return ix.indexed


record(
    "create_and_bulk",
    "HEAD (index missing) -> PUT mapping -> bulk index 7 label docs -> refresh",
    [
        (404, None),
        (200, {"acknowledged": True, "shards_acknowledged": True, "index": INDEX}),
        (200, bulk_ok),
        (200, {"_shards": {"total": 2, "successful": 1, "failed": 0}}),
    ],
    build,
)


def bulk_err(request):
    body = bulk_ok(request)
    body["errors"] = True
    body["items"][1] = {
        "index": {
            "_index": INDEX,
            "_id": body["items"][1]["index"]["_id"],
            "status": 400,
            "error": {
                "type": "document_parsing_exception",
                "reason": "[1:2] mapping set to strict, dynamic introduction of [extra] within [_doc] is not allowed",
            },
        }
    }
    return body


def build_err(ix):
    ix._created = True  # index exists already
    for d in DOCS[:1]:
        ix.add(d)
    try:
        ix.commit()
    except Exception as exc:  # BulkIndexError
        return type(exc).__name__
    return "no error"


record(
    "bulk_error",
    "bulk response with errors=true and one failed item (status 400)",
    [(200, bulk_err)],
    build_err,
)

record(
    "search_typo",
    "entity search 'Stevn Spielberg': ES returns a distractor first and the primary label + alias of the gold IRI; rerank must put the gold first, once",
    [
        (
            200,
            search_resp(
                [
                    hit(E + "seagal", "Steven Seagal", "Steven Seagal", "steven seagal", 14.2),
                    hit(
                        E + "spielberg",
                        "Steven Spielberg",
                        "Steven Allan Spielberg",
                        "steven allan spielberg",
                        12.9,
                    ),
                    hit(E + "spielberg", "Steven Spielberg", "Steven Spielberg", "steven spielberg", 12.1),
                    hit(E + "stevens", "Stevens", "Stevens", "stevens", 3.3),
                ]
            ),
        )
    ],
    lambda ix: [(h.iri, h.matched, h.exact) for h in ix.search("Stevn Spielberg", 10)],
)

record(
    "search_exact_alias",
    "entity search 'THOMAS jeffrey_hanks' (normalised before sending): an alias is an exact match and must come first with matched=alias",
    [
        (
            200,
            search_resp(
                [
                    hit(E + "tom_hanks_jr", "Tom Hanks Jr", "Tom Hanks Jr", "tom hanks jr", 9.7),
                    hit(E + "tom_hanks", "Tom Hanks", "Thomas Jeffrey Hanks", "thomas jeffrey hanks", 9.1),
                ]
            ),
        )
    ],
    lambda ix: [(h.iri, h.label, h.matched, h.exact) for h in ix.search("THOMAS jeffrey_hanks", 5)],
)

record(
    "search_relation",
    "relation search 'director' (kind filter = relation), k=1",
    [
        (
            200,
            search_resp(
                [
                    hit(R + "written_by", "written by", "written by", "written by", 2.1, "relation"),
                    hit(R + "directed_by", "directed by", "director", "director", 11.0, "relation"),
                ]
            ),
        )
    ],
    lambda ix: [(h.iri, h.matched, h.kind) for h in ix.search("director", 1, kind="relation")],
)

record(
    "label_of",
    "primary labels of three IRIs, one unknown",
    [
        (
            200,
            search_resp(
                [
                    {
                        "_index": INDEX,
                        "_id": doc_id("entity", E + "tom_hanks", "tom hanks"),
                        "_score": 0.0,
                        "_source": {"iri": E + "tom_hanks", "label": "Tom Hanks"},
                    },
                    {
                        "_index": INDEX,
                        "_id": doc_id("relation", R + "directed_by", "directed by"),
                        "_score": 0.0,
                        "_source": {"iri": R + "directed_by", "label": "directed by"},
                    },
                ]
            ),
        )
    ],
    lambda ix: ix.label_of([E + "tom_hanks", R + "directed_by", E + "unknown"]),
)
