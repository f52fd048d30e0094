"""The query graph end to end: the builder's SPARQL for each shape, run through the guard on a real
(in-memory) Oxigraph store; the parser reading SPARQL back (the builder's own ties form included,
and a sample of public gold queries); errors that name what they cannot express; escaping."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pyoxigraph
import pytest
from shared_paths import SHARED_DATA

from kgteam.protocols.errors import KgteamError
from kgteam.protocols.query_graph import (
    RDF_TYPE,
    XSD,
    Aggregate,
    AnswerKind,
    Compare,
    ExprFilter,
    Func,
    Group,
    Iri,
    Lit,
    OrderKey,
    QueryGraph,
    Triple,
    iri,
    lit,
    var,
)
from kgteam.tools.query_builder import compile_query
from kgteam.tools.query_parse import QueryParseError, QuerySyntaxError, parse_query
from kgteam.tools.sparql_guard import analyse_query
from kgteam.tools.types import ToolError

NS = "http://test.kgteam.invalid/shelf/"
QUESTIONS = SHARED_DATA / "questions"
BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "query_coverage.py"


def n(name: str) -> Iri:
    return iri(NS + name)


def t(name: str) -> str:
    return f"<{NS}{name}>"


TYPE = f"<{RDF_TYPE}>"
# A tiny shelf of books: b2 and b3 share the most pages (450); b4 has two authors; m1 is no Book.
SHELF = [
    ("b1", "Volume", "writtenBy", "w1"), ("b2", "Volume", "writtenBy", "w1"), ("b3", "Volume", "writtenBy", "w2"),
    ("b4", "Volume", "writtenBy", "w2"), ("b4", "Volume", "writtenBy", "w3"), ("m1", "Leaflet", "writtenBy", "w1"),
]
GENRES = {"b1": "fable", "b2": "gothic", "b3": "fable", "b4": "verse", "m1": "fable"}
PAGES = {"b1": 300, "b2": 450, "b3": 450, "b4": 120, "m1": 80}
ODD_TITLE = 'He said "stop" } ;\nDROP ALL # not a comment\\'


@pytest.fixture(scope="module")
def store() -> pyoxigraph.Store:
    s = pyoxigraph.Store()
    N = pyoxigraph.NamedNode  # noqa: N806
    quads = []
    for book, cls, pred, person in SHELF:
        quads.append(pyoxigraph.Quad(N(NS + book), N(RDF_TYPE), N(NS + cls)))
        quads.append(pyoxigraph.Quad(N(NS + book), N(NS + pred), N(NS + person)))
    for book, genre in GENRES.items():
        quads.append(pyoxigraph.Quad(N(NS + book), N(NS + "genre"), N(NS + genre)))
    for book, pages in PAGES.items():
        quads.append(pyoxigraph.Quad(N(NS + book), N(NS + "pages"),
                                     pyoxigraph.Literal(str(pages), datatype=N(XSD + "integer"))))
    quads.append(pyoxigraph.Quad(N(NS + "b1"), N(NS + "title"), pyoxigraph.Literal(ODD_TITLE)))
    s.extend(quads)
    return s


def run(store: pyoxigraph.Store, q: QueryGraph) -> set[str] | bool:
    """Compile, pass the guard, execute; the bound values of the first answer (or the count)."""
    text = analyse_query(compile_query(q), 100).text
    result = store.query(text)
    if isinstance(result, pyoxigraph.QueryBoolean):
        return bool(result)
    column = q.aggregate.alias if q.aggregate is not None else q.answer[0].name
    return {row[column].value.removeprefix(NS) for row in result}


def stable(q: QueryGraph) -> None:
    """The compiled query reads back as ``q`` (the parser adds the topics and expected kind it sees)."""
    back = parse_query(compile_query(q))
    assert back.model_copy(update={"topics": q.topics, "expected": q.expected}) == q
    assert parse_query(compile_query(back)) == back


# ---------------------------------------------------------------------------- shapes


def test_chain(store: pyoxigraph.Store) -> None:
    q = QueryGraph(answer=[var("g")], where=Group(triples=[
        Triple(subject=var("b"), predicate=n("writtenBy"), object=n("w1")),
        Triple(subject=var("b"), predicate=n("genre"), object=var("g"))]))
    assert compile_query(q) == (f"SELECT DISTINCT ?g WHERE {{ ?b {t('writtenBy')} {t('w1')} . "
                                f"?b {t('genre')} ?g . }}")
    assert run(store, q) == {"fable", "gothic"}
    assert q.shape == "chain"
    stable(q)


def test_intersection_of_two_entities(store: pyoxigraph.Store) -> None:
    q = QueryGraph(answer=[var("b")], where=Group(triples=[
        Triple(subject=var("b"), predicate=n("writtenBy"), object=n("w2")),
        Triple(subject=var("b"), predicate=n("writtenBy"), object=n("w3"))]))
    assert compile_query(q) == (f"SELECT DISTINCT ?b WHERE {{ ?b {t('writtenBy')} {t('w2')} . "
                                f"?b {t('writtenBy')} {t('w3')} . }}")
    assert run(store, q) == {"b4"}
    assert q.shape == "intersection"
    stable(q)


def test_union(store: pyoxigraph.Store) -> None:
    alternatives = [Group(triples=[Triple(subject=var("b"), predicate=n("genre"), object=n(g))])
                    for g in ("gothic", "verse")]
    q = QueryGraph(answer=[var("b")], where=Group(unions=[alternatives]))
    assert compile_query(q) == (f"SELECT DISTINCT ?b WHERE {{ {{ ?b {t('genre')} {t('gothic')} . }} UNION "
                                f"{{ ?b {t('genre')} {t('verse')} . }} }}")
    assert run(store, q) == {"b2", "b4"}
    assert q.shape == "union"
    stable(q)


def test_not_exists(store: pyoxigraph.Store) -> None:
    q = QueryGraph(answer=[var("b")], where=Group(
        triples=[Triple(subject=var("b"), predicate=iri(RDF_TYPE), object=n("Volume"))],
        not_exists=[Group(triples=[Triple(subject=var("b"), predicate=n("genre"), object=n("fable"))])]))
    assert compile_query(q) == (f"SELECT DISTINCT ?b WHERE {{ ?b {TYPE} {t('Volume')} . "
                                f"FILTER NOT EXISTS {{ ?b {t('genre')} {t('fable')} . }} }}")
    assert run(store, q) == {"b2", "b4"}
    assert q.shape == "negation"
    stable(q)


def test_count(store: pyoxigraph.Store) -> None:
    q = QueryGraph(aggregate=Aggregate(var=var("b")), where=Group(triples=[
        Triple(subject=var("b"), predicate=n("writtenBy"), object=n("w1")),
        Triple(subject=var("b"), predicate=iri(RDF_TYPE), object=n("Volume"))]))
    assert compile_query(q) == (f"SELECT (COUNT(DISTINCT ?b) AS ?count) WHERE {{ ?b {t('writtenBy')} {t('w1')} . "
                                f"?b {TYPE} {t('Volume')} . }}")
    assert run(store, q) == {"2"}
    assert q.shape == "count"
    parsed = parse_query(compile_query(q))
    assert parsed.aggregate == q.aggregate and parsed.where == q.where
    assert parsed.expected == AnswerKind(kind="number")


def test_superlative_keeps_ties(store: pyoxigraph.Store) -> None:
    pattern = Group(triples=[Triple(subject=var("b"), predicate=iri(RDF_TYPE), object=n("Volume")),
                             Triple(subject=var("b"), predicate=n("pages"), object=var("p"))])
    q = QueryGraph(answer=[var("b")], where=pattern, order=[OrderKey(expr=var("p"), descending=True)],
                   limit=1, ties=True)
    where = f"?b {TYPE} {t('Volume')} . ?b {t('pages')} ?p ."
    assert compile_query(q) == (f"SELECT DISTINCT ?b WHERE {{ {where} {{ SELECT (MAX(?p) AS ?best) WHERE "
                                f"{{ {where} }} }} FILTER(?p = ?best) }}")
    assert run(store, q) == {"b2", "b3"}  # both have 450 pages
    assert run(store, q.model_copy(update={"ties": False})) in ({"b2"}, {"b3"})
    assert q.shape == "superlative"
    back = parse_query(compile_query(q))
    assert (back.order, back.limit, back.ties, back.where) == (q.order, 1, True, pattern)
    # the smallest, and a query that already uses ?best: the sub-select's alias must not join with it
    shortest = QueryGraph(answer=[var("best")], where=Group(triples=[
        Triple(subject=var("best"), predicate=n("pages"), object=var("p"))]),
        order=[OrderKey(expr=var("p"))], limit=1, ties=True)
    assert "?best_1" in compile_query(shortest)
    assert run(store, shortest) == {"m1"}
    stable(shortest)
    # a second place is not a superlative with ties: OFFSET is kept
    second = q.model_copy(update={"offset": 2})
    assert run(store, second) == {"b1"}


def test_numeric_comparison(store: pyoxigraph.Store) -> None:
    q = QueryGraph(answer=[var("b")], where=Group(
        triples=[Triple(subject=var("b"), predicate=n("pages"), object=var("p"))],
        filters=[Compare(left=var("p"), op=">", right=lit(200))]))
    assert compile_query(q) == f"SELECT DISTINCT ?b WHERE {{ ?b {t('pages')} ?p . FILTER(?p > 200) }}"
    assert run(store, q) == {"b1", "b2", "b3"}
    assert q.shape == "comparative"
    stable(q)


def test_ask(store: pyoxigraph.Store) -> None:
    def ask(book: str) -> QueryGraph:
        return QueryGraph(form="ask", expected=AnswerKind(kind="boolean"), where=Group(triples=[
            Triple(subject=n(book), predicate=n("writtenBy"), object=n("w1"))]), topics=[NS + book, NS + "w1"])

    assert compile_query(ask("b1")) == f"ASK WHERE {{ {t('b1')} {t('writtenBy')} {t('w1')} . }}"
    assert run(store, ask("b1")) is True
    assert run(store, ask("b3")) is False
    assert ask("b1").shape == "ask"
    stable(ask("b1"))


def test_class_constraint(store: pyoxigraph.Store) -> None:
    q = QueryGraph(answer=[var("x")], where=Group(triples=[
        Triple(subject=var("x"), predicate=n("writtenBy"), object=n("w1")),
        Triple(subject=var("x"), predicate=iri(RDF_TYPE), object=n("Volume"))]))
    assert compile_query(q) == (f"SELECT DISTINCT ?x WHERE {{ ?x {t('writtenBy')} {t('w1')} . "
                                f"?x {TYPE} {t('Volume')} . }}")
    assert run(store, q) == {"b1", "b2"}  # m1 is a Leaflet
    back = parse_query(compile_query(q))
    assert back.expected == AnswerKind(kind="entity", class_iri=NS + "Volume")
    assert back.topics == [NS + "w1"]  # the class is no topic


def test_parsed_paths_and_filters_run_like_the_original(store: pyoxigraph.Store) -> None:
    """What the parser normalises (paths, blank nodes, IN, &&) means what the text meant."""
    text = (f"PREFIX s: <{NS}> SELECT ?g WHERE {{ ?b s:writtenBy/^s:writtenBy ?other ; s:genre ?g . "
            f"?other s:pages ?p . [] s:pages ?p . ?b ^s:genre* ?x . "
            f"FILTER(?p >= 300 && ?g IN (s:fable, s:gothic) && !(?g = s:verse)) }}")
    q = parse_query(text)
    assert isinstance(q.where.filters[1], ExprFilter) and q.where.filters[1].expr.name == "in"
    want = {row["g"].value.removeprefix(NS) for row in store.query(text)}
    assert want and run(store, q) == want
    stable(q)


# ---------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("text", [
    f"SELECT ?b WHERE {{ ?b <{NS}genre> ?g }} VALUES ?g {{ <{NS}fable> <{NS}verse> }}",
    f"SELECT ?w (COUNT(?b) AS ?n) WHERE {{ ?b <{NS}writtenBy> ?w }} GROUP BY ?w HAVING(COUNT(?b) > 1) "
    f"ORDER BY DESC(COUNT(?b)) LIMIT 2",
    f"SELECT ?b (?p * 2 AS ?twice) WHERE {{ ?b <{NS}pages> ?p OPTIONAL {{ ?b <{NS}title> ?tt }} "
    f"FILTER(!BOUND(?tt) || REGEX(?tt, \"^he\", \"i\")) }}",
    f"SELECT ?b WHERE {{ ?b <{NS}pages> ?p MINUS {{ ?b <{NS}genre> <{NS}fable> }} }} ORDER BY ?p OFFSET 1",
])
def test_parsed_queries_answer_as_written(store: pyoxigraph.Store, text: str) -> None:
    q = parse_query(text)
    compiled = compile_query(q)
    assert parse_query(compiled) == q

    def rows(query: str) -> list[tuple[str, ...]]:
        result = store.query(query)
        return sorted(tuple(str(r[v.value]) for v in result.variables) for r in result)

    assert rows(text) and rows(compiled) == rows(text)


def test_parser_names_what_it_cannot_express() -> None:
    cases = {
        "SELECT ?x WHERE { SERVICE <http://x.invalid/sparql> { ?x ?p ?o } }": "SERVICE",
        "SELECT ?x WHERE { GRAPH <http://x.invalid/g> { ?x ?p ?o } }": "GRAPH",
        "CONSTRUCT { ?x ?p ?o } WHERE { ?x ?p ?o }": "CONSTRUCT",
        "SELECT ?r WHERE { BIND(IF(EXISTS { ?a ?b ?c }, 1, 2) AS ?r) }": "EXISTS inside an expression",
        "SELECT (COUNT(?x) AS ?c) (MAX(?y) AS ?m) WHERE { ?x ?p ?y }": "several aggregates",
        "SELECT ?x WHERE { ?x !<http://x.invalid/p> ?y }": "negated property path",
        "SELECT ?x WHERE { ?x (<http://x.invalid/p>/<http://x.invalid/q>)* ?y }": "repeated property path",
        "SELECT ?x WHERE { ?x <http://x.invalid/p> ?y FILTER(<http://x.invalid/f>(?y)) }": "function outside",
        "SELECT ?x WHERE { ?x <relative> ?y }": "IRI",
        "SELECT ?x WHERE { ?x ?p ?y } ORDER BY DESC(COUNT(?y))": "implicit GROUP BY",
    }
    for text, construct in cases.items():
        with pytest.raises(QueryParseError, match=construct) as caught:
            parse_query(text)
        assert construct in caught.value.construct
        assert isinstance(caught.value, KgteamError) and isinstance(caught.value, ValueError)
    with pytest.raises(QuerySyntaxError, match="undeclared prefix zz:"):
        parse_query("SELECT ?x WHERE { ?x zz:p ?y }")
    with pytest.raises(QuerySyntaxError):
        parse_query("SELECT ?x WHERE { ?x ")
    # supplied prefixes are used, and the query's own declarations win over them
    q = parse_query("PREFIX a: <http://own.invalid/> SELECT ?x WHERE { ?x a:p b:q }",
                    {"a": "http://supplied.invalid/a/", "b": "http://supplied.invalid/b/"})
    assert q.where.triples[0].predicate == iri("http://own.invalid/p")
    assert q.where.triples[0].object == iri("http://supplied.invalid/b/q")


@pytest.mark.parametrize(("text", "construct"), [
    ("SELECT * WHERE { FILTER(" + "+".join(["1"] * 80) + " > 0) }", "nested too deeply"),
    ("SELECT * WHERE { FILTER(" + "+".join(["1"] * 1200) + " > 0) }", "this long"),
    ("SELECT * WHERE { ?s ?p " + '"' + "x" * 70_000 + '" }', "this large"),
    ('SELECT ?x WHERE { BIND("\\U00110000" AS ?x) }', "SPARQL syntax"),
    (None, "SPARQL syntax"),
])
def test_hostile_text_gets_a_clear_error(text: object, construct: str) -> None:
    with pytest.raises(QueryParseError, match=construct):
        parse_query(text)  # type: ignore[arg-type]


def test_two_prefixes_for_one_namespace() -> None:
    q = parse_query("PREFIX a: <http://x.invalid/> PREFIX b: <http://x.invalid/> SELECT ?s WHERE { ?s a:p b:o }")
    assert q.where.triples[0].object == iri("http://x.invalid/o")


def test_literals_are_escaped_not_spliced(store: pyoxigraph.Store) -> None:
    q = QueryGraph(answer=[var("b")], where=Group(triples=[
        Triple(subject=var("b"), predicate=n("title"), object=Lit(value=ODD_TITLE))]))
    text = compile_query(q)
    assert "\n" not in text and "DROP ALL" in text  # inside the string, not a statement
    assert run(store, q) == {"b1"}  # the exact value matched: nothing was cut or added
    assert parse_query(text) == q
    contains = QueryGraph(answer=[var("b")], where=Group(
        triples=[Triple(subject=var("b"), predicate=n("title"), object=var("tt"))],
        filters=[ExprFilter(expr=Func(name="contains", args=[var("tt"), Lit(value='"stop" }')]))]))
    assert run(store, contains) == {"b1"}
    with pytest.raises(ToolError):
        compile_query(QueryGraph(answer=[var("b")], where=Group(triples=[
            Triple(subject=var("b"), predicate=n("title"), object=Lit(value="x", lang="en} DROP"))])))


@pytest.mark.parametrize("bad", ["http://x.invalid/a> } DROP ALL { <b", "no-scheme", "http://x.invalid/a b", ""])
def test_bad_iris_raise_tool_error(bad: str) -> None:
    with pytest.raises(ToolError):
        compile_query(QueryGraph(answer=[var("x")], where=Group(triples=[
            Triple(subject=var("x"), predicate=iri(bad), object=var("y"))])))


def _benchmark_module():
    spec = importlib.util.spec_from_file_location("query_coverage", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gold_queries_round_trip() -> None:
    """Every 16th gold query of LC-QuAD 1.0 test, QALD-9 and QALD-10: parse -> compile -> parse is stable."""
    if not (QUESTIONS / "qald_10.json").exists():
        pytest.skip(f"the public question files are not here ({QUESTIONS})")
    bench = _benchmark_module()
    checked = 0
    for name, (prefixes, queries) in bench.load(QUESTIONS).items():
        for qid, text in queries[::16]:
            try:
                first = parse_query(bench.normalise(text)[0], prefixes)
            except QueryParseError:
                continue
            again = parse_query(compile_query(first))
            assert again == first, f"{name} {qid} is not stable"
            checked += 1
    assert checked > 115  # (1000 + 558 + 394) / 16 = 123 sampled; a few do not parse


def test_gold_superlative_reads_order_and_limit() -> None:
    if not (QUESTIONS / "qald_10.json").exists():
        pytest.skip(f"the public question files are not here ({QUESTIONS})")
    questions = json.loads((QUESTIONS / "qald_10.json").read_text())["questions"]
    texts = [q["query"]["sparql"] for q in questions if "ORDER BY DESC(?ls) LIMIT 1" in q["query"]["sparql"]]
    q = parse_query(texts[0])
    assert q.shape == "superlative" and q.limit == 1 and q.order[0].descending and not q.ties
