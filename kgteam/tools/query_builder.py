"""The one builder from a :class:`~kgteam.protocols.query_graph.QueryGraph` to SPARQL text.

Every IRI goes through ``sparql_iri`` (checked) and every literal through ``sparql_literal``
(escaped): nothing from a user or a model is spliced in as text. The output is plain SPARQL 1.1
that the read-only guard accepts (NOT EXISTS with groups, UNION, sub-selects).

A superlative with ``ties`` compiles to a MAX/MIN sub-select over the same pattern and an
equality filter, so every value sharing the best key is kept; ``kgteam.tools.query_parse``
reads that form back into ``order`` + ``limit 1`` + ``ties``.
"""

from __future__ import annotations

from kgteam.protocols.query_graph import (
    XSD,
    Aggregate,
    Bound,
    Compare,
    Condition,
    Expr,
    ExprFilter,
    Func,
    Group,
    Iri,
    Lit,
    QueryGraph,
    TextMatch,
    Triple,
    Var,
)
from kgteam.tools.sparql_guard import sparql_iri, sparql_literal
from kgteam.tools.types import ToolError

_AGGREGATES = frozenset({"count", "sum", "min", "max", "avg", "sample", "group_concat"})
_BUILTINS = _AGGREGATES | frozenset({
    "str", "lang", "datatype", "year", "month", "day", "hours", "minutes", "seconds", "lcase", "ucase",
    "strlen", "abs", "round", "ceil", "floor", "isiri", "isuri", "isliteral", "isblank", "isnumeric",
    "now", "langmatches", "coalesce", "if", "concat", "substr", "replace", "strdt", "strlang", "iri",
    "bnode", "rand", "encode_for_uri", "tz", "timezone", "md5", "sha1", "sha256", "uuid", "struuid",
    "contains", "strstarts", "strends", "regex", "sameterm", "bound", "strbefore", "strafter",
    "sha384", "sha512", "uri",
    "+", "-", "*", "/", "!", "&&", "||", "in", "not in", "=", "!=", "<", "<=", ">", ">=",
})
_INFIX = frozenset({"+", "-", "*", "/", "&&", "||", "=", "!=", "<", "<=", ">", ">="})
BUILTIN_FUNCTIONS = _BUILTINS  # what ``Func.name`` may be besides an XSD cast (the parser reads no other)


def term(t: Expr) -> str:
    """One term or expression as SPARQL text."""
    if isinstance(t, Var):
        return f"?{t.name}"
    if isinstance(t, Iri):
        return sparql_iri(t.iri)
    if isinstance(t, Lit):
        if t.datatype in (XSD + "integer", XSD + "decimal", XSD + "double", XSD + "boolean") and _plain_number(t):
            return t.value  # the short form parses back to the same typed literal
        return sparql_literal(t.value, lang=t.lang, datatype=t.datatype if not t.lang else None)
    if isinstance(t, Func):
        return _func(t)
    raise ToolError(f"not a query term: {t!r}")


def _plain_number(t: Lit) -> bool:
    v = t.value
    if t.datatype == XSD + "boolean":
        return v in ("true", "false")
    if t.datatype == XSD + "integer":
        return v.lstrip("+-").isdigit()
    if t.datatype == XSD + "decimal":
        head, _, tail = v.lstrip("+-").partition(".")
        return head.isdigit() and tail.isdigit()
    return False


def _func(f: Func) -> str:
    name = f.name
    args = [term(a) for a in f.args]
    if name.startswith("http://") or name.startswith("https://"):
        if not name.startswith(XSD):
            raise ToolError(f"only XSD casts may be called as functions, not <{name}>")
        return f"{sparql_iri(name)}({', '.join(args)})"
    if name not in _BUILTINS:
        raise ToolError(f"unknown SPARQL function {name!r}")
    if name in _INFIX and len(args) == 2:
        return f"({args[0]} {name} {args[1]})"
    if name == "!":
        return f"(!{args[0]})"
    if name in ("in", "not in"):
        return f"({args[0]} {name.upper()} ({', '.join(args[1:])}))"
    if name in _AGGREGATES:  # inside HAVING / ORDER BY
        return f"{name.upper()}({'DISTINCT ' if f.distinct else ''}{', '.join(args) or '*'})"
    return f"{name.upper()}({', '.join(args)})"


def condition(c: Condition) -> str:
    if isinstance(c, Compare):
        return f"FILTER({term(c.left)} {c.op} {term(c.right)})"
    if isinstance(c, TextMatch):
        args = [term(c.target), sparql_literal(c.pattern)]
        if c.function == "regex" and c.flags:
            args.append(sparql_literal(c.flags))
        return f"FILTER({c.function.upper()}({', '.join(args)}))"
    if isinstance(c, Bound):
        return f"FILTER({'!' if c.negated else ''}BOUND(?{c.var.name}))"
    if isinstance(c, ExprFilter):
        return f"FILTER({term(c.expr)})"
    raise ToolError(f"not a condition: {c!r}")


def _triple(t: Triple) -> str:
    pred = term(t.predicate)
    if t.repeat:
        if not isinstance(t.predicate, Iri):
            raise ToolError("a repeated predicate must be an IRI")
        pred += t.repeat
    return f"{term(t.subject)} {pred} {term(t.object)} ."


def group(g: Group) -> str:
    """The inside of ``{ ... }`` for one group."""
    parts: list[str] = []
    for name, rows in g.values.items():
        parts.append(f"VALUES ?{name} {{ {' '.join(term(r) for r in rows)} }}")
    parts += [_triple(t) for t in g.triples]
    parts += [f"{{ {compile_query(s)} }}" for s in g.subqueries]
    for alternatives in g.unions:
        parts.append(" UNION ".join(f"{{ {group(a)} }}" for a in alternatives))
    parts += [f"OPTIONAL {{ {group(o)} }}" for o in g.optional]
    parts += [f"MINUS {{ {group(m)} }}" for m in g.minus]
    parts += [f"BIND({term(e)} AS ?{name})" for name, e in g.binds.items()]
    parts += [condition(c) for c in g.filters]
    parts += [f"FILTER EXISTS {{ {group(e)} }}" for e in g.exists]
    parts += [f"FILTER NOT EXISTS {{ {group(n)} }}" for n in g.not_exists]
    return " ".join(parts)


def _aggregate(a: Aggregate) -> str:
    inner = "*" if a.var is None else ("DISTINCT " if a.distinct else "") + f"?{a.var.name}"
    if a.expr is not None:
        inner = ("DISTINCT " if a.distinct else "") + term(a.expr)
    elif a.var is None and a.distinct:
        inner = "DISTINCT *"
    return f"({a.function.upper()}({inner}) AS ?{a.alias})"


def compile_query(q: QueryGraph) -> str:
    """SPARQL text for ``q`` (raises :class:`ToolError` for an IRI or function it cannot emit)."""
    where = group(q.where)
    if q.form == "ask":
        return f"ASK WHERE {{ {where} }}"
    if q.ties and q.order and q.limit == 1 and not q.offset and q.aggregate is None and not q.group_by:
        return _superlative_with_ties(q, where)
    head = "SELECT " + ("DISTINCT " if q.distinct and q.aggregate is None else "")
    projected = [f"?{v.name}" for v in q.answer]
    if q.aggregate is not None:
        projected.append(_aggregate(q.aggregate))
    text = head + (" ".join(projected) or "*") + f" WHERE {{ {where} }}"
    if q.group_by:
        text += " GROUP BY " + " ".join(f"?{v.name}" for v in q.group_by)
    if q.having:
        text += " HAVING(" + " && ".join(condition(c)[len("FILTER("):-1] for c in q.having) + ")"
    if q.order:
        text += " ORDER BY " + " ".join(f"{'DESC' if k.descending else 'ASC'}({term(k.expr)})" for k in q.order)
    if q.limit is not None:
        text += f" LIMIT {q.limit}"
    if q.offset:
        text += f" OFFSET {q.offset}"
    return text


def _superlative_with_ties(q: QueryGraph, where: str) -> str:
    key = q.order[0]
    best = "MAX" if key.descending else "MIN"
    alias = _fresh_name(q, "best")  # a variable the query already uses would join with the best value
    inner = f"{{ SELECT ({best}({term(key.expr)}) AS ?{alias}) WHERE {{ {where} }} }}"
    projected = " ".join(f"?{v.name}" for v in q.answer) or "*"
    head = "SELECT DISTINCT " if q.distinct else "SELECT "
    return f"{head}{projected} WHERE {{ {where} {inner} FILTER({term(key.expr)} = ?{alias}) }}"


def _fresh_name(q: QueryGraph, stem: str) -> str:
    used: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("kind") == "var" and isinstance(node.get("name"), str):
                used.add(node["name"])
            if isinstance(node.get("alias"), str):
                used.add(node["alias"])
            for key, value in node.items():
                if key in ("values", "binds") and isinstance(value, dict):
                    used.update(value)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(q.model_dump())
    name, n = stem, 0
    while name in used:
        n += 1
        name = f"{stem}_{n}"
    return name
