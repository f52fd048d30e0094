"""Read-only SPARQL by construction: scan, parse, cap; and safe builders for IRIs and literals.

Why a token scan *and* a parse: pyoxigraph exposes no parse-only entry point, so syntax is
checked by preparing the query against an empty in-memory store (parsing happens before any
evaluation; the empty store makes evaluation free). That store would happily call out for a
``SERVICE`` clause, so the scan — which skips strings, IRIs and comments and so cannot be
fooled by ``"DROP"`` in a literal — runs first and refuses updates and federation with a clear
message. Updates never parse as a query anyway, so the parse is the second line of defence.
The scan alone can be fooled where it and Oxigraph's parser disagree on where a token ends
(``trueSERVICE<...>``, ``SERVICE:name``): so whenever the letters "service" appear, the query
is also parsed, never evaluated, by rdflib's SPARQL 1.1 parser and refused if its algebra holds
a service pattern or if that parser cannot read it.

Codepoint escapes (``\u0041``, ``\U0001F600``) are decoded *before* scanning, as the SPARQL
grammar itself processes them before parsing: otherwise an escape inside an IRI can make the
scanner and the parser disagree about where the IRI ends, and hide a ``SERVICE`` clause. The
decoded text is what executes, and any backslash left outside strings and prefixed names is
refused (fail closed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyoxigraph

from kgteam.tools.types import ToolError, UnsafeQueryError

__all__ = [
    "FORBIDDEN_KEYWORDS",
    "GuardedQuery",
    "analyse_query",
    "guard_query",
    "set_limit_offset",
    "sparql_iri",
    "sparql_literal",
]

FORBIDDEN_KEYWORDS = frozenset(
    {"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "SERVICE", "WITH", "USING"}
)
_FORMS = ("SELECT", "CONSTRUCT", "DESCRIBE", "ASK")

# One alternative per lexical class; order matters (long strings before short ones).
_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n\r]*)
  | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
               |'(?:[^'\\\n\r]|\\.)*'|"(?:[^"\\\n\r]|\\.)*")
  | (?P<iri><[^<>"{}|^`\\\s]*>)
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
        if kind == "string" and text[0] not in "'\"":
            kind = "other"
        out.append(_Token(kind, text, m.start(), m.end(), depth))
        if text == "{":
            depth += 1
        elif text == "}":
            depth = max(0, depth - 1)
    return out


def _scan(query: str) -> list[_Token]:
    toks = _tokens(query)
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
    return toks


_CODEPOINT_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def _decode_codepoint_escapes(query: str) -> str:
    def replace(m: re.Match[str]) -> str:
        code = int(m.group(1) or m.group(2), 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise ToolError(f"invalid codepoint escape {m.group()!r}")
        return chr(code)

    return _CODEPOINT_ESCAPE.sub(replace, query)


def _refuse_stray_backslashes(toks: list[_Token]) -> None:
    for t in toks:
        if "\\" in t.text and t.kind not in ("string", "pname"):
            raise UnsafeQueryError(f"unexpected backslash in {t.text!r}: escapes are only allowed in strings")


def _refuse_federation(query: str) -> None:
    """Refuse ``SERVICE`` as a real SPARQL parser reads the query, not as the word scan does.

    The scan and Oxigraph's parser can disagree about where tokens end (``trueSERVICE<...>``,
    ``SERVICE:name`` after an empty prefix), so whenever the letters appear at all (after escapes
    are decoded, the keyword cannot appear otherwise) the query is parsed with rdflib's SPARQL 1.1
    parser, without evaluating anything, and its algebra is searched for a service pattern. A
    query that parser cannot read is refused too: the two parsers must agree before it runs.
    """
    if "service" not in query.lower():
        return
    import sys

    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(limit, 5000))
        algebra = translateQuery(parseQuery(query)).algebra
    except Exception:  # noqa: BLE001 - any failure to read it means we cannot vouch for it
        raise UnsafeQueryError("the query mentions SERVICE and could not be checked by a second SPARQL parser; "
                               "federated queries are not allowed: run_sparql only queries this KG") from None
    finally:
        sys.setrecursionlimit(limit)
    if _has_service(algebra, 0):
        raise UnsafeQueryError("SERVICE (federated query to another endpoint) is not allowed: run_sparql only "
                               "queries this KG")


def _has_service(node: object, depth: int) -> bool:
    if depth > 200:
        return True  # deeper than any honest query: fail closed
    name = getattr(node, "name", None)
    if isinstance(name, str) and "service" in name.lower():
        return True
    if isinstance(node, dict):
        return any(_has_service(v, depth + 1) for v in node.values())
    if isinstance(node, list | tuple):
        return any(_has_service(v, depth + 1) for v in node)
    return False


def _parse_check(query: str) -> None:
    try:
        pyoxigraph.Store().query(query)
    except SyntaxError as e:
        raise ToolError(f"SPARQL syntax error: {e}") from None
    except Exception as e:  # e.g. an unsupported custom function: a bad query, not a crash
        raise ToolError(f"SPARQL could not be prepared: {e}") from None


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


def analyse_query(query: str, limit: int | None) -> GuardedQuery:
    """Refuse unsafe queries, check syntax, and bound the result size of SELECT/CONSTRUCT/DESCRIBE."""
    if not isinstance(query, str) or not query.strip():
        raise ToolError("empty SPARQL query")
    query = _decode_codepoint_escapes(query)
    if "\x00" in query:
        raise UnsafeQueryError("query contains a NUL character")
    toks = _scan(query)
    _refuse_stray_backslashes(toks)
    _refuse_federation(query)
    _parse_check(query)
    form = _form(toks)
    if form == "ASK":
        return GuardedQuery(query, form, None, 0)
    limit_tok, offset_tok, insert_at = _modifiers(toks)
    offset = int(float(offset_tok.text)) if offset_tok else 0
    text = query
    effective: int | None
    if limit_tok is not None:
        current = int(float(limit_tok.text))
        effective = current
        if limit is not None and current > limit:
            text = query[: limit_tok.start] + str(limit) + query[limit_tok.end :]
            effective = limit
    elif limit is not None:
        text = query[:insert_at].rstrip() + f"\nLIMIT {limit}\n" + query[insert_at:]
        effective = limit
    else:
        effective = None
    if text is not query:
        _parse_check(text)  # the rewrite itself must stay valid
    return GuardedQuery(text, form, effective, offset)


def guard_query(query: str, limit: int | None) -> str:
    """Return the query to execute (LIMIT added or lowered); raise UnsafeQueryError/ToolError."""
    return analyse_query(query, limit).text


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
