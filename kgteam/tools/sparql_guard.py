"""Read-only SPARQL by construction: bound, canonicalise, scan, parse (never evaluate), cap;
and safe builders for IRIs and literals.

In order, before anything runs:

1. **Bounds.** Size in UTF-8 bytes, then tokens (all, and inside expressions) and bracket nesting
   depth: a query of ~2,000 nested ``{`` crashes Oxigraph's parser and would exhaust a
   recursive-descent one, and rdflib's parser spends up to ~1 ms per token (most inside
   expressions), so neither parser ever sees a bomb and the check stays well under a second.
2. **Canonical text** (:mod:`sparql_text`): escapes resolved (codepoints in strings and IRIs,
   ``ex:a\\-b`` written as its IRI), comments dropped. It is what both parsers read and what
   executes: none of them sees an escape. A query with a relative IRI gets ``BASE
   <http://kgteam.local/query/>`` in front (:data:`QUERY_BASE_IRI`), so both parsers resolve it
   alike (Oxigraph refuses a relative IRI without a base).
3. **Word scan.** Update keywords and SERVICE outside strings, IRIs and comments are refused with a
   message that says why and where (cheap, and a clear answer to the common case).
4. **Parse, never evaluate** (:mod:`sparql_allowlist`): rdflib's SPARQL 1.1 parser builds the
   algebra; only read-only nodes without SERVICE pass, inside (NOT) EXISTS too, and the spec's
   variable-scope rules rdflib skips are checked (:mod:`sparql_scope`). Its form and
   top-level LIMIT must match what the scan found, or the query is refused. Oxigraph parses the
   same text when it executes. The verdict is kept per *shape* (the text with IRI and string
   contents blanked, see :func:`query_shape_key`), so queries that differ only in IRIs are parsed
   once.

The LIMIT the caller asks for is added or lowered before step 4, so the parsed text is the text
that runs. Every refusal says what was refused, where (line and column of the query as written)
and what to write instead.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

from kgteam.tools.sparql_allowlist import (
    ParsedQuery,
    SparqlSyntaxError,
    UnknownFunctionError,
    parse_read_only,
)
from kgteam.tools.sparql_scope import ScopeError
from kgteam.tools.sparql_text import SCHEME, Source, Token, canonical_text, tokens
from kgteam.tools.types import ToolError, UnsafeQueryError

__all__ = [
    "FORBIDDEN_KEYWORDS",
    "MAX_NESTING",
    "MAX_EXPRESSION_TOKENS",
    "MAX_TOKENS",
    "MAX_QUERY_BYTES",
    "QUERY_BASE_IRI",
    "GuardedQuery",
    "analyse_query",
    "guard_query",
    "query_shape",
    "query_shape_key",
    "set_limit_offset",
    "sparql_iri",
    "sparql_literal",
]

MAX_QUERY_BYTES = 64 * 1024  # far above any honest query; rdflib parses this much in well under a second
MAX_NESTING = 32  # brackets of any kind, nested; honest queries stay under ~12
MAX_TOKENS = 1000  # e.g. a VALUES list of ~950 IRIs; honest queries use < 200
MAX_EXPRESSION_TOKENS = 300  # inside (...) outside VALUES data: FILTER/BIND/IN lists, function arguments
FORBIDDEN_KEYWORDS = frozenset(
    {"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "SERVICE", "WITH", "USING"}
)
_FORMS = ("SELECT", "CONSTRUCT", "DESCRIBE", "ASK")
_OPEN, _CLOSE = "{([", "})]"
# Relative IRIs are resolved against this base (a BASE line is put in front of a query that has
# one), so both parsers read absolute IRIs; a query's own BASE comes after it and wins.
QUERY_BASE_IRI = "http://kgteam.local/query/"
_WHY = {
    "SERVICE": "it sends part of the query to another endpoint, and run_sparql only queries this KG: remove the "
               "SERVICE clause and write its pattern against the KG",
    "LOAD": "it fetches a document into the KG, and run_sparql is read-only: load data with `kgteam load` instead",
}
_UPDATE_WHY = ("run_sparql is read-only and runs only SELECT, ASK, CONSTRUCT and DESCRIBE queries, never updates: "
               "to see what an update would touch, write its WHERE pattern as a SELECT")


@dataclass(frozen=True)
class GuardedQuery:
    """What the guard learnt about a query; ``text`` is the query to execute."""

    text: str
    form: str  # SELECT / CONSTRUCT / DESCRIBE / ASK
    limit: int | None  # effective top-level LIMIT (None for ASK)
    offset: int  # top-level OFFSET


def _check_size(query: str) -> None:
    size = len(query.encode("utf-8", "surrogatepass"))
    if size > MAX_QUERY_BYTES:
        raise UnsafeQueryError(f"query too large: {size} bytes (the limit is {MAX_QUERY_BYTES} bytes)")


def _check_length(toks: list[Token]) -> None:
    if len(toks) > MAX_TOKENS:
        raise UnsafeQueryError(f"query too long: {len(toks)} tokens (the limit is {MAX_TOKENS}); "
                               "split it into smaller queries")
    in_expression = 0
    parens = 0
    values_depth: int | None = None  # brace depth of a VALUES data block being skipped
    after_values = False
    for t in toks:
        if values_depth is not None:
            if t.text == "}" and t.depth == values_depth + 1:
                values_depth = None
            continue
        if t.kind == "word" and t.text.upper() == "VALUES":
            after_values = True
            continue
        if after_values and t.text == "{":
            values_depth, after_values = t.depth, False
            continue
        if t.text == "(" and t.kind == "punct":
            parens += 1
        elif t.text == ")" and t.kind == "punct":
            parens = max(0, parens - 1)
        if parens and not after_values:
            in_expression += 1
    if in_expression > MAX_EXPRESSION_TOKENS:
        raise UnsafeQueryError(f"expressions too long: {in_expression} tokens inside (...) (the limit is "
                               f"{MAX_EXPRESSION_TOKENS}); split the query or use VALUES for long lists")


def _check_nesting(toks: list[Token]) -> None:
    depth = deepest = 0
    for t in toks:
        if t.kind != "punct":
            continue
        if t.text in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
            if depth > MAX_NESTING:
                raise UnsafeQueryError(f"query nested too deeply: more than {MAX_NESTING} levels of brackets "
                                       f"(the limit is {MAX_NESTING})")
        elif t.text in _CLOSE:
            depth = max(0, depth - 1)


def _scan(toks: list[Token], source: Source) -> None:
    for i, t in enumerate(toks):
        if t.kind == "word" and t.text.upper() in FORBIDDEN_KEYWORDS:
            kw = t.text.upper()
            raise UnsafeQueryError(f"{kw} at {source.where(t.start)} is not allowed: {_WHY.get(kw, _UPDATE_WHY)}")
        # rdflib's parser cannot translate DESCRIBE * (a TypeError inside it): said here in words
        if t.kind == "word" and t.text.upper() == "DESCRIBE" and toks[i + 1 : i + 2] and toks[i + 1].text == "*":
            raise ToolError(f"DESCRIBE * at {source.where(t.start)} is not supported: name what to describe "
                            "(DESCRIBE ?s WHERE { ... }) or use CONSTRUCT { ?s ?p ?o } WHERE { ... }")


# ----------------------------------------------------------------------------- LIMIT / OFFSET


def _form(toks: list[Token]) -> str:
    for t in toks:
        if t.kind == "word" and t.depth == 0 and t.text.upper() in _FORMS:
            return t.text.upper()
    raise ToolError("not a SPARQL query: expected SELECT, ASK, CONSTRUCT or DESCRIBE")


def _modifiers(toks: list[Token]) -> tuple[Token | None, Token | None, int]:
    """Top-level LIMIT and OFFSET number tokens, and where a new LIMIT must be inserted.

    Solution modifiers sit at brace depth 0 after the last top-level ``}`` of the WHERE
    clause; a trailing ``VALUES`` block comes after them, so a new LIMIT goes before it.
    """
    limit_tok = offset_tok = None
    insert_at = toks[-1].end if toks else 0
    for i, t in enumerate(toks):
        if t.depth != 0 or t.kind != "word":
            continue
        word = t.text.upper()
        if word in ("LIMIT", "OFFSET") and i + 1 < len(toks) and toks[i + 1].kind == "number":
            if not toks[i + 1].text.isdigit():
                raise ToolError(f"SPARQL syntax error: {word} takes a non-negative integer, not {toks[i + 1].text!r}")
            if word == "LIMIT":
                limit_tok = toks[i + 1]
            else:
                offset_tok = toks[i + 1]
        elif word == "VALUES" and _after_where(toks, i):
            insert_at = t.start
    return limit_tok, offset_tok, insert_at


def _after_where(toks: list[Token], i: int) -> bool:
    """A depth-0 VALUES after some top-level group is the trailing ValuesClause."""
    return any(t.text == "}" and t.depth == 1 for t in toks[:i])


def _with_limit(query: str, toks: list[Token], limit: int | None) -> GuardedQuery:
    form = _form(toks)
    if form == "ASK":
        return GuardedQuery(query, form, None, 0)
    limit_tok, offset_tok, insert_at = _modifiers(toks)
    offset = int(offset_tok.text) if offset_tok else 0
    text = query
    effective: int | None
    if limit_tok is not None:
        effective = int(limit_tok.text)
        if limit is not None and effective > limit:
            text = query[: limit_tok.start] + str(limit) + query[limit_tok.end :]
            effective = limit
    elif limit is not None:
        text = query[:insert_at].rstrip() + f"\nLIMIT {limit}\n" + query[insert_at:]
        effective = limit
    else:
        effective = None
    return GuardedQuery(text, form, effective, offset)


def analyse_query(query: str, limit: int | None, *, base_iri: str = QUERY_BASE_IRI) -> GuardedQuery:
    """Refuse unsafe queries, check syntax without evaluating, and bound the result size of
    SELECT/CONSTRUCT/DESCRIBE. Raises UnsafeQueryError (refused) or ToolError (malformed).
    Relative IRIs are resolved against ``base_iri`` unless the query declares its own BASE."""
    if not isinstance(query, str) or not query.strip():
        raise ToolError("empty SPARQL query")
    _check_size(query)
    if "\x00" in query:
        raise UnsafeQueryError("query contains a NUL character")
    canonical, source = canonical_text(query)
    toks = tokens(canonical)
    _check_nesting(toks)
    _check_length(toks)
    _scan(toks, source)
    if any(t.kind == "iri" and not SCHEME.match(t.text[1:-1]) for t in toks):
        canonical = f"BASE {sparql_iri(base_iri)}\n{canonical}"
        source.derive(canonical)
        toks = tokens(canonical)
    guarded = _with_limit(canonical, toks, limit)
    source.derive(guarded.text)
    try:
        parsed = _parse_by_shape(guarded.text)
    except SparqlSyntaxError as e:
        raise ToolError(_syntax_message(e.pos, source, toks, canonical)) from None
    except ScopeError as e:
        at = _anchor(e, toks)
        raise ToolError(f"SPARQL scope error{'' if at is None else ' at ' + source.where(at, canonical)}: {e}") from None
    except UnknownFunctionError as e:
        at = _call_of(e.iri, toks)
        raise ToolError(str(e) if at is None else str(e).replace(" (only", f" at {source.where(at, canonical)} (only",
                                                                  1)) from None
    # rdflib drops the modifiers of a DESCRIBE without WHERE (one solution: nothing to cut)
    modifiers_read = not (parsed.form == "DESCRIBE" and parsed.limit is None)
    if parsed.form != guarded.form or modifiers_read and (
            (guarded.limit is not None and parsed.limit != guarded.limit)
            or (guarded.form != "ASK" and (parsed.offset or 0) != guarded.offset)):
        raise UnsafeQueryError("the query reads differently to the guard's scanner and to its SPARQL parser "
                               f"({guarded.form} LIMIT {guarded.limit} vs {parsed.form} LIMIT {parsed.limit}); "
                               "rewrite it plainly")
    return guarded


def _syntax_message(pos: int, source: Source, toks: list[Token], text: str) -> str:
    """Where the parser stopped, what is written there, and a way out for forms people try."""
    message = (f"SPARQL syntax error at {source.where(pos)}, near {source.near(pos)!r}: the query is not valid "
               "SPARQL 1.1 from there on")
    bindings = next((t for t in toks if t.kind == "word" and t.text.upper() == "BINDINGS"), None)
    if bindings is not None:
        message += (f" (BINDINGS at {source.where(bindings.start, text)} is from a draft: SPARQL 1.1 calls it "
                    "VALUES)")
    counted = _counted_path(toks)
    if counted is not None:
        message += (f" (the path form {{n,m}} at {source.where(counted.start, text)} is from a draft "
                    "that SPARQL 1.1 dropped: repeat the path, p/p or p/p?, or use p+ or p*)")
    return message


def _counted_path(toks: list[Token]) -> Token | None:
    """A ``{n,m}`` / ``{n}`` / ``{,m}`` / ``{n,}`` after a path step (the dropped draft's form)."""
    for i in range(1, len(toks) - 2):
        t, before, after = toks[i], toks[i - 1], toks[i + 1 : i + 4]
        if t.text != "{" or not (before.kind in ("iri", "pname") or before.text in (")", "*", "+", "?")):
            continue
        shape = "".join("n" if a.kind == "number" else a.text for a in after)
        if shape.startswith(("n}", "n,", ",n")):
            return t
    return None


def _anchor(error: ScopeError, toks: list[Token]) -> int | None:
    """Where the variable a scope error names is written: in a SELECT clause (between SELECT and
    its WHERE or first brace) or after a BIND; failing that, its first place after one."""
    kind, var = error.anchor
    for in_clause_only in (True, False):
        started = in_clause = False
        for i, t in enumerate(toks):
            word = t.text.upper() if t.kind == "word" else ""
            if word == error.after:
                started = in_clause = True
            elif word == "WHERE" or t.text == "{":
                in_clause = False
            if not started or (in_clause_only and not in_clause and error.after == "SELECT"):
                continue
            if kind == "AS" and word == "AS" and i + 1 < len(toks) and toks[i + 1].kind == "var" \
                    and toks[i + 1].text[1:] == var:
                return toks[i + 1].start
            if (kind == "VAR" and t.kind == "var" and t.text[1:] == var) or (kind == "*" and t.text == "*"):
                return t.start
    return None


def _call_of(iri: str, toks: list[Token]) -> int | None:
    """Where a call of the function ``iri`` is written (an IRI or a prefixed name before "(")."""
    for i, t in enumerate(toks[:-1]):
        if toks[i + 1].text != "(" or t.kind not in ("iri", "pname"):
            continue
        name = t.text[1:-1] if t.kind == "iri" else t.text.partition(":")[2]
        if name and iri.endswith(name):
            return t.start
    return None


# ----------------------------------------------------------------------------- verdicts by shape

_SHAPES_KEPT = 4096
_shapes: OrderedDict[str, ParsedQuery] = OrderedDict()
_shapes_lock = threading.Lock()


def query_shape_key(text: str) -> str:
    """``text`` with the contents of IRIs and strings blanked (an IRI called as a function is kept).

    IRIREF and string literals are single terminals of the grammar: swapping one for another of
    the same kind cannot change how a query parses. Roles send dozens of queries per question that
    differ only in IRIs (~10 ms of parsing each), so the parser's verdict is kept per shape.
    """
    toks = tokens(text)
    out: list[str] = []
    pos = 0
    for i, t in enumerate(toks):
        called = i + 1 < len(toks) and toks[i + 1].text == "("
        if t.kind == "iri" and not called:
            blank = "<>"
        elif t.kind == "string":
            quote = t.text[:3] if t.text[:3] in ("'''", '"""') else t.text[0]
            blank = quote + quote
        else:
            continue
        out.append(text[pos : t.start] + blank)
        pos = t.end
    out.append(text[pos:])
    return "".join(out)


def _parse_by_shape(text: str) -> ParsedQuery:
    """The parser's verdict on ``text``, parsed once per shape (refusals are never kept)."""
    key = query_shape_key(text)
    with _shapes_lock:
        if key in _shapes:
            _shapes.move_to_end(key)
            return _shapes[key]
    parsed = parse_read_only(text)
    with _shapes_lock:
        _shapes[key] = parsed
        while len(_shapes) > _SHAPES_KEPT:
            _shapes.popitem(last=False)
    return parsed


def guard_query(query: str, limit: int | None) -> str:
    """Return the query to execute (LIMIT added or lowered); raise UnsafeQueryError/ToolError."""
    return analyse_query(query, limit).text


def query_shape(query: str) -> GuardedQuery:
    """Form and top-level LIMIT/OFFSET of a query that is already guarded or built by the tools
    (no parse: backends use it to page and cap results)."""
    return _with_limit(query, tokens(query), None)


def set_limit_offset(query: str, limit: int, offset: int) -> str:
    """Rewrite the top-level LIMIT/OFFSET of an already guarded query (used to page endpoints)."""
    toks = tokens(query)
    limit_tok, offset_tok, insert_at = _modifiers(toks)
    edits: list[tuple[int, int, str]] = []
    if limit_tok is not None:
        edits.append((limit_tok.start, limit_tok.end, str(limit)))
    if offset_tok is not None:
        edits.append((offset_tok.start, offset_tok.end, str(offset)))
    text = query
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    if limit_tok is None or offset_tok is None:
        toks = tokens(text)
        _, _, insert_at = _modifiers(toks)
        extra = ("" if limit_tok else f" LIMIT {limit}") + ("" if offset_tok else f" OFFSET {offset}")
        text = text[:insert_at].rstrip() + "\n" + extra.strip() + "\n" + text[insert_at:]
    return text


# ----------------------------------------------------------------------------- safe builders

_IRI_BAD = re.compile(r"[<>\"{}|^`\\\x00-\x20\x7f]")
_LANG = re.compile(r"^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$")


def check_iri(iri: str) -> str:
    """Return ``iri`` if it is absolute and contains nothing that could break out of ``<...>``."""
    if not isinstance(iri, str) or not iri:
        raise ToolError("IRI must be a non-empty string")
    if _IRI_BAD.search(iri):
        raise ToolError(f"invalid IRI (forbidden character): {iri[:200]!r}")
    if not SCHEME.match(iri):
        raise ToolError(f"invalid IRI (no scheme, must be absolute): {iri[:200]!r}")
    return iri


def sparql_iri(iri: str) -> str:
    """``<iri>`` after validation — the only way tool code puts an IRI into a query."""
    return f"<{check_iri(iri)}>"


_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


def sparql_literal(text: str, lang: str | None = None, datatype: str | None = None) -> str:
    """A double-quoted SPARQL literal with every special character escaped."""
    if not isinstance(text, str):
        raise ToolError("literal text must be a string")
    if lang is not None and datatype is not None:
        raise ToolError("a literal has either a language tag or a datatype, not both")
    body = "".join(_ESCAPES.get(ch, ch if ch >= " " or ch in "\n\r\t" else f"\\u{ord(ch):04X}") for ch in text)
    out = f'"{body}"'
    if lang is not None:
        if not _LANG.match(lang):
            raise ToolError(f"invalid language tag: {lang!r}")
        out += "@" + lang
    elif datatype is not None:
        out += "^^" + sparql_iri(datatype)
    return out
