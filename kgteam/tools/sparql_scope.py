"""SPARQL's variable-scope rules, which rdflib's parser does not check and Oxigraph's does (section
18.2 of the spec), checked on rdflib's parse tree so that such a query is refused by the guard with
words a user can act on, not by Oxigraph with "expected one of LANGMATCHES, ...".

The rules, as Oxigraph applies them (a query they fail never runs):

- ``BIND (e AS ?v)`` may not assign a variable the group pattern before it already binds;
- ``SELECT (e AS ?v)`` may not assign a variable the WHERE clause binds, nor may a name be selected
  twice;
- in a grouped SELECT (GROUP BY, or an aggregate in SELECT, HAVING or ORDER BY) every selected
  variable, and every variable of a selected expression outside an aggregate, is a group key
  (``?v`` or ``(e AS ?v)`` in GROUP BY), and ``SELECT *`` is not allowed.

Where unsure, the check is looser than Oxigraph's, never stricter: what it lets through, Oxigraph
still refuses before evaluating anything.
"""

from __future__ import annotations

from typing import Any

from kgteam.tools.types import ToolError

__all__ = ["ScopeError", "check_scopes"]


class ScopeError(ToolError):
    """A scope rule broken; ``anchor`` is what to look for in the text to say where: ``("AS", v)``
    after ``after`` (BIND / SELECT), or ``("VAR", v)`` / ``("*", "")`` after SELECT."""

    def __init__(self, message: str, anchor: tuple[str, str], after: str = "SELECT") -> None:
        super().__init__(message)
        self.anchor, self.after = anchor, after


def check_scopes(query: Any) -> None:
    """Check every group pattern and every SELECT of rdflib's parse tree ``query`` (the query
    node, before translation to algebra)."""
    for node in _nodes(query):
        name = getattr(node, "name", None)
        if name == "GroupGraphPatternSub":
            _check_binds(node)
        elif name in ("SelectQuery", "SubSelect"):
            _check_select(node)


def _nodes(node: Any) -> Any:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            yield n
            stack.extend(n.values())
        elif _is_sequence(n):
            stack.extend(n)


def _is_sequence(n: Any) -> bool:
    from pyparsing import ParseResults

    return isinstance(n, list | tuple | ParseResults)


def _item(node: Any, key: str) -> Any:
    return dict.get(node, key)  # rdflib's CompValue.get answers the key's name when it is missing


def _variables(node: Any) -> set[str]:
    """Every variable under ``node`` (a triples block: all of them are bound by it)."""
    from rdflib.term import Variable

    found = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Variable):
            found.add(str(n))
        elif isinstance(n, dict):
            stack.extend(n.values())
        elif _is_sequence(n):
            stack.extend(n)
    return found


def _in_scope(node: Any) -> set[str]:
    """The variables a pattern binds (the spec's in-scope variables, 18.2.1)."""
    from rdflib.term import Variable

    name = getattr(node, "name", None)
    if name == "GroupGraphPatternSub":
        return set().union(*(_in_scope(part) for part in _item(node, "part") or []))
    if name == "TriplesBlock":
        return _variables(_item(node, "triples"))
    if name in ("OptionalGraphPattern", "ServiceGraphPattern"):
        return _in_scope(_item(node, "graph"))
    if name == "GroupOrUnionGraphPattern":
        return set().union(*(_in_scope(g) for g in _item(node, "graph") or []))
    if name == "GraphGraphPattern":
        term = _item(node, "term")
        return _in_scope(_item(node, "graph")) | ({str(term)} if isinstance(term, Variable) else set())
    if name in ("InlineData", "ValuesClause"):
        return {str(v) for v in _item(node, "var") or []}
    if name == "Bind":
        return {str(_item(node, "var"))}
    if name == "SubSelect":
        projection = _item(node, "projection")
        if not projection:  # SELECT *
            return _in_scope(_item(node, "where")) | _in_scope(_item(node, "valuesClause"))
        return {str(_item(p, "var") or _item(p, "evar")) for p in projection}
    return set()  # FILTER, MINUS and anything else bind nothing outside themselves


def _check_binds(group: Any) -> None:
    bound: set[str] = set()
    for part in _item(group, "part") or []:
        if getattr(part, "name", None) == "Bind":
            var = str(_item(part, "var"))
            if var in bound:
                raise ScopeError(f"BIND (... AS ?{var}) assigns ?{var}, which the pattern before it in the same "
                                 "group already binds, and SPARQL does not allow that: bind a new variable (and "
                                 f"compare it with FILTER (?new = ?{var}) if that was the point)", ("AS", var), "BIND")
        bound |= _in_scope(part)


def _aggregates(node: Any) -> bool:
    """An aggregate in ``node``, not counting those of sub-selects (which are theirs)."""
    stack = [node]
    while stack:
        n = stack.pop()
        name = getattr(n, "name", None)
        if isinstance(name, str) and name.startswith("Aggregate_"):
            return True
        if name == "SubSelect" or name in ("Builtin_EXISTS", "Builtin_NOTEXISTS"):
            continue
        if isinstance(n, dict):
            stack.extend(n.values())
        elif _is_sequence(n):
            stack.extend(n)
    return False


def _free_variables(expr: Any) -> set[str]:
    """The variables of an expression outside its aggregates (and outside EXISTS bodies)."""
    from rdflib.term import Variable

    found = set()
    stack = [expr]
    while stack:
        n = stack.pop()
        name = getattr(n, "name", None)
        if isinstance(n, Variable):
            found.add(str(n))
        elif isinstance(name, str) and (name.startswith("Aggregate_") or name in ("Builtin_EXISTS",
                                                                                  "Builtin_NOTEXISTS")):
            continue
        elif isinstance(n, dict):
            stack.extend(n.values())
        elif _is_sequence(n):
            stack.extend(n)
    return found


def _plain_variable(expr: Any) -> Any:
    """The variable an expression is, once rdflib's one-operand expression ladder is unwrapped."""
    from rdflib.term import Variable

    while isinstance(expr, dict) and set(expr) == {"expr"}:
        expr = expr["expr"]
    return expr if isinstance(expr, Variable) else None


def _check_select(select: Any) -> None:
    projection = _item(select, "projection")
    group_by = _item(select, "groupby")
    grouped = group_by is not None or any(_aggregates(_item(select, key)) for key in ("projection", "having",
                                                                                      "orderby"))
    values = _in_scope(_item(select, "valuesClause"))
    if grouped:
        visible = set(values)
        for condition in _item(group_by, "condition") if group_by is not None else []:
            if not isinstance(condition, dict):  # GROUP BY ?v
                visible.add(str(condition))
                continue
            for var in (_plain_variable(_item(condition, "expr")), _item(condition, "var")):
                if var is not None:  # GROUP BY (?v) is ?v, as in Oxigraph; (e AS ?v) is ?v
                    visible.add(str(var))
    else:
        visible = _in_scope(_item(select, "where")) | values
    if not projection:
        if grouped:
            raise ScopeError("SELECT * cannot be used with GROUP BY or aggregates: select the grouped variables "
                             "and the aggregates by name", ("*", ""))
        return
    selected: set[str] = set()
    for member in projection:
        var, expr = _item(member, "var"), _item(member, "expr")
        if var is not None:
            name = str(var)
            if grouped and name not in visible:
                raise ScopeError(f"?{name} is selected but neither grouped nor aggregated: add it to GROUP BY, "
                                 f"or select an aggregate of it, e.g. (SAMPLE(?{name}) AS ?any_{name})",
                                 ("VAR", name))
        else:
            name = str(_item(member, "evar"))
            if name in visible:
                raise ScopeError(f"(... AS ?{name}) in SELECT assigns ?{name}, which the WHERE clause already "
                                 "binds: give the expression another name", ("AS", name))
            unbound = sorted(_free_variables(expr) - visible) if grouped else []
            if unbound:
                raise ScopeError(f"the expression selected as ?{name} uses ?{unbound[0]}, which is neither grouped "
                                 f"nor aggregated: add ?{unbound[0]} to GROUP BY, or use an aggregate of it",
                                 ("AS", name))
        if name in selected:
            raise ScopeError(f"?{name} is selected twice: keep one, or give the expression another name",
                             ("AS", name) if var is None else ("VAR", name))
        selected.add(name)
