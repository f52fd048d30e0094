from __future__ import annotations

import time

import pyoxigraph
import pytest

from kgteam.tools.sparql_guard import (
    analyse_query,
    guard_query,
    query_shape_key,
    set_limit_offset,
    sparql_iri,
    sparql_literal,
)
from kgteam.tools.types import ToolError, UnsafeQueryError


@pytest.mark.parametrize(
    "query",
    [
        "INSERT DATA { <http://a> <http://b> <http://c> }",
        "DELETE WHERE { ?s ?p ?o }",
        "delete { ?s ?p ?o } insert { ?s ?p 1 } where { ?s ?p ?o }",
        "LOAD <http://example.org/data.ttl>",
        "CLEAR ALL",
        "CREATE GRAPH <http://g>",
        "DROP SILENT GRAPH <http://g>",
        "COPY <http://a> TO <http://b>",
        "MOVE DEFAULT TO <http://b>",
        "ADD <http://a> TO <http://b>",
        "WITH <http://g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
        "SELECT * WHERE { SERVICE <http://dbpedia.org/sparql> { ?s ?p ?o } }",
        "SELECT * WHERE { SERVICE SILENT <http://x> { ?s ?p ?o } }",
        "PREFIX ex: <http://e/> SELECT * { ?s ?p ?o } ; DROP ALL",
    ],
)
def test_updates_and_service_are_refused(query: str) -> None:
    with pytest.raises(UnsafeQueryError):
        guard_query(query, 10)


def test_keywords_inside_strings_iris_comments_and_names_are_not_refused() -> None:
    q = (
        'PREFIX drop: <http://e/drop#>\n'
        'SELECT ?insert WHERE { ?insert <http://e/DELETE> "DROP ALL; SERVICE <x>" . '
        "?insert drop:load 'clear' . # INSERT DATA { }\n"
        '?insert <http://e/p> """multi\nline LOAD""" }'
    )
    out = guard_query(q, 5)
    assert out.rstrip().endswith("LIMIT 5")


def test_syntax_errors_are_tool_errors_not_unsafe() -> None:
    with pytest.raises(ToolError) as e:
        guard_query("SELECT * WHERE { ?s ?p ", 10)
    assert not isinstance(e.value, UnsafeQueryError)
    assert "syntax" in str(e.value).lower()


def test_limit_added_lowered_or_kept() -> None:
    assert analyse_query("SELECT * WHERE { ?s ?p ?o }", 100).limit == 100
    lowered = analyse_query("SELECT * WHERE { ?s ?p ?o } LIMIT 5000", 100)
    assert lowered.limit == 100 and "LIMIT 100" in lowered.text and "5000" not in lowered.text
    kept = analyse_query("SELECT * WHERE { ?s ?p ?o } LIMIT 7 OFFSET 3", 100)
    assert (kept.limit, kept.offset) == (7, 3) and kept.text.endswith("LIMIT 7 OFFSET 3")
    # a LIMIT inside a subquery is not the top-level one
    sub = analyse_query("SELECT * WHERE { { SELECT ?s WHERE { ?s ?p ?o } LIMIT 9999 } }", 10)
    assert "LIMIT 9999" in sub.text and sub.text.rstrip().endswith("LIMIT 10")
    # a trailing comment cannot swallow the added LIMIT; a trailing VALUES stays last
    commented = guard_query("SELECT * WHERE { ?s ?p ?o } # done", 3)
    assert _run(commented) is not None
    values = guard_query("SELECT * WHERE { ?s ?p ?o } VALUES ?s { <http://a> }", 3)
    assert values.index("LIMIT 3") < values.index("VALUES")
    assert analyse_query("ASK { ?s ?p ?o }", 10).limit is None
    assert "LIMIT 4" in guard_query("CONSTRUCT WHERE { ?s ?p ?o }", 4)
    assert "LIMIT 4" in guard_query("DESCRIBE <http://a>", 4)


def test_set_limit_offset_pages_a_guarded_query() -> None:
    q = guard_query("SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s", 100)
    paged = set_limit_offset(q, 25, 50)
    info = analyse_query(paged, None)
    assert (info.limit, info.offset) == (25, 50)


def _run(query: str):
    return list(pyoxigraph.Store().query(query))


@pytest.mark.parametrize(
    "bad",
    ["http://a> } DROP ALL #", "no-scheme", "http://a b", 'http://a"', "http://a{b}", "http://a\\b", "http://a\n",
     "http://a|b", "http://a^b", "http://a`b", ""],
)
def test_sparql_iri_rejects_anything_that_could_break_out(bad: str) -> None:
    with pytest.raises(ToolError):
        sparql_iri(bad)


def test_sparql_iri_accepts_real_iris() -> None:
    for iri in ["http://example.org/e/Heat_(1995_film)", "urn:isbn:0451450523", "http://e/B%C3%A9c%2C"]:
        assert sparql_iri(iri) == f"<{iri}>"


@pytest.mark.parametrize(
    "text",
    ['plain', 'a "quoted" \\ backslash', "new\nline\ttab\r", '" } ; DROP ALL ; #', "\\u0022) } ", "ctrl\x01\x7f",
     "Bécancour, Québec 🎬", "'single'"],
)
def test_sparql_literal_round_trips_exactly(text: str) -> None:
    rows = _run(f"SELECT ?x WHERE {{ BIND({sparql_literal(text)} AS ?x) }}")
    assert rows[0]["x"].value == text


def test_sparql_literal_lang_and_datatype() -> None:
    rows = _run(f"SELECT ?x ?y WHERE {{ BIND({sparql_literal('Hallo', lang='de-DE')} AS ?x) "
                f"BIND({sparql_literal('5', datatype='http://www.w3.org/2001/XMLSchema#integer')} AS ?y) }}")
    assert rows[0]["x"].language.lower() == "de-de"
    assert rows[0]["y"].datatype.value.endswith("#integer")
    with pytest.raises(ToolError):
        sparql_literal("x", lang="en } DROP")
    with pytest.raises(ToolError):
        sparql_literal("x", datatype="http://x> . }")


# --- codepoint escapes: the scanner and the parser must agree on where an IRI ends -------------

ESCAPE_SMUGGLED_SERVICE = [
    # the escape made the scanner end the IRI early and read the rest of the line as a comment
    "SELECT * WHERE { BIND(<http://x/\\u0041(#> AS ?z) SERVICE <URL> { ?s ?p ?o }\n}",
    # ... or as a string running to a second smuggled quote
    "SELECT * WHERE { BIND(<http://x/\\u0041('> AS ?x) SERVICE <URL> { ?s ?p ?o } "
    "BIND(<http://x/\\u0041('> AS ?y) }",
    # ASK is evaluated by the parse check itself, so the guard would have fetched it
    "ASK { BIND(<http://x/\\u0041(#> AS ?z) SERVICE <URL> { ?s ?p ?o }\n}",
    # the keyword itself spelled with an escape
    "SELECT * WHERE { \\u0053ERVICE <URL> { ?s ?p ?o } }",
]


@pytest.fixture
def listener():
    """A loopback TCP server that records whether anything connected to it."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    hits: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    hits.append(conn.recv(1024))
                except OSError:
                    hits.append(b"")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/exfil", hits
    stop.set()
    thread.join(timeout=2)
    server.close()


@pytest.mark.parametrize("template", ESCAPE_SMUGGLED_SERVICE)
def test_service_hidden_behind_codepoint_escapes_is_refused_and_nothing_is_fetched(template, listener):
    url, hits = listener
    query = template.replace("URL", url)
    with pytest.raises(UnsafeQueryError, match="SERVICE"):
        guard_query(query, 10)
    import time

    time.sleep(0.3)
    assert hits == []


def test_codepoint_escapes_are_decoded_into_the_query_that_runs():
    text = guard_query('SELECT * WHERE { ?s <http://ex/\\u0041> "caf\\u00e9" }', 10)
    assert "<http://ex/A>" in text and '"café"' in text and "\\u" not in text


def test_stray_backslash_outside_strings_is_refused():
    with pytest.raises(UnsafeQueryError, match="backslash"):
        guard_query("SELECT * WHERE { ?s ?p ?o } \\ ", 10)


def test_unsupported_custom_function_is_a_tool_error_not_a_crash():
    with pytest.raises(ToolError, match="could not be prepared"):
        guard_query("SELECT * WHERE { ?s ?p ?o FILTER(<http://ex/f>(?o)) }", 10)


def _smuggling_forms(port: int) -> list[str]:
    """SERVICE hidden where a word scanner and the SPARQL parser disagree on token ends."""
    url = f"http://127.0.0.1:{port}/sparql"
    inner = "{ ?a ?b ?c }"
    return [
        f"PREFIX : <http://127.0.0.1:{port}/> ASK {{ SERVICE:sparql{inner} }}",
        f"PREFIX : <http://127.0.0.1:{port}/> SELECT * WHERE {{ SERVICE:sparql{inner} }}",
        f"SELECT * WHERE {{ ?s ?p trueSERVICE<{url}>{inner} }}",
        f"SELECT * WHERE {{ ?s ?p falseSERVICE<{url}>{inner} }}",
        f"SELECT * WHERE {{ ?s ?p 1SERVICE<{url}>{inner} }}",
        f"SELECT * WHERE {{ ?s ?p \"x\"SERVICE<{url}>{inner} }}",
        f"PREFIX e: <http://e/> SELECT * WHERE {{ ?s ?p e:x.SERVICE<{url}>{inner} }}",
        f"SELECT * WHERE {{ OPTIONAL {{ service silent <{url}> {inner} }} }}",
        f"SELECT * WHERE {{ {{ ?s ?p ?o }} UNION {{ SERVICE <{url}> {inner} }} }}",
        f"SELECT * WHERE {{ {{ SELECT * WHERE {{ SERVICE <{url}> {inner} }} }} }}",
        f"SELECT * WHERE {{ FILTER EXISTS {{ SeRvIcE <{url}> {inner} }} }}",
        f"CONSTRUCT {{ ?a ?b ?c }} WHERE {{ SERVICE <{url}> {inner} }}",
        f"DESCRIBE ?a WHERE {{ SERVICE <{url}> {inner} }}",
        f"ASK {{ \\u0053ERVICE <{url}> {inner} }}",
    ]


def test_service_smuggling_is_refused_and_reaches_no_host() -> None:
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    hits: list[int] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            hits.append(1)
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        for query in _smuggling_forms(port):
            with pytest.raises(ToolError):  # UnsafeQueryError or a syntax error: never executed
                analyse_query(query, 10)
    finally:
        stop.set()
        thread.join(2)
        listener.close()
    assert hits == []


def test_the_word_service_in_data_is_fine() -> None:
    for query in ("SELECT * WHERE { ?s <http://e/service> ?o }", 'SELECT * WHERE { ?s ?p "self-service" }',
                  "SELECT ?service WHERE { ?service ?p ?o }"):
        assert analyse_query(query, 10).text


# --- bounds before parsing, and a check that never evaluates ------------------------------------


@pytest.fixture
def no_parser(monkeypatch):
    """Fails the test if the guard hands the query to its SPARQL parser."""
    import kgteam.tools.sparql_guard as guard

    def refuse(text: str):
        raise AssertionError("the parser was reached")

    guard._shapes.clear()
    monkeypatch.setattr(guard, "parse_read_only", refuse)


@pytest.mark.parametrize(
    ("query", "limit"),
    [
        ("SELECT * WHERE " + "{" * 2245 + "}" * 2245, "32"),  # segfaulted Oxigraph's parser
        ("SELECT * WHERE { FILTER(" + "(" * 33 + "1" + ")" * 33 + ") }", "32"),
        ("SELECT * WHERE { ?s ?p ?o }" + " " * 70_000, "65536 bytes"),
        ("SELECT * WHERE { BIND(\"" + "é" * 40_000 + "\" AS ?x) }", "65536 bytes"),  # bytes, not characters
        ("SELECT ?x WHERE { VALUES ?x { " + " ".join(str(i) for i in range(1_200)) + " } }", "1000"),
        ("SELECT * WHERE { FILTER(" + "+".join(["1"] * 400) + " > 0) }", "300"),
    ],
)
def test_bounds_refuse_before_any_parser_and_name_the_limit(query: str, limit: str, no_parser) -> None:
    t0 = time.perf_counter()
    with pytest.raises(UnsafeQueryError, match=limit):
        analyse_query(query, 10)
    assert time.perf_counter() - t0 < 1


def test_the_check_never_evaluates(monkeypatch) -> None:
    """ASK, ORDER BY and aggregates used to be evaluated by the syntax check (24 s for this one)."""
    def no_store(*args, **kwargs):
        raise AssertionError("the guard opened a store")

    monkeypatch.setattr(pyoxigraph, "Store", no_store)
    values = " ".join(str(i) for i in range(100))
    product = f"VALUES ?a {{ {values} }} VALUES ?b {{ {values} }} VALUES ?c {{ {values} }}"
    for query in (f"ASK {{ {product} FILTER(?a + ?b + ?c < 0) }}",
                  f"SELECT (COUNT(*) AS ?n) WHERE {{ {product} }}",
                  f"SELECT * WHERE {{ {product} }} ORDER BY DESC(?a * ?b * ?c)"):
        t0 = time.perf_counter()
        assert analyse_query(query, 10).form in ("ASK", "SELECT")
        assert time.perf_counter() - t0 < 2


def test_a_literal_may_hold_an_escaped_quote() -> None:
    """``\\u0022`` in a string is a quote inside the string (it used to end it: a false refusal)."""
    text = guard_query('SELECT ?x WHERE { BIND("a\\u0022b" AS ?x) }', 10)
    assert _run(text)[0]["x"].value == 'a"b'
    text = guard_query("SELECT ?x WHERE { BIND('it\\u0027s' AS ?x) }", 10)
    assert _run(text)[0]["x"].value == "it's"
    kept = guard_query('SELECT ?x WHERE { BIND("a\\\\u0022b" AS ?x) }', 10)  # an escaped backslash, then text
    assert _run(kept)[0]["x"].value == "a\\u0022b"
    assert _run(guard_query('SELECT ?x WHERE { BIND("a\\u005Cb" AS ?x) }', 10))[0]["x"].value == "a\\b"


@pytest.mark.parametrize("iri", ["<http://e/\\u003E>", "<http://e/\\u0020x>", "<http://e/\\u007B>"])
def test_an_escape_cannot_put_a_forbidden_character_in_an_iri(iri: str) -> None:
    with pytest.raises(UnsafeQueryError, match="IRIs cannot hold"):
        analyse_query(f"SELECT ?x WHERE {{ BIND({iri} AS ?x) }}", 10)


def test_stray_escapes_are_refused_and_say_where() -> None:
    with pytest.raises(UnsafeQueryError, match="reads") as e:
        analyse_query("SELECT ?x WHERE { BIND(1 AS \\u003Fx) }", 10)
    assert "line 1, column 29" in str(e.value) and "reads" in str(e.value)


@pytest.mark.parametrize("modifier", ["LIMIT 1e400", "LIMIT 1.5", "OFFSET 2.5"])
def test_non_integer_limits_are_syntax_errors(modifier: str) -> None:
    with pytest.raises(ToolError, match="integer"):
        analyse_query(f"SELECT * WHERE {{ ?s ?p ?o }} {modifier}", 10)


def test_scanner_and_parser_must_agree(monkeypatch) -> None:
    import kgteam.tools.sparql_guard as guard
    from kgteam.tools.sparql_allowlist import ParsedQuery

    guard._shapes.clear()
    monkeypatch.setattr(guard, "parse_read_only", lambda text: ParsedQuery("SELECT", None, None))
    with pytest.raises(UnsafeQueryError, match="reads differently"):
        analyse_query("SELECT * WHERE { ?s ?p ?o }", 10)  # the guard added LIMIT 10; "the parser" saw none
    guard._shapes.clear()
    monkeypatch.setattr(guard, "parse_read_only", lambda text: ParsedQuery("CONSTRUCT", 10, 0))
    with pytest.raises(UnsafeQueryError, match="reads differently"):
        analyse_query("SELECT * WHERE { ?s ?p ?o }", 10)


@pytest.mark.parametrize(
    "query",
    ["SELECT * WHERE { ?s ?p ?o FILTER(<http://ex/f>(?o)) }",
     "PREFIX fn: <http://www.w3.org/2005/xpath-functions#> SELECT (fn:doc(\"x\") AS ?x) WHERE { }"],
)
def test_only_builtins_and_xsd_casts_are_callable(query: str) -> None:
    with pytest.raises(ToolError, match="unknown function"):
        analyse_query(query, 10)
    assert analyse_query("PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT (xsd:integer(\"1\") AS ?x) "
                         "WHERE { }", 10).form == "SELECT"


def test_the_parser_verdict_is_kept_per_shape_never_across_shapes(monkeypatch) -> None:
    import kgteam.tools.sparql_guard as guard

    parsed: list[str] = []
    real = guard.parse_read_only

    def counting(text: str):
        parsed.append(text)
        return real(text)

    guard._shapes.clear()
    monkeypatch.setattr(guard, "parse_read_only", counting)
    for i in range(5):  # what roles send: one template, other IRIs and literals
        analyse_query(f'SELECT ?x WHERE {{ ?x <http://e/p{i}> <http://e/o{i}> ; <http://e/l> "name {i}" }}', 10)
    assert len(parsed) == 1
    analyse_query("SELECT ?x WHERE { ?x <http://e/p> ?o . ?o <http://e/q> ?x }", 10)  # another shape
    assert len(parsed) == 2
    xsd = "http://www.w3.org/2001/XMLSchema#integer"
    analyse_query(f'SELECT ?x WHERE {{ BIND(<{xsd}>("1") AS ?x) }}', 10)
    with pytest.raises(ToolError, match="unknown function"):  # a called IRI is part of the shape
        analyse_query('SELECT ?x WHERE { BIND(<http://ex/f>("1") AS ?x) }', 10)
    with pytest.raises(UnsafeQueryError, match="SERVICE"):  # refusals are never kept as shapes
        analyse_query("SELECT * WHERE { SERVICE <http://e/s> { ?s ?p ?o } }", 10)
    assert query_shape_key('SELECT * WHERE { ?s <http://a> "x" . ?s <http://b> """y""" }') == (
        'SELECT * WHERE { ?s <> "" . ?s <> """""" }')
