"""Read-only SPARQL wherever it may appear (EXISTS bodies included), relative IRIs, escaped
prefixed names, and refusals that say what, where and what to write instead (issue 25)."""

from __future__ import annotations

import pyoxigraph
import pytest

from kgteam.tools.kg_tools import KGTools
from kgteam.tools.sparql_allowlist import parse_read_only
from kgteam.tools.sparql_guard import QUERY_BASE_IRI, analyse_query, guard_query
from kgteam.tools.types import ToolError, UnsafeQueryError

PRE = "PREFIX e: <http://example.org/kg/e/> PREFIX r: <http://example.org/kg/r/>\n"

# Every read-only form, in an EXISTS / NOT EXISTS body and in the other places EXISTS may stand.
BODIES = [
    "{ ?x r:directed_by ?d } UNION { ?d r:starred_actors ?x }",
    "OPTIONAL { ?x r:has_genre ?g }",
    "?x r:directed_by ?d MINUS { ?d r:born_in e:South_Shields }",
    "GRAPH ?g { ?x ?p ?o }",
    "SELECT ?x WHERE { ?x r:has_genre ?g } GROUP BY ?x HAVING (COUNT(?g) > 1)",
    "{ SELECT DISTINCT ?x WHERE { ?x ?p ?o } ORDER BY ?x LIMIT 3 OFFSET 1 }",
    "VALUES ?x { e:Alien e:Witness }",
    "?x r:release_year ?y BIND (?y + 1 AS ?next)",
    "?x r:directed_by/r:born_in ?c",
    "?x ^r:directed_by|r:starred_actors* ?o",
    "?x (r:directed_by|!r:has_genre)+ ?o",
    "?x r:directed_by ?d FILTER NOT EXISTS { { ?d r:born_in ?c } UNION { OPTIONAL { ?d ?p ?q } } }",
    "?x r:directed_by ?d FILTER EXISTS { SELECT ?d WHERE { ?d r:born_in ?c } }",
]
PLACES = [
    "SELECT ?x WHERE {{ ?x a ?t FILTER NOT EXISTS {{ {b} }} }}",
    "SELECT ?x WHERE {{ ?x a ?t FILTER (EXISTS {{ {b} }} || ?t = e:Nothing) }}",
    "SELECT ?x ?has WHERE {{ ?x a ?t BIND (EXISTS {{ {b} }} AS ?has) }}",
    "SELECT ?x (NOT EXISTS {{ {b} }} AS ?none) WHERE {{ ?x a ?t }}",
    "SELECT ?t WHERE {{ ?x a ?t }} GROUP BY ?t HAVING (EXISTS {{ {b} }})",
    "SELECT ?x WHERE {{ ?x a ?t }} ORDER BY (EXISTS {{ {b} }}) ?x",
    "ASK {{ ?x a ?t MINUS {{ ?x a ?t FILTER EXISTS {{ {b} }} }} }}",
    "CONSTRUCT {{ ?x a ?t }} WHERE {{ ?x a ?t OPTIONAL {{ FILTER NOT EXISTS {{ {b} }} }} }}",
]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("body", BODIES)
def test_read_only_forms_pass_wherever_they_stand(place: str, body: str) -> None:
    text = guard_query(PRE + place.format(b=body), 10)
    pyoxigraph.Store().query(text)  # Oxigraph reads the same text: the two parsers agree


HIDDEN = [  # SERVICE and updates inside the places this issue opened
    "SELECT * WHERE { ?s ?p ?o FILTER NOT EXISTS { { ?s ?p ?o } UNION { SERVICE <URL> { ?a ?b ?c } } } }",
    "SELECT * WHERE { ?s ?p ?o FILTER EXISTS { SELECT ?s WHERE { SERVICE <URL> { ?s ?b ?c } } } }",
    "SELECT * WHERE { ?s ?p ?o FILTER EXISTS { OPTIONAL { SERVICE SILENT <URL> { ?a ?b ?c } } } }",
    "SELECT * WHERE { ?s ?p ?o FILTER NOT EXISTS { MINUS { GRAPH ?g { SERVICE <URL> { ?a ?b ?c } } } } }",
    "SELECT (EXISTS { { SELECT * { SERVICE <URL> { ?a ?b ?c } } } } AS ?x) WHERE { }",
    "SELECT ?s WHERE { ?s ?p ?o } GROUP BY ?s HAVING (NOT EXISTS { { } UNION { SERVICE <URL> { ?a ?b ?c } } })",
    "SELECT ?s WHERE { ?s ?p ?o } ORDER BY (EXISTS { FILTER NOT EXISTS { SERVICE <URL> { ?a ?b ?c } } })",
    "SELECT * WHERE { BIND (NOT EXISTS { VALUES ?a { 1 } SERVICE <URL> { ?a ?b ?c } } AS ?z) }",
]


@pytest.mark.parametrize("query", HIDDEN)
def test_service_hidden_in_exists_bodies_is_refused_by_the_allow_list_itself(query: str) -> None:
    """The word scan refuses SERVICE first; the allow-list must refuse it too, however deep."""
    query = query.replace("URL", "http://127.0.0.1:9/sparql")
    with pytest.raises(UnsafeQueryError, match="SERVICE"):
        analyse_query(query, 10)
    with pytest.raises(UnsafeQueryError, match="SERVICE"):
        parse_read_only(query)  # past the word scan: the algebra check alone


@pytest.mark.parametrize("update", ["INSERT DATA { <http://a> <http://b> <http://c> }", "DELETE WHERE { ?a ?b ?c }",
                                    "LOAD <http://127.0.0.1:9/x>", "DROP ALL"])
def test_updates_inside_exists_bodies_are_refused(update: str) -> None:
    for query in (f"SELECT * WHERE {{ ?s ?p ?o FILTER NOT EXISTS {{ {{ ?s ?p ?o }} UNION {{ {update} }} }} }}",
                  f"ASK {{ FILTER EXISTS {{ SELECT * WHERE {{ {update} }} }} }}"):
        with pytest.raises(UnsafeQueryError, match="read-only|LOAD"):
            analyse_query(query, 10)
        with pytest.raises(ToolError):  # not even rdflib's grammar has an update there
            parse_read_only(query)


async def test_the_issues_queries_run_on_a_real_kg(embedded_tools: KGTools) -> None:
    union = await embedded_tools.run_sparql(
        PRE + "SELECT ?f WHERE { ?f r:directed_by e:Ridley_Scott FILTER NOT EXISTS { { ?f r:has_genre e:Horror } "
              "UNION { e:Horror r:has_genre ?f } } }")
    assert [row["f"].value for row in union.rows] == ["http://example.org/kg/e/Blade_Runner"]
    ask = await embedded_tools.run_sparql(
        PRE + "ASK { e:Alien r:directed_by ?d FILTER NOT EXISTS { { ?d r:born_in e:Nowhere } UNION "
              "{ e:Nowhere r:born_in ?d } } }")
    assert ask.boolean is True
    optional = await embedded_tools.run_sparql(
        "SELECT * WHERE { <http://example.org/kg/e/Alien> ?p ?x FILTER EXISTS { OPTIONAL { ?x ?q ?c } } } LIMIT 2")
    assert len(optional.rows) == 2
    sub = await embedded_tools.run_sparql(
        PRE + "SELECT ?f WHERE { ?f r:starred_actors e:Harrison_Ford FILTER NOT EXISTS { SELECT ?f WHERE { "
              "?f r:directed_by ?d } } }")
    assert [row["f"].value for row in sub.rows] == ["http://example.org/kg/e/Witness"]


# --- relative IRIs ----------------------------------------------------------------------------


def _value(text: str) -> str:
    return list(pyoxigraph.Store().query(text))[0]["x"].value


def test_relative_iris_resolve_against_the_query_base() -> None:
    text = guard_query("SELECT ?x WHERE { BIND (<a/b#c> AS ?x) }", 10)
    assert text.startswith(f"BASE <{QUERY_BASE_IRI}>")
    assert _value(text) == QUERY_BASE_IRI + "a/b#c"
    # the query's own BASE comes after ours and wins
    assert _value(guard_query("BASE <http://ex.org/d/> SELECT ?x WHERE { BIND (<../e> AS ?x) }", 10)) == \
        "http://ex.org/e"
    # FROM, GRAPH and IN with relative IRIs (the W3C tests' forms) read and run
    for query in ("SELECT * FROM <data.ttl> WHERE { ?s ?p ?o }", "ASK { GRAPH <exists02.ttl> { ?s ?p ?o } }",
                  "SELECT * WHERE { ?s ?p ?o FILTER (?o IN (1, <x>)) }", "PREFIX : <> SELECT * WHERE { :a ?p ?o }"):
        pyoxigraph.Store().query(guard_query(query, 10))
    untouched = "SELECT * WHERE { ?s <http://e/p> ?o }"
    assert guard_query(untouched, 10).startswith(untouched)  # no relative IRI: no BASE added


# --- escaped prefixed names -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["e:a\\-b", "e:c\\~z\\.", "e:x\\(1\\)", "e:q\\?k\\=v\\&w", "e:c:d\\?",
                                  "e:\\_a%3Db", "e:a\\,b\\;c\\!\\$\\'\\*\\+\\/\\#\\@\\%25"])
def test_escaped_prefixed_names_find_what_turtle_loaded_under_the_same_name(name: str) -> None:
    """SPARQL and Turtle share PN_LOCAL_ESC: ``e:a\\-b`` is ``<http://e/a-b>`` in both. Oxigraph's
    Turtle reader decodes it so; its SPARQL reader (like rdflib's) keeps the backslash, so the
    guard writes the decoded IRI and the query finds the triple."""
    store = pyoxigraph.Store()
    store.load(f"@prefix e: <http://e/> . {name} e:p 1 .".encode(), format=pyoxigraph.RdfFormat.TURTLE)
    loaded = next(iter(store)).subject.value
    assert loaded == "http://e/" + name[2:].replace("\\", "")  # the grammar's decoding: drop each backslash
    text = guard_query(f"PREFIX e: <http://e/> SELECT ?x WHERE {{ ?x e:p 1 FILTER (?x = {name}) }}", 10)
    assert "\\" not in text  # no parser sees the escape
    assert [row["x"].value for row in store.query(text)] == [loaded]


def test_a_prefix_declared_without_a_space_is_read_too() -> None:
    assert "<http://e/a-b>" in guard_query("PREFIX e:<http://e/> SELECT ?x WHERE { BIND (e:a\\-b AS ?x) }", 10)
    with pytest.raises(ToolError, match="IRIs cannot hold"):  # that IRI was never checked as an IRI token
        analyse_query('PREFIX e:<http://e/"x> SELECT ?x WHERE { BIND (e:a\\-b AS ?x) }', 10)


@pytest.mark.parametrize(("query", "says"), [
    ("PREFIX e: <http://e/> SELECT * WHERE { ?s e:a\\:b ?o }", "a colon needs no escape in a prefixed name: write e:a:b"),
    ("PREFIX e: <http://e/> SELECT * WHERE { ?s e:a\\ b ?o }", "may escape only"),
    ("PREFIX e: <http://e/> SELECT * WHERE { ?s e:a\\%b ?o }", "%25"),
    ("SELECT * WHERE { ?s e:a\\-b ?o }", "PREFIX e: <...>"),
    ("PREFIX e: <rel/> SELECT * WHERE { ?s e:a\\-b ?o }", "full IRI"),
])
def test_bad_escaped_prefixed_names_are_refused_with_a_way_out(query: str, says: str) -> None:
    with pytest.raises(ToolError) as e:
        analyse_query(query, 10)
    assert f"line 1, column {query.index('e:a') + 1}" in str(e.value)
    assert says in str(e.value)


# --- messages ---------------------------------------------------------------------------------

GRAMMAR_WORDS = ("GroupOrUnionGraphPattern", "GraphPattern", "SelectQuery", "Expected", "Builtin_", "TriplesBlock")


def _refusal(query: str) -> str:
    with pytest.raises(ToolError) as e:
        analyse_query(query, 10)
    message = str(e.value)
    assert not any(word in message for word in GRAMMAR_WORDS), message
    return message


def test_refusals_say_what_where_and_what_to_write_instead() -> None:
    # escapes and a comment before the clause: the position is still the one in the text as written
    query = ('SELECT * WHERE { ?s <http://\\u0041/> "caf\\u00e9" . # a note\n'
             "  ?s ?p ?o FILTER NOT EXISTS { { ?s ?p ?o } UNION { SERVICE <http://x/> { ?a ?b ?c } } } }")
    column = query.split("\n")[1].index("SERVICE") + 1
    message = _refusal(query)
    assert f"SERVICE at line 2, column {column}" in message and "remove the SERVICE clause" in message
    message = _refusal("SELECT * WHERE { ?s ?p ?o }\n;\nDROP ALL")
    assert "DROP at line 3, column 1" in message and "read-only" in message and "SELECT" in message
    message = _refusal("SELECT * WHERE {\n  ?s ?p ?o .\n  OPTIONAL ?x }")
    assert "syntax error at line 3" in message and "OPTIONAL ?x" in message
    message = _refusal("PREFIX f: <http://ex/f#>\nSELECT * WHERE { ?s ?p ?o FILTER (f:odd(?o)) }")
    assert "unknown function <http://ex/f#odd> at line 2, column 35" in message and "built-in" in message


def test_the_dropped_counted_path_form_is_named() -> None:
    message = _refusal("PREFIX e: <http://e/>\nSELECT * WHERE { ?s e:p{1,3} ?o }")
    assert "{n,m}" in message and "line 2, column 24" in message and "p+" in message


# --- scope rules (rdflib does not check them; Oxigraph does) ----------------------------------

SCOPE_BROKEN = [  # (query, the variable's place in it, what the message says)
    ("SELECT ?s ?o WHERE { ?s ?p ?o } GROUP BY ?s", "?o WHERE", "neither grouped nor aggregated"),
    ("SELECT * WHERE { ?s ?p ?o } GROUP BY ?s", "* WHERE", "SELECT *"),
    ("SELECT ((?o + 1) AS ?n) (COUNT(*) AS ?c) WHERE { ?s ?p ?o }", "?n)", "uses ?o"),
    ("SELECT (1 AS ?x) (2 AS ?x) WHERE { }", "?x) (2", "selected twice"),
    ("SELECT (1 AS ?o) WHERE { ?s ?p ?o }", "?o) WHERE", "already binds"),
    ("SELECT * WHERE {\n  ?s ?p ?o .\n  BIND (1 AS ?o) }", "?o) }", "BIND"),
    ("SELECT * WHERE { { ?s ?p ?a } UNION { ?s ?p ?b } BIND (1 AS ?b) }", "?b) }", "BIND"),
    ("ASK { ?s ?p ?o FILTER NOT EXISTS { ?s ?q ?x BIND (2 AS ?x) } }", "?x) }", "BIND"),
    ("SELECT * WHERE { ?s ?p ?o FILTER EXISTS { SELECT ?s ?p WHERE { ?s ?p ?o } GROUP BY ?s } }", "?p WHERE",
     "neither grouped"),
]


@pytest.mark.parametrize(("query", "place", "says"), SCOPE_BROKEN)
def test_scope_errors_are_refused_by_the_guard_with_where_and_why(query: str, place: str, says: str) -> None:
    with pytest.raises(SyntaxError):  # Oxigraph refuses it too: the guard says so first, in words
        pyoxigraph.Store().query(query)
    message = _refusal(query)
    at = query.index(place)
    line, column = query.count("\n", 0, at) + 1, at - (query.rfind("\n", 0, at) + 1) + 1
    assert f"line {line}, column {column}" in message and says in message


SCOPE_FINE = [  # near misses: the guard must be no stricter than Oxigraph
    "SELECT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s",
    "SELECT (?s AS ?t) WHERE { ?s ?p ?o } GROUP BY ?s",
    "SELECT ?k (SAMPLE(?o) AS ?any) WHERE { ?s ?p ?o } GROUP BY (STR(?s) AS ?k)",
    "SELECT ?s WHERE { ?s ?p ?o } GROUP BY (?s)",
    "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o } HAVING (COUNT(*) > 0)",
    "SELECT ?s WHERE { ?s ?p ?o } GROUP BY ?s ORDER BY DESC(COUNT(?o))",
    "SELECT ?v (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s VALUES ?v { 1 }",
    "SELECT * WHERE { { ?s ?p ?o } UNION { BIND (1 AS ?o) } }",
    "SELECT * WHERE { ?s ?p ?o MINUS { ?s ?q ?m } BIND (1 AS ?m) }",
    "SELECT * WHERE { ?s ?p ?o FILTER (?z != 1) BIND (1 AS ?z) }",
    "SELECT (1 AS ?x) WHERE { ?s ?p ?o FILTER NOT EXISTS { ?s ?q ?x } }",
    "SELECT (1 AS ?x) WHERE { { SELECT ?s WHERE { ?s ?p ?x } } }",
    "SELECT ?s ?n WHERE { { SELECT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s } }",
    "SELECT * WHERE { ?s ?p ?o { BIND (?o AS ?copy) } }",
]


@pytest.mark.parametrize("query", SCOPE_FINE)
def test_queries_within_the_scope_rules_pass(query: str) -> None:
    pyoxigraph.Store().query(guard_query(query, 10))
