"""The guard's judge: parse a query with rdflib's SPARQL 1.1 parser, never evaluate it, and allow
only read-only algebra without federation.

Why rdflib: pyoxigraph has no parse-only entry point (``Store.query`` evaluates ASK, ORDER BY and
aggregates at once, even on an empty store), so the engine cannot be asked what a query means
without running it. rdflib's parser builds the algebra and stops there. The allow-list is on
algebra node names, not on words: a form the list does not name (SERVICE, an unknown function, a
node a future rdflib adds) is refused, and so is anything rdflib cannot read. Oxigraph parses the
same text again when it executes; a query it rejects is refused too, so the two parsers must agree
before anything runs.

EXISTS bodies: rdflib keeps the parse tree of an ``EXISTS { ... }`` body as the node's item and
puts the translated algebra on an attribute (in FILTER and BIND), or does not translate it at all
(in SELECT expressions, HAVING, ORDER BY). The check reads the translated body, translating it
here where rdflib did not, so the same allow-list of algebra nodes judges every pattern, however
deep in (NOT) EXISTS it sits. Before translation, the parse tree goes through the scope rules
rdflib does not check (:mod:`sparql_scope`).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from kgteam.tools.sparql_scope import check_scopes
from kgteam.tools.types import ToolError, UnsafeQueryError

__all__ = ["ParsedQuery", "SparqlSyntaxError", "UnknownFunctionError", "parse_read_only"]

XSD = "http://www.w3.org/2001/XMLSchema#"
# Algebra that only reads the KG (rdflib's names), and the expression nodes it keeps inside.
_ALLOWED_NODES = frozenset({
    "SelectQuery", "AskQuery", "ConstructQuery", "DescribeQuery", "DatasetClause",
    "BGP", "Join", "LeftJoin", "Filter", "Union", "Minus", "Graph", "Extend", "Group", "AggregateJoin",
    "ToMultiSet", "values", "Project", "Distinct", "Reduced", "Slice", "OrderBy", "OrderCondition",
    "InversePath", "TrueFilter",
    "ConditionalOrExpression", "ConditionalAndExpression", "RelationalExpression", "AdditiveExpression",
    "MultiplicativeExpression", "UnaryNot", "UnaryMinus", "UnaryPlus", "Function",
})
_ALLOWED_PREFIXES = ("Builtin_", "Aggregate_")  # the grammar's built-in functions and aggregates
_EXISTS = ("Builtin_EXISTS", "Builtin_NOTEXISTS")
_FORMS = {"SelectQuery": "SELECT", "AskQuery": "ASK", "ConstructQuery": "CONSTRUCT", "DescribeQuery": "DESCRIBE"}
# What a refused node is called in a message (never a grammar rule's name).
_SAID = {
    "ServiceGraphPattern": ("SERVICE (a query sent to another endpoint)",
                            "run_sparql only queries this KG: remove the SERVICE clause"),
}
# rdflib's parser recurses ~40 Python frames per nesting level; the guard bounds nesting before
# parsing, so this limit is reached only by a query the bound let through, never by a bomb.
_RECURSION_LIMIT = 8000
_recursion_lock = threading.Lock()


class ParsedQuery:
    """What the parser read: the form and the top-level LIMIT/OFFSET (None when absent)."""

    def __init__(self, form: str, limit: int | None, offset: int | None) -> None:
        self.form, self.limit, self.offset = form, limit, offset


class SparqlSyntaxError(ToolError):
    """rdflib could not read the text; ``pos`` is where it stopped (an offset in the parsed text),
    so the guard can say where that is in the query the user wrote."""

    def __init__(self, pos: int) -> None:
        super().__init__(f"SPARQL syntax error at offset {pos}")
        self.pos = pos


class UnknownFunctionError(ToolError):
    """A call of a function that is neither a built-in nor an XSD cast (``iri`` says which)."""

    def __init__(self, iri: str) -> None:
        super().__init__(f"SPARQL could not be prepared: unknown function <{iri[:200]}> (only the built-in "
                         "functions and XSD casts such as xsd:integer(...) are available)")
        self.iri = iri


def parse_read_only(text: str) -> ParsedQuery:
    """Parse ``text`` (no evaluation) and refuse anything outside the read-only allow-list."""
    from pyparsing import ParseBaseException
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    with _recursion_lock:  # the limit is per interpreter: raise it for one parse at a time
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, _RECURSION_LIMIT))
        try:
            tree = parseQuery(text)
            check_scopes(tree[1])  # rules rdflib does not check and Oxigraph does, refused here in words
            algebra = translateQuery(tree).algebra
            name = getattr(algebra, "name", "")
            if name not in _FORMS:
                raise UnsafeQueryError("not a read-only query: run_sparql accepts only SELECT, ASK, CONSTRUCT and "
                                       "DESCRIBE queries")
            _check_node(algebra, 0)
        except ParseBaseException as e:
            raise SparqlSyntaxError(e.loc) from None
        except RecursionError:
            raise UnsafeQueryError("the query is too deeply nested or too long for the guard to check; "
                                   "split it into smaller queries") from None
        except ToolError:
            raise
        except Exception as e:  # noqa: BLE001 - any failure to read it means we cannot vouch for it
            raise ToolError(f"SPARQL could not be checked ({type(e).__name__}: {str(e)[:200]}); "
                            "run_sparql accepts plain SPARQL 1.1 queries") from None
        finally:
            sys.setrecursionlimit(old)
    top = algebra.get("p")
    limit = offset = None
    if getattr(top, "name", "") == "Slice":
        length = top.get("length")
        limit = int(length) if length is not None else None
        offset = int(top.get("start") or 0)
    return ParsedQuery(_FORMS[name], limit, offset)


def _exists_body(node: Any) -> Any:
    """The algebra of an EXISTS body: rdflib's translation where it made one, else ours."""
    from rdflib.plugins.sparql.algebra import translateGroupGraphPattern, translatePath, traverse

    translated = vars(node).get("graph")  # rdflib sets the attribute, leaving the item as parsed
    if translated is not None:
        return translated
    # outside WHERE (SELECT expressions, HAVING, ORDER BY) rdflib translated neither paths nor body
    return translateGroupGraphPattern(traverse(node["graph"], visitPost=translatePath))


def _check_node(node: Any, depth: int) -> None:
    if depth > 400:
        raise UnsafeQueryError("the query is nested too deeply to be checked")
    name = getattr(node, "name", None)
    if isinstance(name, str) and isinstance(node, dict):
        if name not in _ALLOWED_NODES and not name.startswith(_ALLOWED_PREFIXES):
            what, instead = _SAID.get(name, ("a construct that is not read-only SPARQL 1.1",
                                             "write a plain SELECT, ASK, CONSTRUCT or DESCRIBE query"))
            raise UnsafeQueryError(f"{what} is not allowed in run_sparql: {instead}")
        if name == "Function":
            iri = str(node.get("iri", ""))
            if not iri.startswith(XSD):
                raise UnknownFunctionError(iri)
        if name in _EXISTS:
            _check_node(_exists_body(node), depth + 1)
            for key, value in node.items():
                if key != "graph":
                    _check_node(value, depth + 1)
            return
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
