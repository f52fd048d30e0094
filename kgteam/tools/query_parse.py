"""SPARQL 1.1 SELECT / ASK text read back into a :class:`~kgteam.protocols.query_graph.QueryGraph`.

Why: gold queries of public benchmarks (and queries a model writes) are measured against the
one query language every playbook uses. rdflib's SPARQL parser reads the text (never evaluates
it); this module walks its *parse tree*, not its algebra, because the query graph is close to
the syntax (groups, filters, unions) and the algebra's rewrites (joins, extends, renamed
aggregates) would have to be undone. Prefixes are resolved to full IRIs from the query's own
declarations plus the ``prefixes`` a caller supplies for a dataset family; nothing else is
pre-bound (rdflib's defaults would silently give an undeclared ``geo:`` a meaning).

Normal forms, so that parse -> compile -> parse is stable:

* property paths: ``^p`` swaps subject and object, ``p*`` / ``p+`` / ``p?`` become ``repeat``,
  ``p/q`` a chain through a fresh variable, ``p|q`` a UNION; blank nodes become fresh variables;
* a nested ``{ }`` of plain triples joins its parent; any other nested group is a UNION of one
  alternative; ``{ SELECT ... }`` is a sub-query;
* ``FILTER(a && b)`` is two filters; ``OFFSET 0`` is no offset; ``SELECT (expr AS ?v)`` without
  aggregates is ``BIND(expr AS ?v)``;
* the builder's superlative with ties (a MAX/MIN sub-select over the same pattern joined by an
  equality filter) is read back as ``order`` + ``limit 1`` + ``ties``.

Anything else the query graph cannot hold raises :class:`QueryParseError` naming the construct.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
from collections.abc import Mapping
from typing import Any

from pyparsing import ParseBaseException
from rdflib.paths import AlternativePath, InvPath, MulPath, NegatedPath, SequencePath
from rdflib.plugins.sparql.algebra import translatePath, translatePName, translatePrologue, traverse
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import Prologue
from rdflib.term import BNode, Literal, URIRef, Variable

from kgteam.protocols.query_graph import (
    RDF_TYPE,
    XSD,
    Aggregate,
    AnswerKind,
    Bound,
    Compare,
    Condition,
    Expr,
    ExprFilter,
    Func,
    Group,
    Iri,
    Lit,
    OrderKey,
    QueryGraph,
    TextMatch,
    Triple,
    Var,
)
from kgteam.tools.query_builder import BUILTIN_FUNCTIONS
from kgteam.tools.sparql_guard import MAX_QUERY_BYTES, MAX_TOKENS, check_iri
from kgteam.tools.types import ToolError

__all__ = ["MAX_DEPTH", "QueryParseError", "QuerySyntaxError", "parse_query"]

_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_COMPARE_OPS = frozenset({"=", "!=", "<", "<=", ">", ">="})
_TEXT_FUNCTIONS = {"Builtin_CONTAINS": "contains", "Builtin_STRSTARTS": "strstarts", "Builtin_STRENDS": "strends"}
_AGGREGATES = {
    "Aggregate_Count": "count", "Aggregate_Sum": "sum", "Aggregate_Min": "min", "Aggregate_Max": "max",
    "Aggregate_Avg": "avg", "Aggregate_Sample": "sample", "Aggregate_GroupConcat": "group_concat",
}
# Builtins whose arguments rdflib names; in the order SPARQL writes them.
_ARG_KEYS = ("arg", "arg1", "arg2", "arg3", "text", "pattern", "start", "length", "replacement", "flags")
_TOKEN = re.compile(r"""<[^<>\s]*>|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[?$]?[\w:.\-]+|\S""")
MAX_DEPTH = 64  # nested expressions and groups; honest queries stay under ~12
_RECURSION_LIMIT = 8000  # rdflib's parser recurses ~40 frames per nesting level
_recursion_lock = threading.Lock()


class QueryParseError(ToolError, ValueError):
    """The query graph cannot express this query; ``construct`` names what (stable, countable)."""

    def __init__(self, construct: str, detail: str = "", message: str | None = None) -> None:
        self.construct = construct
        message = message or f"the query graph cannot express {construct}"
        super().__init__(message + (f": {detail}" if detail else ""))


class QuerySyntaxError(QueryParseError):
    """Not SPARQL 1.1 that rdflib's parser reads."""

    def __init__(self, detail: str) -> None:
        super().__init__("SPARQL syntax", detail, message="SPARQL syntax error")


def parse_query(text: str, prefixes: Mapping[str, str] | None = None) -> QueryGraph:
    """Read a SPARQL 1.1 SELECT or ASK query into a query graph.

    ``prefixes`` (name -> namespace IRI) are known before the query's own PREFIX declarations,
    which override them. Raises :class:`QuerySyntaxError` for text the parser rejects and
    :class:`QueryParseError` for a construct the query graph has no place for."""
    if not isinstance(text, str) or not text.strip():
        raise QuerySyntaxError("empty query")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_QUERY_BYTES:  # rdflib spends seconds on such text
        raise QueryParseError("a query this large", f"{size} bytes (the limit is {MAX_QUERY_BYTES})")
    tokens = len(_TOKEN.findall(text))
    if tokens > MAX_TOKENS:  # the guard's bound: rdflib spends ~1 ms per token inside expressions
        raise QueryParseError("a query this long", f"{tokens} tokens (the limit is {MAX_TOKENS})")
    with _recursion_lock:  # rdflib's parser and tree walks recurse per nesting level
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, _RECURSION_LIMIT))
        try:
            tree = _parse_tree(text, prefixes or {})
            name = getattr(tree, "name", "")
            if name not in ("SelectQuery", "AskQuery"):
                raise QueryParseError(f"{name.removesuffix('Query').upper() or 'this'} queries",
                                      "only SELECT and ASK are read")
            graph = _Reader(_variable_names(tree)).query(tree)
        except RecursionError:
            raise QueryParseError("a query nested too deeply") from None
        finally:
            sys.setrecursionlimit(old)
    depth = _depth(graph)
    if depth > MAX_DEPTH:  # the builder and pydantic recurse once per level, at Python's default limit
        raise QueryParseError("a query nested too deeply", f"{depth} levels (the limit is {MAX_DEPTH})")
    return graph


def _parse_tree(text: str, prefixes: Mapping[str, str]) -> Any:
    try:
        parsed = parseQuery(text)
    except ParseBaseException as e:
        raise QuerySyntaxError(str(e)[:200]) from None
    except RecursionError:
        raise
    except Exception as e:  # noqa: BLE001 - rdflib's parse actions raise ValueError etc. (bad escapes)
        raise QuerySyntaxError(f"{type(e).__name__}: {str(e)[:200]}") from None
    prologue = _Prologue(prefixes)
    try:
        prologue = translatePrologue(parsed[0], None, prologue=prologue)
        tree = traverse(parsed[1], visitPost=functools.partial(translatePName, prologue=prologue))
        return traverse(tree, visitPost=translatePath)
    except (QueryParseError, RecursionError):
        raise
    except Exception as e:  # noqa: BLE001 - rdflib raises bare Exception from its path and IRI helpers
        raise QuerySyntaxError(f"{type(e).__name__}: {str(e)[:200]}") from None


class _Prologue(Prologue):
    """rdflib's prologue keeps one prefix per namespace (``res:`` and ``dbr:`` for the same namespace
    cannot both be declared) and pre-binds rdflib's own; this one is a plain map of what is declared."""

    def __init__(self, prefixes: Mapping[str, str]) -> None:  # no super(): it binds rdflib's defaults
        self.base = None
        self.prefixes = {k: str(v) for k, v in prefixes.items()}

    def bind(self, prefix: str | None, uri: Any) -> None:
        self.prefixes[prefix or ""] = str(uri)

    def resolvePName(self, prefix: str | None, localname: str | None) -> URIRef:  # noqa: N802 - rdflib's name
        namespace = self.prefixes.get(prefix or "")
        if namespace is None:
            raise QuerySyntaxError(f"undeclared prefix {prefix or ''}:")
        return URIRef(namespace + (localname or ""))


def _variable_names(tree: Any) -> set[str]:
    names: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, Variable):
            names.add(str(node))

    traverse(tree, visitPost=visit)
    return names


def _unwrap(e: Any) -> Any:
    """Drop rdflib's one-child expression wrappers (``ConditionalOrExpression`` with no ``||`` ...)."""
    while isinstance(e, CompValue) and e.name.endswith("Expression") and not _attr(e, "op") and not _attr(e, "other"):
        e = e.expr
    while isinstance(e, list) and len(e) == 1:
        e = _unwrap(e[0])
    return e


class _Reader:
    """One parse: fresh variable names for blank nodes and path chains never collide with the query's."""

    def __init__(self, used: set[str]) -> None:
        self.used = set(used)
        self.bnodes: dict[str, Var] = {}

    def fresh(self, stem: str) -> Var:
        n = 0
        while f"{stem}{n}" in self.used:
            n += 1
        self.used.add(f"{stem}{n}")
        return Var(name=f"{stem}{n}")

    # ------------------------------------------------------------------ queries

    def query(self, node: Any) -> QueryGraph:
        if _attr(node, "datasetClause"):
            raise QueryParseError("FROM / FROM NAMED (a dataset clause)")
        where = self.group(node.where)
        if node.name == "AskQuery":
            if any(_attr(node, k) for k in ("groupby", "having", "orderby", "limitoffset", "valuesClause")):
                raise QueryParseError("solution modifiers on ASK")
            return QueryGraph(form="ask", where=where, expected=AnswerKind(kind="boolean"),
                              topics=_topics(where))
        modifier = _attr(node, "modifier")
        if modifier == "REDUCED":
            raise QueryParseError("SELECT REDUCED")
        answer: list[Var] = []
        aggregate: Aggregate | None = None
        projected_binds: dict[str, Expr] = {}
        for item in _attr(node, "projection") or []:
            if _attr(item, "var") is not None:
                answer.append(self.var(item.var))
                continue
            alias = self.var(item.evar)
            inner = _unwrap(item.expr)
            if getattr(inner, "name", "") in _AGGREGATES:
                if aggregate is not None:
                    raise QueryParseError("several aggregates in one SELECT")
                aggregate = self.aggregate(inner, alias.name)
            elif _has_aggregate(item.expr):
                raise QueryParseError("an expression over an aggregate in SELECT")
            else:
                projected_binds[alias.name] = self.expr(item.expr)
                answer.append(alias)
        group_by = [self.group_key(c) for c in (node.groupby.condition if _attr(node, "groupby") else [])]
        if projected_binds:
            if aggregate is not None or group_by:
                raise QueryParseError("a projected expression beside an aggregate or GROUP BY")
            for name in projected_binds:
                if name in where.binds:
                    raise QueryParseError("a variable bound twice", f"?{name}")
            where = where.model_copy(update={"binds": {**where.binds, **projected_binds}})
        if _attr(node, "valuesClause") is not None:
            if aggregate is not None or group_by:
                raise QueryParseError("a trailing VALUES block with aggregates")
            trailing = Group()
            self.inline_data(node.valuesClause, trailing)
            clash = set(trailing.values) & set(where.values)
            if clash:
                raise QueryParseError("two VALUES blocks for one variable", ", ".join(sorted(clash)))
            where = where.model_copy(update={"values": {**where.values, **trailing.values}})
        having: list[Condition] = []
        if _attr(node, "having"):
            holder = Group()
            for c in node.having.condition:
                self.conditions(c, holder)
            if holder.exists or holder.not_exists:
                raise QueryParseError("EXISTS in HAVING")
            having = list(holder.filters)
        order = [self.order_key(c) for c in (node.orderby.condition if _attr(node, "orderby") else [])]
        grouped = aggregate is not None or group_by or _has_aggregate([_attr(node, "having"), _attr(node, "orderby")])
        loose = [f"?{v.name}" for v in answer if v not in group_by]
        if grouped and loose:  # SPARQL 1.1 refuses it; Virtuoso groups by them implicitly
            raise QueryParseError("a projected variable neither grouped nor aggregated (implicit GROUP BY)",
                                  ", ".join(loose))
        limit = offset = None
        if _attr(node, "limitoffset"):
            lo = node.limitoffset
            limit = int(lo.limit) if _attr(lo, "limit") is not None else None
            offset = int(lo.offset) if _attr(lo, "offset") is not None else None
        q = QueryGraph(form="select", answer=answer, distinct=modifier == "DISTINCT" or aggregate is not None,
                       where=where, aggregate=aggregate, group_by=group_by, having=having, order=order,
                       limit=limit, offset=offset or None)
        q = _read_ties(q)
        return q.model_copy(update={"expected": _expected(q), "topics": _topics(q.where)})

    def aggregate(self, node: Any, alias: str) -> Aggregate:
        function = _AGGREGATES[node.name]
        if _attr(node, "separator") is not None:
            raise QueryParseError("GROUP_CONCAT with a SEPARATOR")
        distinct = bool(_attr(node, "distinct"))
        arg = _unwrap(node.vars)
        if arg == "*":
            return Aggregate(function=function, var=None, distinct=distinct, alias=alias)
        e = self.expr(arg)
        if isinstance(e, Var):
            return Aggregate(function=function, var=e, distinct=distinct, alias=alias)
        if isinstance(e, Func):
            return Aggregate(function=function, var=None, expr=e, distinct=distinct, alias=alias)
        raise QueryParseError("an aggregate over a constant")

    def group_key(self, node: Any) -> Var:
        node = _unwrap(node)
        if isinstance(node, Variable):
            return self.var(node)
        raise QueryParseError("GROUP BY an expression")

    def order_key(self, node: Any) -> OrderKey:
        if getattr(node, "name", "") == "OrderCondition":
            return OrderKey(expr=self.expr(node.expr), descending=_attr(node, "order") == "DESC")
        return OrderKey(expr=self.expr(node))

    # ------------------------------------------------------------------ groups

    def group(self, node: Any) -> Group:
        g = Group()
        if getattr(node, "name", "") == "SubSelect":  # a sub-select as a whole group
            g.subqueries.append(self.query(node))
            return g
        for part in _attr(node, "part") or []:
            name = part.name
            if name == "TriplesBlock":
                for flat in part.triples:
                    for i in range(0, len(flat), 3):
                        self.triple(flat[i], flat[i + 1], flat[i + 2], g)
            elif name == "Filter":
                self.conditions(part.expr, g)
            elif name == "OptionalGraphPattern":
                g.optional.append(self.group(part.graph))
            elif name == "MinusGraphPattern":
                g.minus.append(self.group(part.graph))
            elif name == "GroupOrUnionGraphPattern":
                self.group_or_union(part.graph, g)
            elif name == "Bind":
                var = self.var(part.var)
                if var.name in g.binds:
                    raise QueryParseError("a variable bound twice", f"?{var.name}")
                g.binds[var.name] = self.expr(part.expr)
            elif name == "InlineData":
                self.inline_data(part, g)
            elif name == "ServiceGraphPattern":
                raise QueryParseError("SERVICE (a federated query)")
            elif name == "GraphGraphPattern":
                raise QueryParseError("GRAPH (named graphs)")
            else:
                raise QueryParseError(f"the pattern {name}")
        return g

    def group_or_union(self, alternatives: list[Any], g: Group) -> None:
        groups = [self.group(a) for a in alternatives]
        if len(groups) == 1:
            inner = groups[0]
            if inner.subqueries and _only(inner, "subqueries"):
                g.subqueries.extend(inner.subqueries)
            elif _only(inner, "triples"):
                g.triples.extend(inner.triples)
            else:
                g.unions.append([inner])  # keeps the nested group's own scope for its filters
            return
        g.unions.append(groups)

    def inline_data(self, node: Any, g: Group) -> None:
        variables = list(_attr(node, "var") or [])
        if len(variables) != 1:
            raise QueryParseError("VALUES over several variables")
        values = []
        for v in _attr(node, "value") or []:
            if isinstance(v, list):
                if len(v) != 1:
                    raise QueryParseError("VALUES over several variables")
                v = v[0]
            if v == "UNDEF" or isinstance(v, CompValue):
                raise QueryParseError("UNDEF in VALUES")
            values.append(self.term(v))
        name = self.var(variables[0]).name
        if name in g.values:
            raise QueryParseError("two VALUES blocks for one variable", name)
        g.values[name] = values

    def triple(self, s: Any, p: Any, o: Any, g: Group) -> None:
        subject, obj = self.term(s), self.term(o)
        if isinstance(p, InvPath):
            self.triple(o, p.arg, s, g)
        elif isinstance(p, MulPath):
            inner, swap = p.path, False
            if isinstance(inner, InvPath):
                inner, swap = inner.arg, True
            if isinstance(inner, MulPath | SequencePath | AlternativePath | NegatedPath | InvPath):
                raise QueryParseError("a repeated property path over a sequence or alternative")
            pred = self.term(inner)
            ends = (obj, subject) if swap else (subject, obj)
            g.triples.append(Triple(subject=ends[0], predicate=pred, object=ends[1], repeat=p.mod))
        elif isinstance(p, SequencePath):
            steps = list(p.args)
            here = s
            for i, step in enumerate(steps):
                there = o if i == len(steps) - 1 else self.fresh("_p")
                self.triple(here, step, there, g)
                here = there
        elif isinstance(p, AlternativePath):
            alternatives = []
            for a in p.args:
                alt = Group()
                self.triple(s, a, o, alt)
                alternatives.append(alt)
            g.unions.append(alternatives)
        elif isinstance(p, NegatedPath):
            raise QueryParseError("a negated property path (!p)")
        else:
            pred = self.term(p)
            if isinstance(pred, Lit):
                raise QueryParseError("a literal as predicate")
            g.triples.append(Triple(subject=subject, predicate=pred, object=obj))

    # ------------------------------------------------------------------ filters

    def conditions(self, node: Any, g: Group) -> None:
        """One FILTER (or HAVING) expression, split at its top-level ``&&``."""
        e = _unwrap(node)
        name = getattr(e, "name", "")
        if name == "ConditionalAndExpression" and _attr(e, "other"):
            for part in [e.expr, *e.other]:
                self.conditions(part, g)
            return
        if name == "Builtin_NOTEXISTS":
            g.not_exists.append(self.group(e.graph))
            return
        if name == "Builtin_EXISTS":
            g.exists.append(self.group(e.graph))
            return
        if name == "UnaryNot":
            inner = _unwrap(e.expr)
            inner_name = getattr(inner, "name", "")
            if inner_name == "Builtin_EXISTS":
                g.not_exists.append(self.group(inner.graph))
                return
            if inner_name == "Builtin_BOUND":
                g.filters.append(Bound(var=self.var(inner.arg), negated=True))
                return
        if name == "Builtin_BOUND":
            g.filters.append(Bound(var=self.var(e.arg)))
            return
        if name == "RelationalExpression" and _attr(e, "op") in _COMPARE_OPS:
            g.filters.append(Compare(left=self.expr(e.expr), op=e.op, right=self.expr(e.other)))
            return
        text = self.text_match(e)
        g.filters.append(text if text is not None else ExprFilter(expr=self.expr(e)))

    def text_match(self, e: Any) -> TextMatch | None:
        def plain(x: Any) -> str | None:
            x = _unwrap(x)
            return str(x) if isinstance(x, Literal) and x.datatype is None and x.language is None else None

        name = getattr(e, "name", "")
        if name in _TEXT_FUNCTIONS and plain(e.arg2) is not None:
            return TextMatch(function=_TEXT_FUNCTIONS[name], target=self.expr(e.arg1), pattern=plain(e.arg2))
        if name == "Builtin_REGEX" and plain(e.pattern) is not None:
            flags = _attr(e, "flags")
            if flags is None:
                return TextMatch(function="regex", target=self.expr(e.text), pattern=plain(e.pattern))
            if plain(flags):
                return TextMatch(function="regex", target=self.expr(e.text), pattern=plain(e.pattern),
                                 flags=plain(flags))
        return None

    # ------------------------------------------------------------------ expressions and terms

    def expr(self, node: Any) -> Expr:
        e = _unwrap(node)
        if not isinstance(e, CompValue):
            return self.term(e, in_expression=True)
        name = e.name
        if name in ("ConditionalOrExpression", "ConditionalAndExpression"):
            op = "||" if name == "ConditionalOrExpression" else "&&"
            return _fold(op, [self.expr(x) for x in [e.expr, *e.other]])
        if name == "RelationalExpression":
            left = self.expr(e.expr)
            if e.op in ("IN", "NOT IN"):
                return Func(name=e.op.lower(), args=[left, *(self.expr(x) for x in e.other)])
            return Func(name=e.op, args=[left, self.expr(e.other)])
        if name in ("AdditiveExpression", "MultiplicativeExpression"):
            out = self.expr(e.expr)
            for op, other in zip(e.op, e.other, strict=True):
                out = Func(name=op, args=[out, self.expr(other)])
            return out
        if name in ("UnaryNot", "UnaryMinus", "UnaryPlus"):
            op = {"UnaryNot": "!", "UnaryMinus": "-", "UnaryPlus": "+"}[name]
            return Func(name=op, args=[self.expr(e.expr)])
        if name in ("Builtin_EXISTS", "Builtin_NOTEXISTS"):
            raise QueryParseError("EXISTS inside an expression (IF, BIND, ||)")
        if name in _AGGREGATES:
            if _attr(e, "separator") is not None:
                raise QueryParseError("GROUP_CONCAT with a SEPARATOR")
            arg = _unwrap(e.vars)
            args = [] if arg == "*" else [self.expr(arg)]
            return Func(name=_AGGREGATES[name], args=args, distinct=bool(_attr(e, "distinct")))
        if name == "Function":
            iri = str(e.iri)
            if not iri.startswith(XSD):
                raise QueryParseError("a function outside SPARQL and XSD casts", f"<{iri}>")
            if _attr(e, "distinct"):
                raise QueryParseError("DISTINCT in a function call")
            return Func(name=iri, args=[self.expr(x) for x in _attr(e, "expr") or []])
        if name.startswith("Builtin_"):
            fname = name.removeprefix("Builtin_").lower()
            if fname not in BUILTIN_FUNCTIONS:
                raise QueryParseError(f"the function {fname.upper()}")
            args: list[Expr] = []
            for key in _ARG_KEYS:
                value = _attr(e, key)
                if value is None:
                    continue
                if isinstance(value, list):
                    args += [self.expr(x) for x in value]
                else:
                    args.append(self.expr(value))
            return Func(name=fname, args=args)
        raise QueryParseError(f"the expression {name}")

    def term(self, t: Any, in_expression: bool = False) -> Var | Iri | Lit:
        if isinstance(t, Var | Iri | Lit):  # a fresh variable of a path chain
            return t
        if isinstance(t, Variable):
            return self.var(t)
        if isinstance(t, URIRef):
            try:
                return Iri(iri=check_iri(str(t)))
            except ToolError as e:
                raise QueryParseError("an IRI the builder refuses", str(e)) from None
        if isinstance(t, Literal):
            return Lit(value=str(t), datatype=str(t.datatype) if t.datatype else None, lang=t.language)
        if isinstance(t, BNode) and not in_expression:
            key = str(t)
            if key not in self.bnodes:
                self.bnodes[key] = self.fresh("_b")
            return self.bnodes[key]
        raise QueryParseError(f"the term {type(t).__name__} {str(t)[:80]!r}")

    def var(self, v: Any) -> Var:
        name = str(v)
        if not _VAR_NAME.match(name):
            raise QueryParseError("a variable name outside [A-Za-z0-9_]", f"?{name}")
        return Var(name=name)


# ---------------------------------------------------------------------- helpers


def _depth(root: QueryGraph) -> int:
    """How deeply expressions and groups nest (walked with a stack: the graph may be deep)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(root, 0)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(node, QueryGraph):
            stack.append((node.where, level + 1))
            stack += [(c, level + 1) for c in node.having]
            stack += [(k.expr, level + 1) for k in node.order]
            if node.aggregate is not None and node.aggregate.expr is not None:
                stack.append((node.aggregate.expr, level + 1))
        elif isinstance(node, Group):
            children: list[object] = [*node.filters, *node.binds.values(), *node.optional, *node.not_exists,
                                      *node.minus, *node.exists, *node.subqueries]
            children += [g for alternatives in node.unions for g in alternatives]
            stack += [(c, level + 1) for c in children]
        elif isinstance(node, Func):
            stack += [(a, level + 1) for a in node.args]
        elif isinstance(node, Compare):
            stack += [(node.left, level + 1), (node.right, level + 1)]
        elif isinstance(node, ExprFilter | TextMatch):
            stack.append((node.expr if isinstance(node, ExprFilter) else node.target, level + 1))
    return deepest


def _attr(node: Any, key: str) -> Any:
    """A parse-tree field or None (rdflib's ``CompValue.get`` returns the key itself when absent)."""
    return dict.get(node, key) if isinstance(node, dict) else None


def _fold(op: str, items: list[Expr]) -> Expr:
    out = items[0]
    for item in items[1:]:
        out = Func(name=op, args=[out, item])
    return out


def _has_aggregate(node: Any) -> bool:
    if isinstance(node, CompValue):
        return node.name in _AGGREGATES or any(_has_aggregate(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_aggregate(v) for v in node)
    return False


_GROUP_FIELDS = ("triples", "filters", "values", "binds", "unions", "optional", "not_exists", "minus", "exists",
                 "subqueries")


def _only(g: Group, field: str) -> bool:
    """``g`` has nothing but ``field`` (a nested group that can join its parent without changing meaning)."""
    return all(not getattr(g, f) for f in _GROUP_FIELDS if f != field)


def _read_ties(q: QueryGraph) -> QueryGraph:
    """The builder's superlative with ties (see ``query_builder._superlative_with_ties``) -> order + limit 1 + ties."""
    w = q.where
    if q.aggregate or q.order or q.limit is not None or q.offset or q.group_by or q.having or len(w.subqueries) != 1:
        return q
    sub = w.subqueries[0]
    agg = sub.aggregate
    if (sub.form != "select" or agg is None or agg.function not in ("max", "min") or sub.answer or sub.group_by
            or sub.having or sub.order or sub.limit is not None or sub.offset):
        return q
    key: Expr | None = agg.expr if agg.expr is not None else agg.var
    if key is None:
        return q
    best = Compare(left=key, op="=", right=Var(name=agg.alias))
    if best not in w.filters:
        return q
    filters = list(w.filters)
    del filters[len(filters) - 1 - filters[::-1].index(best)]
    rest = w.model_copy(update={"subqueries": [], "filters": filters})
    if rest != sub.where:
        return q
    return q.model_copy(update={"where": rest, "order": [OrderKey(expr=key, descending=agg.function == "max")],
                                "limit": 1, "ties": True})


def _expected(q: QueryGraph) -> AnswerKind | None:
    """What the gold query returns, where its text says so: a count is a number; an answer
    variable typed by an ``rdf:type`` triple is an entity of that class."""
    if q.aggregate is not None and q.aggregate.function == "count" and not q.answer:
        return AnswerKind(kind="number")
    if len(q.answer) == 1 and q.aggregate is None:
        for t in q.where.triples:
            if (t.subject == q.answer[0] and isinstance(t.predicate, Iri) and t.predicate.iri == RDF_TYPE
                    and isinstance(t.object, Iri) and t.repeat is None):
                return AnswerKind(kind="entity", class_iri=t.object.iri)
    return None


def _topics(g: Group) -> list[str]:
    """The IRIs a query names as subject or object (classes in ``rdf:type`` excepted) and in VALUES."""
    out: list[str] = []
    for t in g.all_triples():
        typed = isinstance(t.predicate, Iri) and t.predicate.iri == RDF_TYPE
        for end in (t.subject, None if typed else t.object):
            if isinstance(end, Iri) and end.iri not in out:
                out.append(end.iri)
    for rows in g.values.values():
        for r in rows:
            if isinstance(r, Iri) and r.iri not in out:
                out.append(r.iri)
    return out
