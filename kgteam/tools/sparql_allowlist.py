"""The guard's judge: parse a query with rdflib's SPARQL 1.1 parser, never evaluate it, and allow
only read-only algebra without federation.

Why rdflib: pyoxigraph has no parse-only entry point (``Store.query`` evaluates ASK, ORDER BY and
aggregates at once, even on an empty store), so the engine cannot be asked what a query means
without running it. rdflib's parser builds the algebra and stops there. The allow-list is on
algebra node names, not on words: a form the list does not name (SERVICE, an unknown function, a
node a future rdflib adds) is refused, and so is anything rdflib cannot read. Oxigraph parses the
same text again when it executes; a query it rejects is refused too, so the two parsers must agree
before anything runs.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from kgteam.tools.types import ToolError, UnsafeQueryError

__all__ = ["ParsedQuery", "parse_read_only"]

XSD = "http://www.w3.org/2001/XMLSchema#"
# Algebra (and the few parse-tree nodes rdflib keeps inside it) that only read the KG.
_ALLOWED_NODES = frozenset({
    "SelectQuery", "AskQuery", "ConstructQuery", "DescribeQuery", "DatasetClause",
    "BGP", "Join", "LeftJoin", "Filter", "Union", "Minus", "Graph", "Extend", "Group", "AggregateJoin",
    "ToMultiSet", "values", "Project", "Distinct", "Reduced", "Slice", "OrderBy", "OrderCondition",
    "GroupGraphPatternSub", "TriplesBlock", "InversePath", "TrueFilter",
    "ConditionalOrExpression", "ConditionalAndExpression", "RelationalExpression", "AdditiveExpression",
    "MultiplicativeExpression", "UnaryNot", "UnaryMinus", "UnaryPlus", "Function",
})
_ALLOWED_PREFIXES = ("Builtin_", "Aggregate_")  # the grammar's built-in functions and aggregates
_FORMS = {"SelectQuery": "SELECT", "AskQuery": "ASK", "ConstructQuery": "CONSTRUCT", "DescribeQuery": "DESCRIBE"}
# rdflib's parser recurses ~40 Python frames per nesting level; the guard bounds nesting before
# parsing, so this limit is reached only by a query the bound let through, never by a bomb.
_RECURSION_LIMIT = 8000
_recursion_lock = threading.Lock()


class ParsedQuery:
    """What the parser read: the form and the top-level LIMIT/OFFSET (None when absent)."""

    def __init__(self, form: str, limit: int | None, offset: int | None) -> None:
        self.form, self.limit, self.offset = form, limit, offset


def parse_read_only(text: str) -> ParsedQuery:
    """Parse ``text`` (no evaluation) and refuse anything outside the read-only allow-list."""
    from pyparsing import ParseBaseException
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    with _recursion_lock:  # the limit is per interpreter: raise it for one parse at a time
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, _RECURSION_LIMIT))
        try:
            algebra = translateQuery(parseQuery(text)).algebra
        except ParseBaseException as e:
            raise ToolError(f"SPARQL syntax error: {e}") from None
        except RecursionError:
            raise UnsafeQueryError("the query is too deeply nested or too long for the guard to check; "
                                   "split it into smaller queries") from None
        except Exception as e:  # noqa: BLE001 - any failure to read it means we cannot vouch for it
            raise ToolError(f"SPARQL could not be checked ({type(e).__name__}: {str(e)[:200]}); "
                            "run_sparql accepts plain SPARQL 1.1 queries") from None
        finally:
            sys.setrecursionlimit(old)
    name = getattr(algebra, "name", "")
    if name not in _FORMS:
        raise UnsafeQueryError(f"not a read-only query ({name or type(algebra).__name__})")
    _check_node(algebra, 0)
    top = algebra.get("p")
    limit = offset = None
    if getattr(top, "name", "") == "Slice":
        length = top.get("length")
        limit = int(length) if length is not None else None
        offset = int(top.get("start") or 0)
    return ParsedQuery(_FORMS[name], limit, offset)


def _check_node(node: Any, depth: int) -> None:
    if depth > 400:
        raise UnsafeQueryError("the query is nested too deeply to be checked")
    name = getattr(node, "name", None)
    if isinstance(name, str) and isinstance(node, dict):
        if name == "ServiceGraphPattern":
            raise UnsafeQueryError("SERVICE (federated query to another endpoint) is not allowed: run_sparql only "
                                   "queries this KG")
        if name not in _ALLOWED_NODES and not name.startswith(_ALLOWED_PREFIXES):
            raise UnsafeQueryError(f"{name} is not allowed in run_sparql (read-only SELECT/ASK/CONSTRUCT/DESCRIBE)")
        if name == "Function":
            iri = str(node.get("iri", ""))
            if not iri.startswith(XSD):
                raise ToolError(f"SPARQL could not be prepared: unknown function <{iri[:200]}> "
                                "(only built-ins and XSD casts are available)")
    if isinstance(node, dict):
        for value in node.values():
            _check_node(value, depth + 1)
    elif isinstance(node, list | tuple | set | frozenset):
        for value in node:
            _check_node(value, depth + 1)
    elif type(node).__name__.endswith("Path"):  # rdflib property paths hold their parts in .args / .path
        for part in (*getattr(node, "args", ()), getattr(node, "path", None), getattr(node, "arg", None)):
            if part is not None:
                _check_node(part, depth + 1)
