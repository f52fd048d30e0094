"""Writes ``corpus.jsonl``: hostile SPARQL for run_sparql, and benign queries that must still pass.

Run ``python tests/data/hostile_sparql/generate.py`` after editing; the JSONL is what the test
(``tests/tools/test_hostile_sparql.py``) and ``benchmarks/hostile_sparql.py`` read, and new forms
may be appended to it by hand. Placeholders, replaced at run time: ``{URL}`` a SPARQL endpoint URL
on a loopback listener that must never be connected to, ``{HOSTPORT}`` its ``127.0.0.1:port``,
``{PORT}`` its port. ``expect`` is ``refused`` (a ToolError before or instead of an answer),
``answered`` (a result), or ``bounded`` (either, as long as it ends within the timeout and harms
nothing). ``timeout_s``, where present, is what the query asks ``run_sparql`` for (time and memory
bombs ask for little, so the corpus runs fast). The queries are written against
``tests/data/tools/kg.ttl``.
"""

from __future__ import annotations

import json
from pathlib import Path

E = "http://example.org/kg/e/"
R = "http://example.org/kg/r/"
EX = "http://example.org/kg/"
PRE = f"PREFIX e: <{E}> PREFIX r: <{R}> PREFIX ex: <{EX}> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
INNER = "{ ?a ?b ?c }"

entries: list[dict[str, object]] = []


BOMB_TIMEOUT_S = 0.5


def add(kind: str, expect: str, query: str) -> None:
    entry: dict[str, object] = {"id": f"{kind}-{sum(e['kind'] == kind for e in entries) + 1:03d}", "kind": kind,
                                "expect": expect, "query": query}
    if kind in ("memory", "time"):
        entry["timeout_s"] = BOMB_TIMEOUT_S
    entries.append(entry)


# ----------------------------------------------------------------------------- updates
updates = [
    f"INSERT DATA {{ <{E}x> <{R}y> <{E}z> }}",
    f"INSERT DATA {{ GRAPH <{EX}g> {{ <{E}x> <{R}y> <{E}z> }} }}",
    f"DELETE DATA {{ <{E}Blade_Runner> <{R}directed_by> <{E}Ridley_Scott> }}",
    "DELETE WHERE { ?s ?p ?o }",
    f"DELETE {{ ?s ?p ?o }} INSERT {{ ?s ?p <{E}x> }} WHERE {{ ?s ?p ?o }}",
    f"INSERT {{ ?s <{R}y> 1 }} WHERE {{ ?s ?p ?o }}",
    f"WITH <{EX}g> DELETE {{ ?s ?p ?o }} WHERE {{ ?s ?p ?o }}",
    f"DELETE {{ ?s ?p ?o }} USING <{EX}g> WHERE {{ ?s ?p ?o }}",
    f"INSERT {{ ?s ?p ?o }} USING NAMED <{EX}g> WHERE {{ ?s ?p ?o }}",
    "LOAD <{URL}>",
    "LOAD SILENT <{URL}>",
    f"LOAD <{{URL}}> INTO GRAPH <{EX}g>",
    "CLEAR ALL", "CLEAR DEFAULT", "CLEAR NAMED", f"CLEAR GRAPH <{EX}g>", "CLEAR SILENT ALL",
    f"CREATE GRAPH <{EX}g>", f"CREATE SILENT GRAPH <{EX}g>",
    "DROP ALL", "DROP DEFAULT", "DROP NAMED", f"DROP GRAPH <{EX}g>", "DROP SILENT ALL",
    f"COPY DEFAULT TO <{EX}g>", f"COPY <{EX}g> TO DEFAULT", f"MOVE DEFAULT TO <{EX}g>", f"MOVE SILENT <{EX}a> TO <{EX}b>",
    f"ADD DEFAULT TO <{EX}g>", f"ADD <{EX}a> TO <{EX}b>",
]
for q in updates:
    add("update", "refused", q)
    add("update", "refused", q.lower())
variants = [
    "SELECT * WHERE { ?s ?p ?o } ; DROP ALL",
    "ASK { ?s ?p ?o } ; CLEAR DEFAULT",
    "PREFIX x: <http://e/> DROP ALL",
    "BASE <http://e/> CLEAR ALL",
    "# a comment first\nDELETE WHERE { ?s ?p ?o }",
    "DeLeTe WhErE { ?s ?p ?o }",
    "INSERT{<http://a><http://b><http://c>}WHERE{}",
    "DELETE\n\t{ ?s ?p ?o }\nWHERE\n{ ?s ?p ?o }",
    "\\u0044ELETE WHERE { ?s ?p ?o }",
    "DELET\\u0045 WHERE { ?s ?p ?o }",
    "\\U00000044ROP ALL",
    "SELECT * WHERE { ?s ?p ?o } \\u003B DROP ALL",
    "DROP ALL # SELECT * WHERE { ?s ?p ?o }",
    "CLEAR DEFAULT ; SELECT * WHERE { ?s ?p ?o }",
    "LOAD <{URL}> ; SELECT * WHERE { ?s ?p ?o }",
    "SELECT * WHERE { ?s ?p ?o } LOAD <{URL}>",
    "SELECT * WHERE { INSERT DATA { <http://a> <http://b> <http://c> } }",
    "INSERT DATA { <http://a> <http://b> \"x\" } ; INSERT DATA { <http://a> <http://b> \"y\" }",
    "WITH <http://g> INSERT { ?s ?p 1 } WHERE { ?s ?p ?o }",
    "DELETE WHERE { GRAPH ?g { ?s ?p ?o } }",
]
for q in variants:
    add("update", "refused", q)
# Issue 25 let every read-only form into (NOT) EXISTS bodies: updates hidden in those places.
EXISTS_PLACES = [  # @S@ stands for the hidden clause
    "SELECT * WHERE { ?x ?y ?z FILTER NOT EXISTS { { ?x ?y ?z } UNION { @S@ } } }",
    "SELECT * WHERE { ?x ?y ?z FILTER EXISTS { SELECT * WHERE { @S@ } } }",
    "SELECT * WHERE { ?x ?y ?z FILTER EXISTS { OPTIONAL { @S@ } } }",
    "SELECT * WHERE { ?x ?y ?z FILTER NOT EXISTS { MINUS { GRAPH ?g { @S@ } } } }",
    "SELECT * WHERE { ?x ?y ?z FILTER NOT EXISTS { { SELECT ?x WHERE { { } UNION { @S@ } } } } }",
    "SELECT (EXISTS { { SELECT * WHERE { @S@ } } } AS ?e) WHERE { }",
    "SELECT ?x WHERE { ?x ?y ?z } GROUP BY ?x HAVING (NOT EXISTS { { } UNION { @S@ } })",
    "SELECT ?x WHERE { ?x ?y ?z } ORDER BY (EXISTS { FILTER NOT EXISTS { @S@ } })",
    "ASK { FILTER NOT EXISTS { VALUES ?a { 1 } BIND(?a AS ?b) @S@ } }",
    "CONSTRUCT { ?x ?y ?z } WHERE { ?x ?y ?z BIND(NOT EXISTS { ?x ?y ?z FILTER EXISTS { @S@ } } AS ?b) }",
]
for place in EXISTS_PLACES:
    for clause in (f"INSERT DATA {{ <{E}x> <{R}y> <{E}z> }}", "DELETE WHERE { ?a ?b ?c }", "LOAD <{URL}>",
                   "DROP ALL", f"WITH <{EX}g> DELETE {{ ?a ?b ?c }} WHERE {{ ?a ?b ?c }}"):
        add("update", "refused", place.replace("@S@", clause))

# ----------------------------------------------------------------------------- SERVICE
places = [  # where a SERVICE clause can hide; @S@ stands for the clause
    "SELECT * WHERE { @S@ }",
    "SELECT * WHERE { ?x ?y ?z . @S@ }",
    "SELECT * WHERE { OPTIONAL { @S@ } }",
    "SELECT * WHERE { { ?x ?y ?z } UNION { @S@ } }",
    "SELECT * WHERE { { @S@ } UNION { ?x ?y ?z } }",
    "SELECT * WHERE { ?x ?y ?z MINUS { @S@ } }",
    "SELECT * WHERE { { SELECT * WHERE { @S@ } } }",
    "SELECT * WHERE { { SELECT * WHERE { { SELECT * WHERE { @S@ } LIMIT 1 } } } }",
    "SELECT * WHERE { FILTER EXISTS { @S@ } }",
    "SELECT * WHERE { ?x ?y ?z FILTER NOT EXISTS { @S@ } }",
    "SELECT * WHERE { GRAPH ?g { @S@ } }",
    "SELECT * WHERE { { { { { @S@ } } } } }",
    "SELECT (COUNT(*) AS ?n) WHERE { @S@ } GROUP BY ?a HAVING (COUNT(*) > 0)",
    "SELECT * WHERE { BIND(1 AS ?one) @S@ } ORDER BY ?a",
    "SELECT * WHERE { @S@ } VALUES ?a { <http://a> }",
    "SELECT * WHERE { ?x ?y ?z FILTER(EXISTS { @S@ }) }",
    "SELECT * WHERE { BIND(EXISTS { @S@ } AS ?b) }",
    "ASK { @S@ }",
    "ASK WHERE { OPTIONAL { @S@ } }",
    "CONSTRUCT { ?a ?b ?c } WHERE { @S@ }",
    "CONSTRUCT { ?a ?b ?c } WHERE { OPTIONAL { @S@ } }",
    "DESCRIBE ?a WHERE { @S@ }",
    "DESCRIBE <http://a> ?a WHERE { { @S@ } UNION { ?a ?b ?c } }",
    "SELECT * FROM <http://g> WHERE { @S@ }",
]
for place in places:
    add("service", "refused", place.replace("@S@", "SERVICE <{URL}> " + INNER))
    add("service", "refused", place.replace("@S@", "SERVICE SILENT <{URL}> " + INNER))
    add("service", "refused", place.replace("@S@", "service <{URL}> " + INNER).replace("SELECT", "select"))
spellings = [  # the keyword and the endpoint written every way the grammar (and its neighbours) allow
    "SeRvIcE <{URL}> " + INNER,
    "sErViCe SiLeNt <{URL}> " + INNER,
    "SERVICE<{URL}>" + INNER,
    "SERVICE\t\n<{URL}>\n" + INNER,
    "SERVICE\f<{URL}> " + INNER,
    "SERVICE\r\n<{URL}> " + INNER,
    "SERVICE # the endpoint is on the next line\n <{URL}> " + INNER,
    "SERVICE SILENT # comment\n<{URL}> " + INNER,
    "SERVICE ?endpoint " + INNER,
    "\\u0053ERVICE <{URL}> " + INNER,
    "SERVIC\\u0045 <{URL}> " + INNER,
    "\\u0073\\u0065\\u0072\\u0076\\u0069\\u0063\\u0065 <{URL}> " + INNER,
    "\\U00000053ERVICE <{URL}> " + INNER,
    "SERVICE <http://127.0.0.1:\\u0030{PORT}/sparql> " + INNER,
    "SERVICE <\\u0068ttp://{HOSTPORT}/sparql> " + INNER,
    "SERVICE <http://{HOSTPORT}/\\u0073parql> " + INNER,
    "SERVICE <http://localhost:{PORT}/sparql> " + INNER,
    "SERVICE <http://127.1:{PORT}/sparql> " + INNER,
    "SERVICE <http://2130706433:{PORT}/sparql> " + INNER,
    "SERVICE <http://0x7f000001:{PORT}/sparql> " + INNER,
    "SERVICE <http://user:pw@{HOSTPORT}/sparql> " + INNER,
    "SERVICE <https://{HOSTPORT}/sparql> " + INNER,
    "SERVICE <http://{HOSTPORT}/sparql?query=ASK%7B%7D> " + INNER,
    "SERVICE <http://{HOSTPORT}/sparql#frag> " + INNER,
    "SERVICE\u00a0<{URL}> " + INNER,
    "SERVICE\u2003<{URL}> " + INNER,
    "SERVICE SILENT\u00a0<{URL}> " + INNER,
]
for sp in spellings:
    add("service", "refused", "SELECT * WHERE { " + sp + " }")
    add("service", "refused", "ASK { " + sp + " }")
smuggled = [  # token boundaries a word scanner and a parser may place differently
    "PREFIX : <http://{HOSTPORT}/> ASK { SERVICE:sparql" + INNER + " }",
    "PREFIX : <http://{HOSTPORT}/> SELECT * WHERE { SERVICE:sparql" + INNER + " }",
    "PREFIX s: <http://{HOSTPORT}/> SELECT * WHERE { SERVICE s:sparql " + INNER + " }",
    "PREFIX s: <http://{HOSTPORT}/> SELECT * WHERE { SERVICE s: " + INNER + " }",
    "BASE <http://{HOSTPORT}/> SELECT * WHERE { SERVICE <sparql> " + INNER + " }",
    "BASE <http://{HOSTPORT}/sparql> SELECT * WHERE { SERVICE <> " + INNER + " }",
    "SELECT * WHERE { ?s ?p trueSERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p falseSERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p 1SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p 1.5e3SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p \"x\"SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p 'x'SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p \"x\"@en SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p <http://a>SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p ?o.SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p ?o}SERVICE<{URL}>" + INNER,
    "PREFIX e: <http://e/> SELECT * WHERE { ?s ?p e:x.SERVICE<{URL}>" + INNER + " }",
    "PREFIX e: <http://e/> SELECT * WHERE { ?s ?p e:x\\.SERVICE <{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p _:b.SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p ?o FILTER(true)SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { BIND(1 AS ?x)SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { VALUES ?x {1}SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p [ ?q ?r ]SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { ?s ?p (1 2)SERVICE<{URL}>" + INNER + " }",
    "SELECT * WHERE { BIND(<http://x/\\u0041(#> AS ?z) SERVICE <{URL}> " + INNER + "\n}",
    "SELECT * WHERE { BIND(<http://x/\\u0041('> AS ?x) SERVICE <{URL}> " + INNER + " BIND(<http://x/\\u0041('> AS ?y) }",
    "ASK { BIND(<http://x/\\u0041(#> AS ?z) SERVICE <{URL}> " + INNER + "\n}",
    "SELECT * WHERE { BIND(<http://x/\\u003E AS ?z) SERVICE <{URL}> " + INNER + " }",
    "SELECT * WHERE { BIND(\"\\u0022 AS ?z) SERVICE <{URL}> " + INNER + " # \" }",
    "SELECT * WHERE { BIND('\\u0027 AS ?z) SERVICE <{URL}> " + INNER + " # ' }",
    "SELECT * WHERE { BIND(\"a\\\\\" AS ?z) SERVICE <{URL}> " + INNER + " }",
    "SELECT * WHERE { BIND(\"\"\"a\"\"b\"\"\" AS ?z) SERVICE <{URL}> " + INNER + " }",
    "SELECT * WHERE { BIND('''a''b''' AS ?z) SERVICE <{URL}> " + INNER + " }",
    "SELECT * WHERE { BIND(<http://x/#> AS ?z) SERVICE <{URL}> " + INNER + " }",
    "SELECT * WHERE { BIND(\"#\" AS ?z) SERVICE <{URL}> " + INNER + " }",
    "SELECT * WHERE { ?s ?p ?o FILTER(?o < 3 && ?o > 1) SERVICE <{URL}> " + INNER + " }",
    "SELECT * WHERE { ?s ?p ?o FILTER(?o<?x&&?x>?o) SERVICE <{URL}> " + INNER + " }",
    "SELECT * WHERE { VALUES ?endpoint { <{URL}> } SERVICE ?endpoint " + INNER + " }",
    "SELECT * WHERE { BIND(<{URL}> AS ?endpoint) SERVICE ?endpoint " + INNER + " }",
    "SELECT * WHERE { SERVICE <{URL}> { SERVICE <{URL}> " + INNER + " } }",
    "SELECT * WHERE { SERVICE SILENT <{URL}> { SELECT * WHERE " + INNER + " LIMIT 1 } }",
    "SELECT * WHERE { $s $p $o SERVICE <{URL}> " + INNER + " }",
]
for q in smuggled:
    add("service", "refused", q)
# Oxigraph reads no escape in a comment, so this SERVICE is commented out: it runs as a plain query
add("service", "bounded", "SELECT * WHERE { # \\u000A SERVICE <{URL}> " + INNER + "\n ?s ?p ?o }")
for place in EXISTS_PLACES:  # SERVICE in the places issue 25 opened
    add("service", "refused", place.replace("@S@", "SERVICE <{URL}> " + INNER))
    add("service", "refused", place.replace("@S@", "sErViCe silent <{URL}> " + INNER))

# ----------------------------------------------------------------------------- other ways out
for q in [
    "SELECT * FROM <{URL}> WHERE { ?s ?p ?o }",
    "SELECT * FROM NAMED <{URL}> WHERE { GRAPH ?g { ?s ?p ?o } }",
    "ASK FROM <{URL}> { ?s ?p ?o }",
    "CONSTRUCT { ?s ?p ?o } FROM <{URL}> WHERE { ?s ?p ?o }",
    "DESCRIBE <{URL}>",
    "SELECT * WHERE { GRAPH <{URL}> { ?s ?p ?o } }",
    "SELECT * WHERE { BIND(IRI(\"{URL}\") AS ?x) }",
    "SELECT * WHERE { BIND(<{URL}> AS ?x) FILTER(isIRI(?x)) }",
]:
    add("egress", "bounded", q)
for q in [
    "SELECT * WHERE { BIND(<{URL}>(1) AS ?x) }",
    "SELECT * WHERE { ?s ?p ?o FILTER(<{URL}>(?o)) }",
    "PREFIX f: <http://{HOSTPORT}/> SELECT (f:fetch(1) AS ?x) WHERE { }",
    "SELECT (<http://jena.apache.org/ARQ/function#sprintf>(\"%s\", 1) AS ?x) WHERE { }",
    "PREFIX fn: <http://www.w3.org/2005/xpath-functions#> SELECT (fn:doc(\"{URL}\") AS ?x) WHERE { }",
    "SELECT (COUNT(*) AS ?n) (<{URL}>(?s) AS ?m) WHERE { ?s ?p ?o } GROUP BY ?s",
]:
    add("egress", "refused", q)

# ----------------------------------------------------------------------------- nesting bombs
for n in (33, 48, 64, 100, 500, 2245, 5000, 20000):
    add("nesting", "refused", "SELECT * WHERE " + "{" * n + " ?s ?p ?o " + "}" * n)
for n in (40, 300, 3000):
    add("nesting", "refused", "SELECT * WHERE { FILTER(" + "(" * n + "1" + ")" * n + ") }")
    add("nesting", "refused", "SELECT * WHERE { ?s ?p " + "[ ?q " * n + "?o" + " ]" * n + " }")
    add("nesting", "refused", "SELECT * WHERE {" + " OPTIONAL {" * n + " ?s ?p ?o" + " }" * n + " }")
    add("nesting", "refused", "SELECT * WHERE {" + " { SELECT * WHERE {" * n + " ?s ?p ?o" + " } }" * n + " }")
    add("nesting", "refused", "SELECT * WHERE { ?s " + "(" * n + "<http://a>" + ")" * n + " ?o }")
    add("nesting", "refused", "SELECT * WHERE { BIND(" + "CONCAT(" * n + "'a'" + ",'b')" * n + " AS ?x) }")
    add("nesting", "refused", "SELECT * WHERE { ?s ?p ?o " + "FILTER NOT EXISTS { " * n + "?s ?p ?o" + " }" * n + " }")
    add("nesting", "refused", "SELECT * WHERE " + "{ { ?s ?p ?o } UNION " * n + "{ ?s ?p ?o }" + " }" * n)
    add("nesting", "refused", "SELECT * WHERE { ?s ?p ( " + "( " * n + "1" + " )" * n + " ) }")
add("nesting", "refused", "SELECT * WHERE " + "{" * 5000)
add("nesting", "refused", "SELECT * WHERE { FILTER(" + "(" * 5000 + "1")
add("nesting", "refused", "SELECT * WHERE { " + "[" * 5000)
add("nesting", "refused", "ASK " + "{" * 40000 + "}" * 40000)
for n in (16, 30):  # deep but within the bound: answered, quickly
    add("nesting", "answered", "SELECT * WHERE " + "{" * n + " ?s ?p ?o " + "}" * n + " LIMIT 1")
    add("nesting", "answered", "SELECT * WHERE { FILTER(" + "(" * (n - 2) + "1 = 1" + ")" * (n - 2) + ") }")

# ----------------------------------------------------------------------------- size bombs
add("size", "refused", "SELECT * WHERE { ?s ?p ?o }" + " " * 70_000)
add("size", "refused", "# " + "x" * 70_000 + "\nSELECT * WHERE { ?s ?p ?o }")
add("size", "refused", "SELECT * WHERE { BIND(\"" + "a" * 70_000 + "\" AS ?x) }")
add("size", "refused", "SELECT * WHERE { BIND(<http://e/" + "a" * 70_000 + "> AS ?x) }")
add("size", "refused", "SELECT * WHERE { VALUES ?x { " + " ".join(str(i) for i in range(20_000)) + " } }")
add("size", "refused", "SELECT * WHERE { FILTER(" + "+".join(["1"] * 40_000) + " > 0) }")
add("size", "refused", "SELECT * WHERE { ?s ?p ?o }" + " #" * 1_000_000)
add("size", "refused", "SELECT * WHERE { BIND(\"" + "é" * 40_000 + "\" AS ?x) }")  # 80 kB in UTF-8
add("size", "bounded", "SELECT * WHERE { ?s ?p ?o }" + " " * 60_000)
add("size", "bounded", "SELECT ?x WHERE { VALUES ?x { " + " ".join(str(i) for i in range(9_000)) + " } } LIMIT 5")
add("size", "bounded", "SELECT * WHERE { FILTER(" + "+".join(["1"] * 15_000) + " > 0) }")
add("size", "bounded", "SELECT * WHERE { BIND(\"" + "a" * 60_000 + "\" AS ?x) }")
add("size", "bounded", "SELECT * WHERE { " + " ".join(f"?s{i} ?p{i} ?o{i} ." for i in range(1_500)) + " } LIMIT 1")
add("size", "bounded", "SELECT * WHERE { " + "?s ?p ?o . " * 5_000 + "} LIMIT 1")
add("size", "bounded", "SELECT ?" + "v" * 60_000 + " WHERE { ?s ?p ?o } LIMIT 1")
# just under the token bounds: the slowest shapes for the guard's parser
add("size", "answered", "SELECT ?x WHERE { VALUES ?x { " + " ".join(f"<{E}n{i}>" for i in range(980)) + " } }")
add("size", "answered", "SELECT ?x WHERE { VALUES ?x { " + " ".join(str(i) for i in range(980)) + " } }")
add("size", "bounded", "SELECT * WHERE { " + " ".join(f"?s <{R}p{i}> ?o{i} ." for i in range(245)) + " } LIMIT 1")
add("size", "bounded", "SELECT * WHERE { FILTER(" + "+".join(["1"] * 290) + " > 0) }")
add("size", "bounded", "SELECT * WHERE { FILTER(" + "&&".join(["true"] * 145) + ") }")
add("size", "bounded", "SELECT * WHERE { BIND(1 AS ?x) FILTER(?x IN (" + ",".join(["1"] * 145) + ")) }")
add("size", "refused", "SELECT * WHERE { FILTER(" + "+".join(["1"] * 400) + " > 0) }")
add("size", "refused", "SELECT * WHERE { BIND(1 AS ?x) FILTER(?x IN (" + ",".join(["1"] * 400) + ")) }")
add("size", "refused", "SELECT ?x WHERE { VALUES ?x { " + " ".join(str(i) for i in range(1_200)) + " } }")
add("size", "refused", "SELECT * WHERE { " + " ".join(f"?s{i} ?p{i} ?o{i} ." for i in range(400)) + " } LIMIT 1")

# ----------------------------------------------------------------------------- memory bombs
def doubling(steps: int, form: str = "SELECT (STRLEN(?x{n}) AS ?len)") -> str:
    binds = " ".join(f"BIND(CONCAT(?x{i}, ?x{i}) AS ?x{i + 1})" for i in range(steps))
    return form.replace("{n}", str(steps)) + " WHERE { BIND(\"ab\" AS ?x0) " + binds + " }"


add("memory", "bounded", doubling(30))
add("memory", "bounded", doubling(32))
add("memory", "bounded", doubling(26, "SELECT ?x{n}"))  # one 134 MB row
add("memory", "bounded", doubling(22, "SELECT ?x{n}"))  # one 8 MB row
add("memory", "bounded", doubling(20, "SELECT ?x{n} ?x19 ?x18"))
add("memory", "bounded", doubling(24, "ASK { FILTER(STRLEN(?x{n}) > 0) } #"))
add("memory", "bounded", "SELECT (GROUP_CONCAT(STR(?o)) AS ?g) WHERE { ?s ?p ?o . ?a ?b ?c }")
add("memory", "bounded", "SELECT (GROUP_CONCAT(CONCAT(STR(?s), STR(?o), STR(?c))) AS ?g) WHERE { ?s ?p ?o . ?a ?b ?c }")
add("memory", "bounded", "SELECT ?s (GROUP_CONCAT(STR(?o); separator=\"" + "," * 1000 + "\") AS ?g) WHERE { ?s ?p ?o . "
    "?a ?b ?c } GROUP BY ?s")
add("memory", "bounded", "SELECT (STRLEN(GROUP_CONCAT(STR(?o))) AS ?n) WHERE { ?s ?p ?o . ?a ?b ?c . ?d ?e ?f }")
add("memory", "bounded", "SELECT (CONCAT(?g, ?g, ?g, ?g) AS ?h) WHERE { { SELECT (GROUP_CONCAT(STR(?o)) AS ?g) "
    "WHERE { ?s ?p ?o . ?a ?b ?c } } }")
add("memory", "bounded", "SELECT ?x WHERE { ?s ?p ?o . ?a ?b ?c BIND(CONCAT(STR(?s), STR(?o), STR(?a), STR(?c)) AS ?x) }")
add("memory", "bounded", "SELECT DISTINCT ?s ?o ?a ?c ?d WHERE { ?s ?p ?o . ?a ?b ?c . ?d ?e ?f }")
add("memory", "bounded", "SELECT * WHERE { ?s ?p ?o . ?a ?b ?c . ?d ?e ?f } ORDER BY ?o ?c ?f")
add("memory", "bounded", "SELECT (ENCODE_FOR_URI(?x20) AS ?u) WHERE { BIND(\"a b\" AS ?x0) "
    + " ".join(f"BIND(CONCAT(?x{i}, ?x{i}) AS ?x{i + 1})" for i in range(20)) + " }")
add("memory", "bounded", "SELECT (REPLACE(?x20, \"a\", \"aaaaaaaa\") AS ?r) WHERE { BIND(\"ab\" AS ?x0) "
    + " ".join(f"BIND(CONCAT(?x{i}, ?x{i}) AS ?x{i + 1})" for i in range(20)) + " }")
add("memory", "bounded", "SELECT ?x WHERE { VALUES ?x { \"" + "a" * 60_000 + "\" } ?s ?p ?o }")
add("memory", "bounded", "CONSTRUCT { ?s ?p ?x } WHERE { ?s ?p ?o BIND(CONCAT(?x18, ?x18) AS ?x) BIND(\"ab\" AS ?x0) "
    + " ".join(f"BIND(CONCAT(?x{i}, ?x{i}) AS ?x{i + 1})" for i in range(18)) + " }")
add("memory", "bounded", "SELECT (REGEX(\"aaaa\", \"(a{1000}){1000}\") AS ?r) WHERE { }")
add("memory", "bounded", "SELECT (REGEX(?x20, \"(a+)+$\") AS ?r) WHERE { BIND(\"a\" AS ?x0) "
    + " ".join(f"BIND(CONCAT(?x{i}, ?x{i}) AS ?x{i + 1})" for i in range(20)) + " }")

# ----------------------------------------------------------------------------- time bombs
vals = " ".join(str(i) for i in range(300))
add("time", "bounded", f"ASK {{ VALUES ?a {{ {vals} }} VALUES ?b {{ {vals} }} VALUES ?c {{ {vals} }} "
    "FILTER(?a + ?b + ?c < 0) }")
add("time", "bounded", f"SELECT (COUNT(*) AS ?n) WHERE {{ VALUES ?a {{ {vals} }} VALUES ?b {{ {vals} }} "
    f"VALUES ?c {{ {vals} }} }}")
add("time", "bounded", f"SELECT * WHERE {{ VALUES ?a {{ {vals} }} VALUES ?b {{ {vals} }} VALUES ?c {{ {vals} }} }} "
    "ORDER BY DESC(?a * ?b * ?c) LIMIT 1")
add("time", "bounded", "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }")
add("time", "bounded", "SELECT (COUNT(*) AS ?n) WHERE { ?a (!<http://none>)* ?b . ?c (!<http://none>)* ?d }")
add("time", "bounded", "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c OPTIONAL { ?d ?e ?f OPTIONAL { ?g ?h ?i OPTIONAL "
    "{ ?j ?k ?l } } } }")

# ----------------------------------------------------------------------------- escapes
for q, expect in [
    ("SELECT ?x WHERE { BIND(\"a\\u0022b\" AS ?x) }", "answered"),
    ("SELECT ?x WHERE { BIND(\"a\\\\u0022b\" AS ?x) }", "answered"),
    ("SELECT ?x WHERE { BIND('a\\u0027b' AS ?x) }", "answered"),
    ("SELECT ?x WHERE { BIND(\"a\\u005Cb\" AS ?x) }", "answered"),
    ("SELECT ?x WHERE { BIND(\"caf\\u00E9 \\U0001F600\" AS ?x) }", "answered"),
    ("SELECT ?x WHERE { BIND(\"\"\"a\\u0022\\u0022\\u0022b\"\"\" AS ?x) }", "answered"),
    ("SELECT ?x WHERE { BIND(<http://e/\\u0041> AS ?x) }", "answered"),
    ("SELECT ?x WHERE { BIND(<http://e/\\u003E> AS ?x) }", "refused"),
    ("SELECT ?x WHERE { BIND(<http://e/\\u0020x> AS ?x) }", "refused"),
    ("SELECT ?x WHERE { BIND(<http://e/\\u007B> AS ?x) }", "refused"),
    ("SELECT ?x WHERE { BIND(\"\\u0000\" AS ?x) }", "refused"),
    ("SELECT ?x WHERE { BIND(\"\\uD800\" AS ?x) }", "refused"),
    ("SELECT ?x WHERE { BIND(\"\\U00110000\" AS ?x) }", "refused"),
    ("SELECT ?x WHERE { BIND(\"\\q\" AS ?x) }", "refused"),
    ("SELECT ?x WHERE { BIND(\"\\u00ZZ\" AS ?x) }", "refused"),
    ("SELECT ?x WHERE { BIND(1 AS \\u003Fx) }", "refused"),
    ("SELECT ?x WHERE { ?s ?p ?o } \\u0023 LIMIT 1", "refused"),
    ("SELECT ?x WHERE { \\ }", "refused"),
    ("SELECT ?x WHERE { BIND(\"x\" AS ?x) }\x00", "refused"),
    ("PREFIX e: <http://e/> SELECT ?x WHERE { BIND(e:a\\-b AS ?x) }", "answered"),  # decoded to <http://e/a-b>
    ("PREFIX e: <http://e/> SELECT ?x WHERE { BIND(e:a\\u0041 AS ?x) }", "refused"),
]:
    add("escape", expect, q)

# ----------------------------------------------------------------------------- malformed
for q in ["", "   ", "SELECT", "SELECT * WHERE {", "SELECT * WHERE { ?s ?p }", "ASK {{", "}}}}", "LIMIT 5",
          "SELECT * WHERE { ?s ?p ?o } LIMIT 1e400", "SELECT * WHERE { ?s ?p ?o } LIMIT -1",
          "SELECT * WHERE { ?s ?p ?o } LIMIT 99999999999999999999999999", "SELECT * WHERE { ?s ?p ?o } OFFSET 1.5",
          "SELECT * WHERE { ?s ?p \"unterminated }", "SELECT * WHERE { ?s ?p '''never closed }",
          "SELECT * WHERE { ?s ?p <http://unterminated }", "SELECT ?x WHERE { ?x <http://a> \"x\"@ }",
          "SELECT * WHERE { ?s ?p ?o } GROUP BY", "SELECT (COUNT(*) AS ?n WHERE { ?s ?p ?o }",
          "SELECT * WHERE { << ?s ?p ?o >> ?q ?r }", "SELECT * WHERE { ?s ?p ?o } ; SELECT * WHERE { ?s ?p ?o }"]:
    add("malformed", "refused" if "999999" not in q else "bounded", q)

# ----------------------------------------------------------------------------- hidden in comments and strings
hidden = [
    "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1 # SERVICE <{URL}> { ?a ?b ?c }",
    "# DROP ALL\nSELECT ?s WHERE { ?s ?p ?o } LIMIT 1",
    "SELECT ?s WHERE { # INSERT DATA { <a:b> <a:c> <a:d> }\n ?s ?p ?o } LIMIT 1",
    "SELECT ?x WHERE { BIND(\"SERVICE <{URL}> { ?a ?b ?c }\" AS ?x) }",
    "SELECT ?x WHERE { BIND('DROP ALL ; LOAD <{URL}>' AS ?x) }",
    "SELECT ?x WHERE { BIND(\"\"\"multi\nline SERVICE <{URL}>\n{ ?a ?b ?c }\"\"\" AS ?x) }",
    "SELECT ?x WHERE { BIND('''CLEAR ALL''' AS ?x) }",
    "SELECT ?x WHERE { BIND(\"# not a comment\" AS ?x) }",
    "SELECT ?x WHERE { BIND(\"\\\" SERVICE <{URL}> { ?a ?b ?c } \\\"\" AS ?x) }",
    "SELECT ?x WHERE { BIND('\\' SERVICE <{URL}> { ?a ?b ?c } \\'' AS ?x) }",
    "SELECT ?x WHERE { BIND(<http://e/service> AS ?x) }",
    "SELECT ?x WHERE { BIND(<http://e/SERVICE/insert/drop> AS ?x) }",
    "SELECT ?service ?insert ?drop WHERE { BIND(1 AS ?service) BIND(2 AS ?insert) BIND(3 AS ?drop) }",
    "PREFIX service: <http://e/> SELECT ?x WHERE { BIND(service:x AS ?x) }",
    "PREFIX drop: <http://e/> SELECT ?x WHERE { BIND(drop:all AS ?x) }",
    "SELECT ?x WHERE { BIND(\"self-service\"@en AS ?x) }",
    "SELECT ?x WHERE { BIND(\"load\"^^<http://www.w3.org/2001/XMLSchema#string> AS ?x) }",
    "SELECT ?x WHERE { BIND(\"a # b\" AS ?x) } # DELETE WHERE { ?s ?p ?o }",
    "SELECT ?x WHERE { BIND(\"{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\" AS ?x) }",
    "SELECT ?x WHERE { BIND(\"((((((((((((((((((((((((((((((((((((((((\" AS ?x) }",
    "SELECT ?x WHERE { BIND(\"\\u0053ERVICE <{URL}> { ?a ?b ?c }\" AS ?x) }",
    "SELECT ?x WHERE { BIND(\"a\\\\\" AS ?x) } # \" SERVICE <{URL}> { ?a ?b ?c }",
    "SELECT ?x WHERE { BIND('a\\\\' AS ?x) } # ' SERVICE <{URL}> { ?a ?b ?c }",
    "SELECT ?x WHERE { BIND(<http://e/#x> AS ?x) } # > SERVICE <{URL}> { ?a ?b ?c }",
]
for q in hidden:
    add("hidden", "answered", q)

# ----------------------------------------------------------------------------- benign
benign = [
    "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 10",
    "SELECT * WHERE { ?s ?p ?o }",
    "ASK { ?s ?p ?o }",
    "ASK { e:Blade_Runner r:directed_by e:Ridley_Scott }",
    "SELECT ?d WHERE { e:Blade_Runner r:directed_by ?d }",
    "SELECT ?f WHERE { ?f r:directed_by e:Ridley_Scott }",
    "SELECT ?l WHERE { e:Blade_Runner rdfs:label ?l }",
    "SELECT ?f ?l WHERE { ?f a ex:Film ; rdfs:label ?l } ORDER BY ?l",
    "SELECT (COUNT(?f) AS ?n) WHERE { ?f a ex:Film }",
    "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p ORDER BY DESC(?n)",
    "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p HAVING (COUNT(*) > 2)",
    "SELECT DISTINCT ?p WHERE { ?s ?p ?o }",
    "SELECT REDUCED ?p WHERE { ?s ?p ?o }",
    "SELECT ?f ?y WHERE { ?f r:release_year ?y FILTER(?y > 1980) }",
    "SELECT ?f ?y WHERE { ?f r:release_year ?y FILTER(?y >= 1980 && ?y < 2000) } ORDER BY ?y",
    "SELECT ?f WHERE { ?f rdfs:label ?l FILTER(CONTAINS(LCASE(?l), \"blade\")) }",
    "SELECT ?f WHERE { ?f rdfs:label ?l FILTER(REGEX(?l, \"^Blade\", \"i\")) }",
    "SELECT ?f WHERE { ?f rdfs:label ?l FILTER(STRSTARTS(?l, \"B\")) }",
    "SELECT ?f ?r WHERE { ?f a ex:Film OPTIONAL { ?f r:rating ?r } }",
    "SELECT ?x WHERE { { ?x r:directed_by ?d } UNION { ?x r:starred_actors ?a } }",
    "SELECT ?f WHERE { ?f a ex:Film MINUS { ?f r:has_genre ?g } }",
    "SELECT ?f WHERE { ?f a ex:Film FILTER NOT EXISTS { ?f r:rating ?r } }",
    "SELECT ?f WHERE { ?f a ex:Film FILTER EXISTS { ?f r:rating ?r } }",
    "SELECT ?x WHERE { e:Blade_Runner r:directed_by/r:born_in ?x }",
    "SELECT ?x WHERE { e:Blade_Runner (r:directed_by|r:starred_actors) ?x }",
    "SELECT ?x WHERE { ?x ^r:directed_by e:Blade_Runner }",
    "SELECT ?x WHERE { e:Blade_Runner r:directed_by+ ?x }",
    "SELECT ?x WHERE { e:Blade_Runner r:directed_by* ?x }",
    "SELECT ?x WHERE { e:Blade_Runner r:directed_by? ?x }",
    "SELECT ?x WHERE { e:Blade_Runner !rdfs:label ?x }",
    "SELECT ?x WHERE { e:Blade_Runner !(rdfs:label|^r:directed_by) ?x }",
    "SELECT ?f ?n WHERE { ?f a ex:Film BIND(STRLEN(STR(?f)) AS ?n) }",
    "SELECT ?x WHERE { VALUES ?x { e:Blade_Runner e:Alien } ?x a ex:Film }",
    "SELECT * WHERE { ?f r:directed_by ?d } VALUES ?d { e:Ridley_Scott }",
    "SELECT ?f WHERE { { SELECT ?f WHERE { ?f a ex:Film } LIMIT 2 } }",
    "SELECT ?f (SAMPLE(?l) AS ?label) WHERE { ?f rdfs:label ?l } GROUP BY ?f",
    "SELECT (GROUP_CONCAT(?l; separator=\", \") AS ?all) WHERE { ?f a ex:Film ; rdfs:label ?l }",
    "SELECT (MIN(?y) AS ?first) (MAX(?y) AS ?last) (AVG(?y) AS ?mean) (SUM(?y) AS ?total) WHERE { ?f r:release_year ?y }",
    "SELECT (COUNT(DISTINCT ?d) AS ?n) WHERE { ?f r:directed_by ?d }",
    "CONSTRUCT { ?f r:directed_by ?d } WHERE { ?f r:directed_by ?d }",
    "CONSTRUCT WHERE { e:Blade_Runner ?p ?o }",
    "DESCRIBE e:Blade_Runner",
    "DESCRIBE ?f WHERE { ?f r:directed_by e:Ridley_Scott }",
    "SELECT ?s WHERE { ?s ?p ?o } LIMIT 5 OFFSET 5",
    "SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s LIMIT 3",
    "SELECT ?l WHERE { ?s rdfs:label ?l FILTER(LANG(?l) = \"\") }",
    "SELECT ?l WHERE { ?s rdfs:label ?l FILTER(LANGMATCHES(LANG(?l), \"fr\")) }",
    "SELECT ?x WHERE { BIND(\"it's \\\"quoted\\\"\" AS ?x) }",
    "SELECT ?x WHERE { BIND('say \"hi\"' AS ?x) }",
    "SELECT ?x WHERE { BIND(\"\"\"line one\nline two\"\"\" AS ?x) }",
    "SELECT ?x WHERE { BIND(\"tab\\there\" AS ?x) }",
    "SELECT ?x WHERE { BIND(\"Bécancour, Québec 🎬\" AS ?x) }",
    "SELECT ?x WHERE { BIND(\"a\\u0022b\" AS ?x) }",
    "SELECT ?x WHERE { BIND(\"8.1\"^^<http://www.w3.org/2001/XMLSchema#decimal> AS ?x) }",
    "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT ?f WHERE { ?f r:release_year ?y FILTER(xsd:integer(?y) > 1) }",
    "SELECT ?x WHERE { BIND(IF(1 > 0, \"yes\", \"no\") AS ?x) }",
    "SELECT ?x WHERE { BIND(COALESCE(?missing, 42) AS ?x) }",
    "SELECT ?x WHERE { BIND(CONCAT(\"a\", \"b\", \"c\") AS ?x) }",
    "SELECT ?x WHERE { BIND(SUBSTR(\"abcdef\", 2, 3) AS ?x) }",
    "SELECT ?x WHERE { BIND(REPLACE(\"abc\", \"b\", \"x\") AS ?x) }",
    "SELECT ?x WHERE { BIND(STRBEFORE(\"a-b\", \"-\") AS ?x) }",
    "SELECT ?x WHERE { BIND(UCASE(\"a\") AS ?x) }",
    "SELECT ?x WHERE { BIND(ENCODE_FOR_URI(\"a b\") AS ?x) }",
    "SELECT ?x WHERE { BIND(MD5(\"a\") AS ?x) }",
    "SELECT ?x WHERE { BIND(ABS(-2) + CEIL(1.5) + FLOOR(1.5) + ROUND(1.5) AS ?x) }",
    "SELECT ?x WHERE { BIND(YEAR(\"2020-01-02T00:00:00Z\"^^<http://www.w3.org/2001/XMLSchema#dateTime>) AS ?x) }",
    "SELECT ?x WHERE { BIND(IRI(\"http://e/x\") AS ?x) }",
    "SELECT ?x WHERE { BIND(STRDT(\"1\", <http://www.w3.org/2001/XMLSchema#integer>) AS ?x) }",
    "SELECT ?x WHERE { BIND(isIRI(<http://e/x>) AS ?x) }",
    "SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }",
    "SELECT ?s WHERE { ?s ?p ?o FILTER(?o IN (e:Ridley_Scott, e:Harrison_Ford)) }",
    "SELECT ?s WHERE { ?s ?p ?o FILTER(?o NOT IN (e:Ridley_Scott)) } LIMIT 3",
    "select ?s where { ?s ?p ?o } limit 2",
    "SELECT ?s\nWHERE\n{\n\t?s ?p ?o .\n}\nLIMIT 2\n",
    "# which films?\nSELECT ?f WHERE { ?f a ex:Film } # done",
    "BASE <http://example.org/kg/e/> SELECT ?d WHERE { <Blade_Runner> r:directed_by ?d }",
    "SELECT ?s WHERE { ?s ?p [ rdfs:label ?l ] } LIMIT 3",
    "SELECT ?s WHERE { ?s r:starred_actors e:Harrison_Ford , e:Rutger_Hauer }",
    "SELECT ?s WHERE { ?s r:directed_by ?d ; r:starred_actors ?a }",
    "SELECT * WHERE { } ",
    "ASK { }",
    "SELECT (1 + 2 * 3 AS ?x) WHERE { }",
    "SELECT ?f WHERE { ?f a ex:Film } ORDER BY DESC(STR(?f)) LIMIT 1",
    "SELECT ?a ?b WHERE { ?a r:directed_by ?d . ?b r:directed_by ?d FILTER(?a != ?b) }",
    # issue 25: read-only forms in (NOT) EXISTS bodies, relative IRIs, escaped prefixed names
    "ASK { e:Alien r:directed_by ?d FILTER NOT EXISTS { { ?d r:born_in e:Nowhere } UNION { e:Nowhere r:born_in ?d } } }",
    "SELECT * WHERE { e:Alien ?p ?x FILTER EXISTS { OPTIONAL { ?x ?q ?c } } } LIMIT 2",
    "SELECT ?f WHERE { ?f r:starred_actors e:Harrison_Ford FILTER NOT EXISTS { SELECT ?f WHERE { ?f r:directed_by ?d } } }",
    "SELECT ?f WHERE { ?f a ex:Film FILTER EXISTS { ?f r:directed_by ?d MINUS { ?d r:born_in e:South_Shields } } }",
    "SELECT ?f WHERE { ?f a ex:Film FILTER NOT EXISTS { GRAPH ?g { ?f ?p ?o } } }",
    "SELECT ?f WHERE { ?f a ex:Film FILTER EXISTS { VALUES ?g { e:Horror } ?f r:has_genre ?g } }",
    "SELECT ?f WHERE { ?f a ex:Film FILTER EXISTS { ?f r:release_year ?y BIND(?y + 1 AS ?n) FILTER(?n > 1980) } }",
    "SELECT ?f WHERE { ?f a ex:Film FILTER EXISTS { ?f r:directed_by/r:born_in ?c } }",
    "SELECT ?f (EXISTS { ?f r:has_genre e:Horror } AS ?scary) WHERE { ?f a ex:Film }",
    "SELECT ?d WHERE { ?f r:directed_by ?d } GROUP BY ?d HAVING (NOT EXISTS { { ?d r:born_in ?c } UNION { ?c r:born_in ?d } })",
    "SELECT ?f WHERE { ?f a ex:Film } ORDER BY (EXISTS { OPTIONAL { ?f r:rating ?r } }) ?f",
    "BASE <http://example.org/kg/> SELECT ?f WHERE { ?f a <Film> }",
    "SELECT ?s WHERE { ?s ?p <relative/name> }",
    "PREFIX e2: <http://example.org/kg/e/> SELECT ?d WHERE { e2:Blade\\_Runner r:directed_by ?d }",
]
for q in benign:
    add("benign", "answered", PRE + q if ("e:" in q or "r:" in q or "ex:" in q or "rdfs:" in q) else q)

if __name__ == "__main__":
    out = Path(__file__).with_name("corpus.jsonl")
    with out.open("w", encoding="utf-8") as f:
        for entry in entries:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
    kinds: dict[str, int] = {}
    for entry in entries:
        kinds[entry["kind"]] = kinds.get(entry["kind"], 0) + 1
    print(len(entries), kinds)
