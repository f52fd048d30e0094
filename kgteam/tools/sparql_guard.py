"""Read-only SPARQL by construction: bound, canonicalise, scan, parse (never evaluate), cap;
and safe builders for IRIs and literals.

In order, before anything runs:

1. **Bounds.** Size in UTF-8 bytes, then tokens (all, and inside expressions) and bracket nesting
   depth: a query of ~2,000 nested ``{`` crashes Oxigraph's parser and would exhaust a
   recursive-descent one, and rdflib's parser spends up to ~1 ms per token (most inside
   expressions), so neither parser ever sees a bomb and the check stays well under a second.
2. **Canonical text.** Codepoint escapes (``\\u0041``) are decoded where Oxigraph decodes them — in
   strings and IRIs — and nowhere else (a backslash anywhere else, even a prefixed name's ``\\-``
   escape, which rdflib reads differently, is refused). A decoded quote or
   backslash inside a string is written back as its two-character escape, so a literal holding
   ``\\u0022`` means what it says and no string can end somewhere unexpected. Comments are dropped.
   The canonical text is what both parsers read and what executes: none of them sees an escape.
3. **Word scan.** Update keywords and SERVICE outside strings, IRIs and comments are refused with a
   message that says why (cheap, and a clear answer to the common case).
4. **Parse, never evaluate** (:mod:`sparql_allowlist`): rdflib's SPARQL 1.1 parser builds the
   algebra; only read-only nodes without SERVICE pass. Its form and top-level LIMIT must match
   what the scan found, or the query is refused. Oxigraph parses the same text when it executes.
   The verdict is kept per *shape* (the text with IRI and string contents blanked, see
   :func:`query_shape_key`), so queries that differ only in IRIs are parsed once.

The LIMIT the caller asks for is added or lowered before step 4, so the parsed text is the text
that runs.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

from kgteam.tools.sparql_allowlist import ParsedQuery, parse_read_only
from kgteam.tools.types import ToolError, UnsafeQueryError

__all__ = [
    "FORBIDDEN_KEYWORDS",
    "MAX_NESTING",
    "MAX_EXPRESSION_TOKENS",
    "MAX_TOKENS",
    "MAX_QUERY_BYTES",
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

# One alternative per lexical class; order matters (long strings before short ones). Strings and
# IRIs may hold codepoint escapes (Oxigraph decodes them there); nothing else may.
_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n\r]*)
  | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
               |'(?:[^'\\\n\r]|\\.)*'|"(?:[^"\\\n\r]|\\.)*")
  | (?P<iri><(?:[^<>"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>)
  | (?P<var>[?$][A-Za-z0-9_\u00b7\u00c0-\uffff]+)
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<bnode>_:[^\s{}()\[\],;.]+)
  | (?P<pname>[A-Za-z_\u00c0-\uffff][\w\-.\u00b7\u00c0-\uffff]*?:[^\s{}()\[\],;]*(?<!\.)|:[^\s{}()\[\],;]*(?<!\.))
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<punct>\^\^|\|\||&&|!=|<=|>=|[{}()\[\],;.*+/|^!=<>?\-])
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    start: int
    end: int
    depth: int  # brace depth *before* the token


@dataclass(frozen=True)
class GuardedQuery:
    """What the guard learnt about a query; ``text`` is the query to execute."""

    text: str
    form: str  # SELECT / CONSTRUCT / DESCRIBE / ASK
    limit: int | None  # effective top-level LIMIT (None for ASK)
    offset: int  # top-level OFFSET


def _tokens(query: str) -> list[_Token]:
    out: list[_Token] = []
    depth = 0
    for m in _TOKEN_RE.finditer(query):
        kind = m.lastgroup or "other"
        if kind in ("ws", "comment"):
            continue
        text = m.group()
        out.append(_Token(kind, text, m.start(), m.end(), depth))
        if text == "{":
            depth += 1
        elif text == "}":
            depth = max(0, depth - 1)
    return out


def _check_size(query: str) -> None:
    size = len(query.encode("utf-8", "surrogatepass"))
    if size > MAX_QUERY_BYTES:
        raise UnsafeQueryError(f"query too large: {size} bytes (the limit is {MAX_QUERY_BYTES} bytes)")


def _check_length(toks: list[_Token]) -> None:
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


def _check_nesting(toks: list[_Token]) -> None:
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


def _scan(toks: list[_Token]) -> None:
    for t in toks:
        if t.kind == "word" and t.text.upper() in FORBIDDEN_KEYWORDS:
            kw = t.text.upper()
            if kw == "SERVICE":
                raise UnsafeQueryError(
                    "SERVICE (federated query to another endpoint) is not allowed: run_sparql only "
                    "queries the loaded knowledge graph"
                )
            raise UnsafeQueryError(
                f"{kw} is not allowed: run_sparql is read-only and accepts only SELECT, ASK, "
                "CONSTRUCT and DESCRIBE queries"
            )


# ----------------------------------------------------------------------------- canonical text

_CODEPOINT = r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})"
_IRI_ESCAPE = re.compile(_CODEPOINT)
_STRING_ESCAPE = re.compile(_CODEPOINT + r"|\\(.)", re.DOTALL)
_ECHARS = "tbnrf\"'\\"
_REESCAPE = {'"': '\\"', "'": "\\'", "\\": "\\\\", "\n": "\\n", "\r": "\\r"}
_IRI_FORBIDDEN = re.compile(r'[<>"{}|^`\\\x00-\x20]')


def _codepoint(m: re.Match[str]) -> str:
    code = int(m.group(1) or m.group(2), 16)
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise UnsafeQueryError(f"invalid codepoint escape {m.group()!r}")
    return chr(code)


def _canonical_string(text: str) -> str:
    quote = text[:3] if text[:3] in ("'''", '"""') else text[0]

    def replace(m: re.Match[str]) -> str:
        if m.group(3) is None:
            ch = _codepoint(m)
            return _REESCAPE.get(ch, ch)
        if m.group(3) not in _ECHARS:
            raise ToolError(f"SPARQL syntax error: invalid escape {m.group()!r} in a string")
        return m.group()

    return quote + _STRING_ESCAPE.sub(replace, text[len(quote) : -len(quote)]) + quote


def _canonical_iri(text: str) -> str:
    body = _IRI_ESCAPE.sub(_codepoint, text[1:-1])
    bad = _IRI_FORBIDDEN.search(body)
    if bad:
        raise UnsafeQueryError(f"an escape in IRI {text[:100]!r} decodes to {bad.group()!r}, which IRIs cannot hold")
    return f"<{body}>"


def _canonical_text(query: str) -> str:
    """The query with every codepoint escape resolved and comments dropped (see the module doc)."""
    parts: list[str] = []
    for m in _TOKEN_RE.finditer(query):
        kind, text = m.lastgroup or "other", m.group()
        if kind == "comment":
            parts.append(" ")
            continue
        if kind == "string" and text[0] in "'\"":
            text = _canonical_string(text)
        elif kind == "iri":
            text = _canonical_iri(text)
        elif "\\" in text and kind == "pname":
            raise UnsafeQueryError(f"escapes in prefixed names ({text[:100]!r}) are not supported: write the "
                                   "full IRI in <...> instead")
        elif "\\" in text:
            near = query[m.start() : m.start() + 24]
            hint = ""
            with contextlib.suppress(ToolError):
                hint = f" (it reads {_IRI_ESCAPE.sub(_codepoint, near)!r})"
            raise UnsafeQueryError(f"unexpected backslash in {near!r}{hint}: escapes are only allowed in strings "
                                   "and IRIs")
        parts.append(text)
    return "".join(parts)


# ----------------------------------------------------------------------------- LIMIT / OFFSET


def _form(toks: list[_Token]) -> str:
    for t in toks:
        if t.kind == "word" and t.depth == 0 and t.text.upper() in _FORMS:
            return t.text.upper()
    raise ToolError("not a SPARQL query: expected SELECT, ASK, CONSTRUCT or DESCRIBE")


def _modifiers(toks: list[_Token]) -> tuple[_Token | None, _Token | None, int]:
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


def _after_where(toks: list[_Token], i: int) -> bool:
    """A depth-0 VALUES after some top-level group is the trailing ValuesClause."""
    return any(t.text == "}" and t.depth == 1 for t in toks[:i])


def _with_limit(query: str, toks: list[_Token], limit: int | None) -> GuardedQuery:
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


def analyse_query(query: str, limit: int | None) -> GuardedQuery:
    """Refuse unsafe queries, check syntax without evaluating, and bound the result size of
    SELECT/CONSTRUCT/DESCRIBE. Raises UnsafeQueryError (refused) or ToolError (malformed)."""
    if not isinstance(query, str) or not query.strip():
        raise ToolError("empty SPARQL query")
    _check_size(query)
    if "\x00" in query:
        raise UnsafeQueryError("query contains a NUL character")
    canonical = _canonical_text(query)
    toks = _tokens(canonical)
    _check_nesting(toks)
    _check_length(toks)
    _scan(toks)
    guarded = _with_limit(canonical, toks, limit)
    parsed = _parse_by_shape(guarded.text)
    # rdflib drops the modifiers of a DESCRIBE without WHERE (one solution: nothing to cut)
    modifiers_read = not (parsed.form == "DESCRIBE" and parsed.limit is None)
    if parsed.form != guarded.form or modifiers_read and (
            (guarded.limit is not None and parsed.limit != guarded.limit)
            or (guarded.form != "ASK" and (parsed.offset or 0) != guarded.offset)):
        raise UnsafeQueryError("the query reads differently to the guard's scanner and to its SPARQL parser "
                               f"({guarded.form} LIMIT {guarded.limit} vs {parsed.form} LIMIT {parsed.limit}); "
                               "rewrite it plainly")
    return guarded


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
    toks = _tokens(text)
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
    return _with_limit(query, _tokens(query), None)


def set_limit_offset(query: str, limit: int, offset: int) -> str:
    """Rewrite the top-level LIMIT/OFFSET of an already guarded query (used to page endpoints)."""
    toks = _tokens(query)
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
        toks = _tokens(text)
        _, _, insert_at = _modifiers(toks)
        extra = ("" if limit_tok else f" LIMIT {limit}") + ("" if offset_tok else f" OFFSET {offset}")
        text = text[:insert_at].rstrip() + "\n" + extra.strip() + "\n" + text[insert_at:]
    return text


# ----------------------------------------------------------------------------- safe builders

_IRI_BAD = re.compile(r"[<>\"{}|^`\\\x00-\x20\x7f]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_LANG = re.compile(r"^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$")


def check_iri(iri: str) -> str:
    """Return ``iri`` if it is absolute and contains nothing that could break out of ``<...>``."""
    if not isinstance(iri, str) or not iri:
        raise ToolError("IRI must be a non-empty string")
    if _IRI_BAD.search(iri):
        raise ToolError(f"invalid IRI (forbidden character): {iri[:200]!r}")
    if not _SCHEME.match(iri):
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
