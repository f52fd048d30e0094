"""The KG-tool suite, run on every backend (embedded Oxigraph, Virtuoso, Oxigraph server).

Each test asserts concrete expected values *and* (for endpoint backends) equality with the
embedded backend, so "same results" is checked, not assumed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time

import pytest

from kgteam.tools.backends.oxigraph_store import OxigraphStore
from kgteam.tools.iri import readable_name
from kgteam.tools.kg_tools import KGTools
from kgteam.tools.types import ToolError, UnsafeQueryError

E = "http://example.org/kg/e/"
R = "http://example.org/kg/r/"
EX = "http://example.org/kg/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
BECANCOUR = E + "B%C3%A9cancour%2C%20Qu%C3%A9bec"
HEAT = E + "Heat_(1995_film)"


async def same_as_embedded(tools: KGTools, embedded: KGTools, method: str, *args, **kwargs):
    got = await getattr(tools, method)(*args, **kwargs)
    if tools is not embedded:
        want = await getattr(embedded, method)(*args, **kwargs)
        assert _dump(got) == _dump(want), f"{method}{args} differs from the embedded backend"
    return got


def _dump(x):
    if isinstance(x, list):
        return [_dump(i) for i in x]
    if hasattr(x, "model_dump"):
        d = x.model_dump()
        d.pop("elapsed_s", None)
        d.pop("query", None)
        return d
    return x


# ----------------------------------------------------------------------------- label search


async def test_search_entities_exact_alias_and_typo(tools: KGTools, embedded_tools: KGTools) -> None:
    hits = await same_as_embedded(tools, embedded_tools, "search_entities", "Blade Runner", 5)
    assert hits[0].iri == E + "Blade_Runner" and hits[0].exact
    assert E + "Blade_Runner_2049" in [h.iri for h in hits]
    indy = await tools.search_entities("Indy", 3)
    assert indy[0].iri == E + "Harrison_Ford" and indy[0].label == "Harrison Ford"
    typo = await tools.search_entities("Harisson Frod", 3)
    assert typo[0].iri == E + "Harrison_Ford"


async def test_search_relations(tools: KGTools, embedded_tools: KGTools) -> None:
    hits = await same_as_embedded(tools, embedded_tools, "search_relations", "directed by", 3)
    assert hits[0].iri == R + "directed_by" and hits[0].kind == "relation"


async def test_search_rejects_bad_arguments(tools: KGTools) -> None:
    with pytest.raises(ToolError):
        await tools.search_entities("   ", 5)
    with pytest.raises(ToolError):
        await tools.search_entities("x", 0)


# ----------------------------------------------------------------------------- schema


async def test_entity_schema_out(tools: KGTools, embedded_tools: KGTools) -> None:
    s = await same_as_embedded(tools, embedded_tools, "entity_schema", E + "Blade_Runner")
    assert s.label == "Blade Runner" and s.types == [EX + "Film"]
    out = {p.predicate: p for p in s.outgoing}
    assert out[R + "starred_actors"].count == 2
    assert out[R + "starred_actors"].value_types == [EX + "Person"]
    assert out[R + "starred_actors"].label == "starred actors"
    assert out[R + "release_year"].value_types == [XSD + "integer"]
    assert out[R + "runtimeMinutes"].value_types == [XSD + "integer"]  # xsd:int folded
    assert out[R + "runtimeMinutes"].label == "runtime minutes"  # humanised, no rdfs:label
    assert out[R + "rating"].value_types == [XSD + "decimal"]
    assert out[R + "budget"].value_types == [XSD + "double"]
    assert out[R + "is_sequel"].value_types == [XSD + "boolean"]
    assert out[R + "premiere"].value_types == [XSD + "date"]
    assert out[R + "tagline"].count == 2 and out[R + "tagline"].value_types == [RDF_LANGSTRING]
    counts = [p.count for p in s.outgoing]
    assert counts == sorted(counts, reverse=True)
    assert s.incoming == []


async def test_entity_schema_in(tools: KGTools, embedded_tools: KGTools) -> None:
    s = await same_as_embedded(tools, embedded_tools, "entity_schema", E + "Harrison_Ford")
    inc = {p.predicate: p for p in s.incoming}
    assert inc[R + "starred_actors"].count == 3 and inc[R + "starred_actors"].value_types == [EX + "Film"]
    hub = await same_as_embedded(tools, embedded_tools, "entity_schema", E + "Catalogue")
    assert [(p.predicate, p.count) for p in hub.outgoing] == [
        (R + "lists", 40),
        ("http://www.w3.org/2000/01/rdf-schema#label", 1),
    ]


# ----------------------------------------------------------------------------- neighbors


async def test_neighbors_out_with_labels_and_literals(tools: KGTools, embedded_tools: KGTools) -> None:
    n = await same_as_embedded(tools, embedded_tools, "neighbors", E + "Blade_Runner", direction="out")
    by = {(t.predicate, t.object) for t in n}
    assert (R + "directed_by", E + "Ridley_Scott") in by
    assert not any(t.predicate.endswith("#label") or t.predicate.endswith("#altLabel") for t in n)
    director = next(t for t in n if t.predicate == R + "directed_by")
    assert (director.subject_label, director.predicate_label, director.object_label) == (
        "Blade Runner", "directed by", "Ridley Scott",
    )
    year = next(t for t in n if t.predicate == R + "release_year")
    assert year.object_is_literal and year.object == "1982" and year.object_datatype == XSD + "integer"
    runtime = next(t for t in n if t.predicate == R + "runtimeMinutes")
    assert runtime.object_datatype == XSD + "integer" and runtime.predicate_label == "runtime minutes"
    flag = next(t for t in n if t.predicate == R + "is_sequel")
    assert flag.object == "false"
    rating = next(t for t in n if t.predicate == R + "rating")
    assert rating.object == "8.1"
    assert {t.object for t in n if t.predicate == R + "tagline"} == {
        "Man has made his match... now it's his problem.", "Der Mensch hat seinesgleichen geschaffen",
    }
    assert all(t.direction == "out" and t.hop == 1 for t in n)


async def test_neighbors_in_both_and_predicate_filter(tools: KGTools, embedded_tools: KGTools) -> None:
    inc = await same_as_embedded(tools, embedded_tools, "neighbors", E + "Harrison_Ford", direction="in")
    assert sorted(t.subject for t in inc) == [E + "Blade_Runner", E + "Blade_Runner_2049", E + "Witness"]
    assert all(t.object == E + "Harrison_Ford" and t.direction == "in" for t in inc)
    both = await same_as_embedded(tools, embedded_tools, "neighbors", E + "Ridley_Scott")
    assert {t.direction for t in both} == {"in", "out"}
    assert [t.direction for t in both] == sorted((t.direction for t in both), key=lambda d: d != "out")
    only = await same_as_embedded(
        tools, embedded_tools, "neighbors", E + "Blade_Runner", predicates=[R + "starred_actors"], direction="out"
    )
    assert [t.object for t in only] == [E + "Harrison_Ford", E + "Rutger_Hauer"]


async def test_neighbors_two_hops(tools: KGTools, embedded_tools: KGTools) -> None:
    n = await same_as_embedded(
        tools, embedded_tools, "neighbors", E + "Denis_Villeneuve", direction="both", hops=2
    )
    hop2 = [t for t in n if t.hop == 2]
    assert (E + "Blade_Runner_2049", R + "starred_actors", E + "Ryan_Gosling") in {
        (t.subject, t.predicate, t.object) for t in hop2
    }
    born = next(t for t in n if t.predicate == R + "born_in")
    assert born.object == BECANCOUR and born.object_label == "Bécancour, Québec"


async def test_neighbors_odd_iris_and_label_fallback(tools: KGTools, embedded_tools: KGTools) -> None:
    n = await same_as_embedded(tools, embedded_tools, "neighbors", HEAT, direction="out")
    labels = {t.object: t.object_label for t in n}
    assert labels[E + "AC%2FDC"] == "AC/DC"
    assert labels[E + "O%22Brien"] == 'O"Brien \\ the "quoted"'
    assert labels["urn:isbn:0451450523"] == readable_name("urn:isbn:0451450523")
    assert next(t for t in n if t.predicate == R + "mentions").predicate_label == "mentions"


async def test_neighbors_limit_is_deterministic(tools: KGTools, embedded_tools: KGTools) -> None:
    wide = KGTools(tools.store, tools.labels, edge_fetch=100)  # fetch the whole hub, then cut
    wide_embedded = KGTools(embedded_tools.store, embedded_tools.labels, edge_fetch=100)
    first = await same_as_embedded(wide, wide_embedded, "neighbors", E + "Catalogue", direction="out", limit=30)
    assert [t.object for t in first] == [f"{E}Item_{i:02d}" for i in range(30)]
    again = await tools.neighbors(E + "Catalogue", direction="out", limit=30)  # hub > limit: stable, sorted
    assert again == await tools.neighbors(E + "Catalogue", direction="out", limit=30)
    assert [t.object for t in again] == sorted(t.object for t in again)
    everything = await tools.neighbors(E + "Catalogue", direction="out", limit=1000)
    assert len(everything) == 40  # more than Virtuoso's test ResultSetMaxRows (25)


async def test_neighbors_refuses_injection(tools: KGTools) -> None:
    for bad in [E + "x> ?p ?o } ; DROP ALL ; #", "not an iri", E + "a b"]:
        with pytest.raises(ToolError):
            await tools.neighbors(bad)
    with pytest.raises(ToolError):
        await tools.neighbors(E + "Alien", predicates=["http://x> } #"])
    with pytest.raises(ToolError):
        await tools.neighbors(E + "Alien", hops=4)


# ----------------------------------------------------------------------------- run_sparql


async def test_run_sparql_select_same_terms(tools: KGTools, embedded_tools: KGTools) -> None:
    q = f"SELECT ?p ?o WHERE {{ <{E}Blade_Runner> ?p ?o FILTER(isLiteral(?o)) }} ORDER BY ?p STR(?o)"
    res = await same_as_embedded(tools, embedded_tools, "run_sparql", q)
    assert "LIMIT" in res.query and not res.truncated
    terms = {re.split("[/#]", r["p"].value)[-1] + "|" + r["o"].value: r["o"] for r in res.rows}
    assert terms["runtimeMinutes|117"].datatype == XSD + "integer"
    assert terms["is_sequel|false"].datatype == XSD + "boolean"
    assert terms["rating|8.1"].datatype == XSD + "decimal"
    assert terms["label|Blade Runner"].datatype is None and terms["label|Blade Runner"].lang is None
    assert terms["tagline|Der Mensch hat seinesgleichen geschaffen"].lang == "de"


async def test_run_sparql_ask_construct_and_aggregates(tools: KGTools, embedded_tools: KGTools) -> None:
    ask = await same_as_embedded(tools, embedded_tools, "run_sparql", f"ASK {{ <{E}Alien> ?p ?o }}")
    assert ask.boolean is True
    no = await tools.run_sparql(f"ASK {{ <{E}Nothing> ?p ?o }}")
    assert no.boolean is False
    c = await same_as_embedded(
        tools, embedded_tools, "run_sparql",
        f"CONSTRUCT {{ ?f <{R}by> ?d }} WHERE {{ ?f <{R}directed_by> ?d }} ORDER BY ?f",
    )
    assert sorted((r["subject"].value, r["object"].value) for r in c.rows) == [
        (E + "Alien", E + "Ridley_Scott"), (E + "Blade_Runner", E + "Ridley_Scott"),
        (E + "Blade_Runner_2049", E + "Denis_Villeneuve"),
    ]
    n = await same_as_embedded(
        tools, embedded_tools, "run_sparql", f"SELECT (COUNT(?f) AS ?n) WHERE {{ ?f a <{EX}Film> }}"
    )
    assert n.rows[0]["n"].value == "5" and n.rows[0]["n"].datatype == XSD + "integer"


async def test_run_sparql_caps_rows(tools: KGTools, embedded_tools: KGTools) -> None:
    q = f"SELECT ?o WHERE {{ <{E}Catalogue> <{R}lists> ?o }} ORDER BY ?o"
    full = await same_as_embedded(tools, embedded_tools, "run_sparql", q)
    assert len(full.rows) == 40 and not full.truncated  # paged past Virtuoso's ResultSetMaxRows
    capped = await same_as_embedded(tools, embedded_tools, "run_sparql", q, limit=10)
    assert len(capped.rows) == 10 and capped.truncated
    assert [r["o"].value for r in capped.rows] == [f"{E}Item_{i:02d}" for i in range(10)]
    own = await tools.run_sparql(q + " LIMIT 5")
    assert len(own.rows) == 5 and not own.truncated


async def test_run_sparql_caps_bytes_on_every_backend(tools: KGTools) -> None:
    q = f"SELECT ?o WHERE {{ <{E}Catalogue> <{R}lists> ?o }} ORDER BY ?o"
    full = await tools.run_sparql(q)
    size = sum(len(r["o"].value) for r in full.rows)
    saved = tools.max_result_bytes
    tools.max_result_bytes = size // 4
    try:
        cut = await tools.run_sparql(q)
        assert cut.truncated and cut.truncated_by == "bytes"
        assert 0 < len(cut.rows) < len(full.rows)
        assert sum(len(r["o"].value) for r in cut.rows) <= size // 4
        assert cut.rows == full.rows[: len(cut.rows)]
        with pytest.raises(ToolError, match="result cap"):  # one row alone over the cap
            await tools.run_sparql(f'SELECT ?x WHERE {{ BIND("{"x" * size}" AS ?x) }}')
    finally:
        tools.max_result_bytes = saved
    capped = await tools.run_sparql(q, limit=10)
    assert capped.truncated_by == "rows"


@pytest.mark.parametrize(
    "query",
    [
        f"INSERT DATA {{ <{E}x> <{R}y> <{E}z> }}",
        f"DELETE WHERE {{ <{E}Alien> ?p ?o }}",
        "DROP ALL",
        "LOAD <http://127.0.0.1:1/x.ttl>",
        "CLEAR DEFAULT",
        "SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }",
    ],
)
async def test_run_sparql_refuses_updates_and_service(tools: KGTools, query: str) -> None:
    with pytest.raises(UnsafeQueryError):
        await tools.run_sparql(query)
    still = await tools.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")
    assert still.boolean is True


async def test_run_sparql_timeout_on_every_backend(tools: KGTools) -> None:
    await tools.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")  # warm (embedded: starts its worker)
    t0 = time.perf_counter()
    with pytest.raises(ToolError):
        await tools.run_sparql(
            "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . FILTER(?c != ?l) }",
            timeout_s=1,
        )
    assert time.perf_counter() - t0 < 6


async def test_run_sparql_syntax_error(tools: KGTools) -> None:
    with pytest.raises(ToolError, match="syntax"):
        await tools.run_sparql("SELECT ?x WHERE { ?x ")


async def test_labels_for(tools: KGTools, embedded_tools: KGTools) -> None:
    got = await same_as_embedded(
        tools, embedded_tools, "labels_for", [E + "Alien", BECANCOUR, R + "budget", "urn:isbn:0451450523", "bad iri"]
    )
    assert got[E + "Alien"] == "Alien"
    assert got[BECANCOUR] == "Bécancour, Québec"
    assert got[R + "budget"] == "budget"
    assert "bad iri" in got  # unusable IRIs get a humanised name, never reach SPARQL


# ----------------------------------------------------------------------------- embedded-only details


def test_embedded_store_timeout(store_dir) -> None:
    store = OxigraphStore(store_dir)
    with pytest.raises(ToolError, match="timed out"):
        store.query("SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", timeout_s=0.0, max_rows=10**9)


async def test_run_sparql_timeout_stops_a_runaway_query(store_dir, label_index) -> None:
    store = OxigraphStore(store_dir)
    tools = KGTools(store, label_index)
    try:
        warm = await tools.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")  # starts the worker process
        assert warm.boolean is True
        worker = next(iter(store._sandbox._all))
        t0 = time.perf_counter()
        with pytest.raises(ToolError, match="timed out"):
            await tools.run_sparql(
                "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }", timeout_s=0.5
            )
        assert time.perf_counter() - t0 < 5
        assert not worker.alive()  # the runaway query was killed, not left burning a core
        after = await tools.run_sparql(f"SELECT ?o WHERE {{ <{E}Alien> <{R}release_year> ?o }}")
        assert after.rows[0]["o"].value == "1979"
    finally:
        store.close()
    assert not store._sandbox


async def test_ctrl_c_leaves_the_sparql_worker_to_its_parent(store_dir, label_index) -> None:
    """Ctrl-C reaches the whole process group; the worker neither dies with a traceback nor stops serving."""
    store = OxigraphStore(store_dir)
    tools = KGTools(store, label_index)
    try:
        await tools.run_sparql(f"ASK {{ <{E}Alien> ?p ?o }}")  # starts the worker process
        worker = next(iter(store._sandbox._all))
        os.kill(worker.proc.pid, signal.SIGINT)
        time.sleep(0.5)
        assert worker.alive()
        after = await tools.run_sparql(f"SELECT ?o WHERE {{ <{E}Alien> <{R}release_year> ?o }}")
        assert after.rows[0]["o"].value == "1979"
    finally:
        store.close()


async def test_neighbors_on_a_hub_beyond_edge_fetch_is_stable(store_dir, label_index) -> None:
    tools = KGTools(OxigraphStore(store_dir, sandbox_workers=0), label_index, edge_fetch=10)
    a = await tools.neighbors(E + "Catalogue", direction="out", limit=5)
    b = await tools.neighbors(E + "Catalogue", direction="out", limit=5)
    assert a == b and len(a) == 5
    assert [t.object for t in a] == sorted(t.object for t in a)


@pytest.mark.integration
def test_endpoint_without_page_size_marks_virtuoso_truncation(virtuoso_server) -> None:
    store = virtuoso_server.endpoint_store(page_size=None)
    res = store.query(f"SELECT ?o WHERE {{ <{E}Catalogue> <{R}lists> ?o }}", timeout_s=10, max_rows=1000)
    assert res.truncated and len(res.rows) == 25


async def test_tool_schemas_come_from_the_signatures_and_dispatch(embedded_tools: KGTools) -> None:
    box = embedded_tools.toolbox()
    specs = box.specs()
    names = [s["function"]["name"] for s in specs]
    assert names == ["search_entities", "search_relations", "entity_schema", "neighbors", "run_sparql", "labels_for",
                     "relation_names", "similar_triples"]
    json.dumps(specs)  # serialisable as-is
    for s in specs:
        assert s["type"] == "function" and s["function"]["parameters"]["type"] == "object"
        assert s["function"]["parameters"]["additionalProperties"] is False
    neighbors = next(s for s in specs if s["function"]["name"] == "neighbors")["function"]
    assert neighbors["parameters"]["required"] == ["iri"]
    assert neighbors["parameters"]["properties"]["hops"] == {"default": 1, "maximum": 3, "minimum": 1, "type": "integer"}
    assert neighbors["description"].startswith("Triples around an entity")  # the docstring's first line
    out = await box.call("neighbors", {"iri": E + "Alien", "direction": "out"})
    assert any(t["object"] == E + "Ridley_Scott" for t in out)
    with pytest.raises(ToolError, match="may not call tool 'drop_everything'"):
        await box.call("drop_everything", {})
    with pytest.raises(ToolError, match="sql"):
        await box.call("neighbors", {"iri": E + "Alien", "sql": "x"})


@pytest.mark.parametrize(("name", "arguments", "message"), [
    ("neighbors", {}, "iri: Field required"),
    ("run_sparql", {"query": "ASK {}", "limit": "ten"}, "limit: Input should be a valid integer"),
    ("run_sparql", {"query": "ASK {}", "limit": True}, "limit: a boolean is not allowed here"),
    ("run_sparql", {"query": "ASK {}", "limit": 0}, "limit: Input should be greater than or equal to 1"),
    ("run_sparql", {"query": "ASK {}", "timeout_s": float("inf")}, "timeout_s: Input should be a finite number"),
    ("run_sparql", {"query": "ASK {}", "timeout_s": "x"}, "timeout_s: Input should be a valid number"),
    ("labels_for", {"iris": "http://example.org/e/Alien"}, "iris: Input should be"),
    ("labels_for", {"iris": [1, 2]}, "iris.0: Input should be a valid string"),
    ("neighbors", {"iri": "x", "direction": "sideways"}, "direction: Input should be 'out', 'in' or 'both'"),
    ("neighbors", {"iri": "x", "hops": 2.5}, "hops: Input should be a valid integer"),
    ("search_entities", {"text": None}, "text: Input should be a valid string"),
])
async def test_tool_calls_validate_arguments(embedded_tools: KGTools, name, arguments, message) -> None:
    """A malformed call (from a model or from code) is a readable ToolError, never a raw exception."""
    box = embedded_tools.toolbox()
    with pytest.raises(ToolError) as err:
        await box.call(name, arguments)
    assert message in str(err.value) and str(err.value).startswith(f"bad arguments for {name}")
    with pytest.raises(ToolError):  # direct calls through the toolbox are checked the same way
        await box[name](**arguments)


async def test_null_optional_argument_means_default(embedded_tools: KGTools) -> None:
    box = embedded_tools.toolbox()
    out = await box.call("run_sparql", {"query": "SELECT ?s WHERE { ?s ?p ?o }", "limit": None, "timeout_s": 5})
    assert out["rows"]
    labels = await box.call("labels_for", {"iris": [E + "Alien"]})
    assert labels == {E + "Alien": "Alien"}


async def test_run_sparql_direct_calls_reject_bad_numbers(embedded_tools: KGTools) -> None:
    for kwargs in ({"limit": float("nan")}, {"limit": "x"}, {"timeout_s": "x"}, {"timeout_s": float("inf")}):
        with pytest.raises(ToolError):
            await embedded_tools.run_sparql("ASK {}", **kwargs)


async def test_from_kg_on_a_loaded_kg(tmp_path, kg_fixture) -> None:
    from kgteam.tools.kg import open_kg
    from kgteam.tools.loading import build_kg

    build_kg([kg_fixture], "toolsfixture", home=tmp_path, progress=False)
    with open_kg("toolsfixture", home=tmp_path) as kg:
        tools = KGTools.from_kg(kg)
        hits = await tools.search_entities("Ridley Scott", 3)
        assert hits[0].iri == E + "Ridley_Scott"
        n = await tools.neighbors(hits[0].iri, direction="in")
        assert {t.subject for t in n} == {E + "Alien", E + "Blade_Runner"}


async def test_entity_schema_without_any_rdf_type(label_index) -> None:
    import pyoxigraph as ox

    st = ox.Store()
    a, b, p, q = (ox.NamedNode(E + "a"), ox.NamedNode(E + "b"), ox.NamedNode(R + "p"), ox.NamedNode(R + "q"))
    st.add(ox.Quad(a, p, b))
    st.add(ox.Quad(a, q, ox.Literal("x", language="en")))
    st.add(ox.Quad(a, q, ox.Literal("7", datatype=ox.NamedNode(XSD + "int"))))
    tools = KGTools(OxigraphStore(st), label_index)
    s = await tools.entity_schema(E + "a")
    out = {x.predicate: x for x in s.outgoing}
    assert out[R + "p"].value_types == [] and out[R + "p"].count == 1
    assert out[R + "q"].count == 2 and sorted(out[R + "q"].value_types) == sorted([RDF_LANGSTRING, XSD + "integer"])
    assert s.types == [] and s.label is None


def test_unreachable_endpoint_is_an_endpoint_error_not_a_tool_error() -> None:
    """Roles take a ToolError as "nothing found" and go on: a server that is not there must end the question."""
    from servers import free_port

    from kgteam.tools.backends.sparql_endpoint import EndpointUnavailable, SparqlEndpointStore

    url = f"http://127.0.0.1:{free_port()}/sparql"
    store = SparqlEndpointStore(url, timeout_s=2)
    with pytest.raises(EndpointUnavailable, match="unreachable") as info:
        store.query("ASK { ?s ?p ?o }", timeout_s=2, max_rows=10)
    assert not isinstance(info.value, ToolError) and url in str(info.value)


@pytest.mark.integration
def test_virtuoso_bad_bulk_load_names_the_file(virtuoso_server) -> None:
    from servers import ServerError

    bad = virtuoso_server.workdir / "broken.nt"  # the work dir is in DirsAllowed
    bad.write_text('<http://example.org/kg/e/x> <http://example.org/kg/r/y> "unterminated .\n')
    with pytest.raises(ServerError, match="broken.nt"):
        virtuoso_server.bulk_load([bad], graph="http://kgteam.local/graph/broken")
    good = virtuoso_server.workdir / "fine.nt"
    good.write_text(f'<{E}extra> <{R}y> "ok" .\n')
    virtuoso_server.bulk_load([good], graph="http://kgteam.local/graph/other")  # old errors not re-reported
    store = virtuoso_server.endpoint_store()  # the loaded test KG is untouched
    assert store.query(f"ASK {{ <{E}Alien> ?p ?o }}", timeout_s=10, max_rows=1).boolean is True
