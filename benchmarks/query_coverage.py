"""Coverage of the query graph on gold SPARQL nobody here wrote (issue 20, item 2).

For LC-QuAD 1.0 test, QALD-9 train + test and QALD-10 (``/work/shared/data/questions``): how many
gold queries ``parse_query`` reads, whether parse -> compile -> parse gives the same graph, the
shapes, the constructs that do not parse, the forms the issue counts (ASK, COUNT, ORDER BY,
numeric FILTER), and whether the read-only guard accepts every compiled query.

Dataset-family fixes, applied before parsing and counted in the output:

* undeclared prefixes: the files use the family's standard prefixes without declaring some of
  them (QALD-9 often omits ``PREFIX``, QALD-10 may omit ``wd:`` ...); they are supplied per family
  (``DBPEDIA_PREFIXES`` / ``WIKIDATA_PREFIXES``), and a query's own declarations win;
* ``SELECT DISTINCT COUNT(?uri) WHERE`` (LC-QuAD), ``SELECT COUNT(DISTINCT ?uri AS ?uri) WHERE`` and
  ``SELECT COUNT(?x) AS ?c WHERE`` (QALD-9) are Virtuoso dialect (a bare aggregate in the
  projection); they are rewritten to SPARQL 1.1 ``SELECT (COUNT(...) AS ?alias) WHERE``.
  ``SELECT DISTINCT ?x WHERE {...} ORDER BY DESC(COUNT(?y))`` (QALD-9) groups by ``?x`` implicitly
  (Virtuoso); ``GROUP BY ?x`` is written out. Other dialect (``SELECT DISTINCT xsd:date(?d) WHERE``)
  is left alone and counted as not parsed.

Run: ``PYTHONPATH=$PWD python benchmarks/query_coverage.py [--data DIR] [--examples N]``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

import pyoxigraph

from kgteam.protocols.query_graph import XSD, Compare, Func, Group, Iri, Lit, QueryGraph, Triple, Var
from kgteam.tools.query_builder import compile_query
from kgteam.tools.query_parse import QueryParseError, parse_query
from kgteam.tools.sparql_guard import analyse_query
from kgteam.tools.types import ToolError

DATA = Path("/work/shared/data/questions")

DBPEDIA_PREFIXES = {
    "dbo": "http://dbpedia.org/ontology/",
    "dbr": "http://dbpedia.org/resource/",
    "res": "http://dbpedia.org/resource/",
    "dbp": "http://dbpedia.org/property/",
    "dbc": "http://dbpedia.org/resource/Category:",
    "yago": "http://dbpedia.org/class/yago/",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "owl": "http://www.w3.org/2002/07/owl#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "dct": "http://purl.org/dc/terms/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "geo": "http://www.w3.org/2003/01/geo/wgs84_pos#",
    "georss": "http://www.georss.org/georss/",
    "prov": "http://www.w3.org/ns/prov#",
}
WIKIDATA_PREFIXES = {
    "wd": "http://www.wikidata.org/entity/",
    "wds": "http://www.wikidata.org/entity/statement/",
    "wdv": "http://www.wikidata.org/value/",
    "wdt": "http://www.wikidata.org/prop/direct/",
    "wikibase": "http://wikiba.se/ontology#",
    "p": "http://www.wikidata.org/prop/",
    "ps": "http://www.wikidata.org/prop/statement/",
    "psv": "http://www.wikidata.org/prop/statement/value/",
    "psn": "http://www.wikidata.org/prop/statement/value-normalized/",
    "pq": "http://www.wikidata.org/prop/qualifier/",
    "pqv": "http://www.wikidata.org/prop/qualifier/value/",
    "pr": "http://www.wikidata.org/prop/reference/",
    "bd": "http://www.bigdata.com/rdf#",
    "schema": "http://schema.org/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "dct": "http://purl.org/dc/terms/",
    "geo": "http://www.opengis.net/ont/geosparql#",
}
_VIRTUOSO_COUNT = re.compile(r"SELECT\s+(DISTINCT\s+)?COUNT\s*\(\s*(DISTINCT\s+)?(\?\w+)(?:\s+AS\s+\?\w+)?\s*\)"
                             r"(?:\s+AS\s+(\?\w+))?\s+WHERE", re.I)
_IMPLICIT_GROUP = re.compile(r"(\bSELECT\s+(?:DISTINCT\s+)?((?:\?\w+\s+)+)WHERE\b.*\})\s*"
                             r"(ORDER\s+BY\s+(?:ASC|DESC)?\s*\(\s*COUNT\b)", re.I | re.S)
_BARE_CALL = re.compile(r"SELECT\s+(DISTINCT\s+)?[A-Za-z]\w*:\w+\s*\(", re.I)
_NUMERIC = tuple(XSD + t for t in ("integer", "decimal", "double", "float", "int", "long", "short",
                                    "nonNegativeInteger", "positiveInteger", "negativeInteger",
                                    "nonPositiveInteger", "unsignedInt", "unsignedLong"))


def load(data: Path) -> dict[str, tuple[dict[str, str], list[tuple[str, str]]]]:
    """Set name -> (prefixes of its family, [(id, gold SPARQL)])."""
    sets: dict[str, tuple[dict[str, str], list[tuple[str, str]]]] = {}
    lc = json.loads((data / "lcquad1-test-data.json").read_text())
    sets["lcquad1-test"] = (DBPEDIA_PREFIXES, [(str(q["_id"]), q["sparql_query"]) for q in lc])
    qald9: list[tuple[str, str]] = []
    for part in ("train", "test"):
        for q in json.loads((data / f"qald-9-{part}-multilingual.json").read_text())["questions"]:
            qald9.append((f"{part}-{q['id']}", q["query"].get("sparql", "")))
    sets["qald9-train+test"] = (DBPEDIA_PREFIXES, qald9)
    q10 = json.loads((data / "qald_10.json").read_text())["questions"]
    sets["qald10"] = (WIKIDATA_PREFIXES, [(str(q["id"]), q["query"].get("sparql", "")) for q in q10])
    return sets


def normalise(text: str) -> tuple[str, bool]:
    """Virtuoso's bare COUNT in SELECT and implicit GROUP BY as SPARQL 1.1 (and whether there were any)."""
    fixed = _VIRTUOSO_COUNT.sub(lambda m: f"SELECT {m.group(1) or ''}(COUNT({m.group(2) or ''}{m.group(3)}) "
                                          f"AS {m.group(4) or '?count'}) WHERE", text)
    if not re.search(r"\bGROUP\s+BY\b", fixed, re.I):
        fixed = _IMPLICIT_GROUP.sub(lambda m: f"{m.group(1)} GROUP BY {m.group(2).strip()} {m.group(3)}", fixed)
    return fixed, fixed != text


def _groups(g: Group) -> list[Group]:
    out = [g]
    for alternatives in g.unions:
        for a in alternatives:
            out += _groups(a)
    for sub in (*g.optional, *g.not_exists, *g.minus, *g.exists):
        out += _groups(sub)
    for q in g.subqueries:
        out += _groups(q.where)
    return out


def _funcs(e: object) -> list[Func]:
    if isinstance(e, Func):
        return [e, *(f for a in e.args for f in _funcs(a))]
    return []


def forms(q: QueryGraph) -> dict[str, bool]:
    """The forms the issue's table counts, read from the parsed graph."""
    queries = [q, *(s for g in _groups(q.where) for s in g.subqueries)]
    groups = _groups(q.where)

    def numeric(e: object) -> bool:
        return getattr(e, "kind", "") == "literal" and (e.datatype or "") in _NUMERIC  # type: ignore[attr-defined]

    counted = any(x.aggregate is not None and x.aggregate.function == "count" for x in queries) or any(
        f.name == "count" for x in queries for k in x.order for f in _funcs(k.expr)) or any(
        f.name == "count" for x in queries for c in x.having if isinstance(c, Compare)
        for f in [*_funcs(c.left), *_funcs(c.right)])
    return {
        "ask": q.form == "ask",
        "count": counted,
        "order_by": any(x.order for x in queries),
        "order_by_limit": bool(q.order) and q.limit is not None,
        "numeric_filter": any(isinstance(c, Compare) and c.op in ("<", "<=", ">", ">=")
                              and (numeric(c.left) or numeric(c.right))
                              for g in groups for c in g.filters),
    }


def text_forms(text: str) -> dict[str, bool]:
    """The same forms counted on the text (keywords outside IRIs), to set beside the graph's."""
    bare = re.sub(r"<[^<>\s]*>", "<>", text)
    bare = re.sub(r"\bPREFIX\s+\S*\s*<>", " ", bare, flags=re.I)
    return {
        "ask": re.search(r"\bASK\b", bare, re.I) is not None,
        "count": re.search(r"\bCOUNT\s*\(", bare, re.I) is not None,
        "order_by": re.search(r"\bORDER\s+BY\b", bare, re.I) is not None,
        "order_by_limit": re.search(r"\bORDER\s+BY\b.*\bLIMIT\b", bare, re.I | re.S) is not None,
        "numeric_filter": re.search(r"FILTER\s*\([^)]*[<>]=?\s*[-+]?\d", bare, re.I) is not None,
    }


_FORMS = ("ask", "count", "order_by", "order_by_limit", "numeric_filter")


_FROZEN = "urn:kgteam:frozen:"


def _positive_triples(g: Group) -> list[Triple]:
    """The triples a solution may match (not those under NOT EXISTS / MINUS)."""
    out = list(g.triples)
    for alternatives in g.unions:
        for a in alternatives:
            out += _positive_triples(a)
    for sub in (*g.optional, *g.exists):
        out += _positive_triples(sub)
    for q in g.subqueries:
        out += _positive_triples(q.where)
    return out


def _node(t: object) -> pyoxigraph.NamedNode | pyoxigraph.Literal:
    if isinstance(t, Var):
        return pyoxigraph.NamedNode(_FROZEN + t.name)
    if isinstance(t, Iri):
        return pyoxigraph.NamedNode(t.iri)
    assert isinstance(t, Lit)
    if t.lang:
        return pyoxigraph.Literal(t.value, language=t.lang)
    if t.datatype:
        return pyoxigraph.Literal(t.value, datatype=pyoxigraph.NamedNode(t.datatype))
    return pyoxigraph.Literal(t.value)


def _answers(store: pyoxigraph.Store, text: str, columns: list[str] | None) -> tuple[list[str], object]:
    result = store.query(text)
    if isinstance(result, pyoxigraph.QueryBoolean):
        return [], bool(result)
    names = [v.value for v in result.variables]
    keep = columns if columns is not None else names
    return names, {tuple(str(row[c]) if c in names and row[c] is not None else None for c in keep) for row in result}


def same_answers(text: str, prefixes: dict[str, str], graph: QueryGraph, compiled: str) -> bool | None:
    """Do the gold text and the compiled graph answer alike on the query's own pattern frozen into a
    small Oxigraph store (each variable an IRI)? None: Oxigraph does not run the gold text."""
    store = pyoxigraph.Store()
    quads = []
    for t in _positive_triples(graph.where):
        s, p, o = _node(t.subject), _node(t.predicate), _node(t.object)
        if isinstance(s, pyoxigraph.NamedNode) and isinstance(p, pyoxigraph.NamedNode):
            quads.append(pyoxigraph.Quad(s, p, o))
    store.extend(quads)
    declared = {m.group(1) for m in re.finditer(r"PREFIX\s+([\w-]*):", text, re.I)}
    head = "".join(f"PREFIX {k}: <{v}> " for k, v in prefixes.items() if k not in declared)
    try:
        columns, gold = _answers(store, head + text, None)
    except (SyntaxError, ValueError, OSError):
        return None
    return gold == _answers(store, compiled, columns or None)[1]


def measure(name: str, prefixes: dict[str, str], queries: list[tuple[str, str]], examples: int) -> dict:
    result: dict = {"set": name, "total": len(queries)}
    parsed = stable = rewritten = 0
    shapes: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    failure_examples: dict[str, list[str]] = {}
    unstable: list[str] = []
    graph_forms: Counter[str] = Counter()
    gold_text_forms: Counter[str] = Counter()
    guard_refused: Counter[str] = Counter()
    guard_examples: dict[str, list[str]] = {}
    compile_failed: list[str] = []
    started = time.perf_counter()
    raw_parsed = frozen_same = frozen_not_run = 0
    frozen_differ: list[str] = []
    for qid, text in queries:
        gold_text_forms.update(k for k, v in text_forms(text).items() if v)
        try:
            parse_query(text)  # as the file has it: no supplied prefixes, no dialect rewrite
            raw_parsed += 1
        except QueryParseError:
            pass
        text, was_rewritten = normalise(text)
        rewritten += was_rewritten
        try:
            graph = parse_query(text, prefixes)
        except QueryParseError as e:
            construct = e.construct
            if _BARE_CALL.search(text):
                construct += ": a bare function call in SELECT (Virtuoso dialect)"
            elif construct == "SPARQL syntax":
                construct += ": " + str(e).split(": ", 1)[-1][:80]
            failures[construct] += 1
            failure_examples.setdefault(construct, [])
            if len(failure_examples[construct]) < examples:
                failure_examples[construct].append(qid)
            continue
        parsed += 1
        shapes[graph.shape] += 1
        graph_forms.update(k for k, v in forms(graph).items() if v)
        try:
            compiled = compile_query(graph)
        except ToolError as e:
            compile_failed.append(f"{qid}: {e}")
            continue
        try:
            again = parse_query(compiled)
        except QueryParseError as e:
            unstable.append(f"{qid}: {e}")
            continue
        if again == graph:
            stable += 1
        else:
            unstable.append(qid)
        alike = same_answers(text, prefixes, graph, compiled)
        if alike is None:
            frozen_not_run += 1
        elif alike:
            frozen_same += 1
        else:
            frozen_differ.append(qid)
        try:
            analyse_query(compiled, 1000)
        except ToolError as e:
            reason = re.sub(r"<[^>]*>|\"[^\"]*\"|\?\w+|\d+", "_", str(e))[:160]
            guard_refused[reason] += 1
            guard_examples.setdefault(reason, [])
            if len(guard_examples[reason]) < examples:
                guard_examples[reason].append(qid)
    result.update({
        "parsed": parsed,
        "parse_rate": round(parsed / max(1, len(queries)), 4),
        "parsed_without_fixes": raw_parsed,
        "round_trip_stable": stable,
        "round_trip_unstable": unstable,
        "compile_failed": compile_failed,
        "frozen_instance_same_answers": frozen_same,
        "frozen_instance_differ": frozen_differ,
        "frozen_instance_gold_not_run_by_oxigraph": frozen_not_run,
        "shapes": dict(shapes.most_common()),
        "not_parsed": dict(failures.most_common()),
        "not_parsed_examples": failure_examples,
        "forms_from_parsed_graphs": {k: graph_forms[k] for k in _FORMS},
        "forms_from_gold_text": {k: gold_text_forms[k] for k in _FORMS},
        "virtuoso_dialect_rewritten": rewritten,
        "guard_accepted": parsed - len(compile_failed) - sum(guard_refused.values()),
        "guard_refused": dict(guard_refused.most_common()),
        "guard_refused_examples": guard_examples,
        "seconds": round(time.perf_counter() - started, 2),
    })
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--examples", type=int, default=3, help="ids shown per failure kind")
    args = ap.parse_args()
    if not (args.data / "qald_10.json").exists():
        print(json.dumps({"error": f"no question files under {args.data}"}))
        return 2
    out = [measure(name, prefixes, queries, args.examples) for name, (prefixes, queries) in load(args.data).items()]
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
