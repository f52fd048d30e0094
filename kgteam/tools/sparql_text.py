"""A query's text as the guard reads it: tokens, the canonical text both parsers see, and where
each piece of that text came from in what the user wrote (for messages that say line and column).

Canonical text: codepoint escapes (``\\u0041``) are decoded where Oxigraph decodes them — in strings
and IRIs — and a decoded quote or backslash inside a string is written back as its two-character
escape, so ``"a\\u0022b"`` is the literal ``a"b`` and no string can end somewhere unexpected.
A prefixed name with escapes (``ex:a\\-b``, SPARQL 1.1's PN_LOCAL_ESC) is checked against the
grammar and written as the full IRI it names (``<http://ex/a-b>``): rdflib pre-processes escapes
everywhere and Oxigraph only in strings and IRIs, so neither parser may see one, and an IRI is one
terminal both read alike. A backslash anywhere else is refused. Comments are dropped.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from kgteam.tools.types import ToolError, UnsafeQueryError

__all__ = ["SCHEME", "Source", "Token", "canonical_text", "tokens", "TOKEN_RE"]

SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")

# One alternative per lexical class; order matters (long strings before short ones). Strings and
# IRIs may hold codepoint escapes (Oxigraph decodes them there); prefixed names may hold the
# grammar's ``\-`` escapes (written out as IRIs); nothing else may.
TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n\r]*)
  | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
               |'(?:[^'\\\n\r]|\\.)*'|"(?:[^"\\\n\r]|\\.)*")
  | (?P<iri><(?:[^<>"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>)
  | (?P<var>[?$][A-Za-z0-9_\u00b7\u00c0-\uffff]+)
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<bnode>_:[^\s{}()\[\],;.]+)
  | (?P<pname>(?:[A-Za-z_\u00c0-\uffff][\w\-.\u00b7\u00c0-\uffff]*?)?:
               (?:\\.|[^\s{}()\[\],;\\.]|\.+(?=\\.|[^\s{}()\[\],;\\.]))*)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<punct>\^\^|\|\||&&|!=|<=|>=|[{}()\[\],;.*+/|^!=<>?\-])
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    start: int
    end: int
    depth: int  # brace depth *before* the token


def tokens(query: str) -> list[Token]:
    out: list[Token] = []
    depth = 0
    for m in TOKEN_RE.finditer(query):
        kind = m.lastgroup or "other"
        if kind in ("ws", "comment"):
            continue
        text = m.group()
        out.append(Token(kind, text, m.start(), m.end(), depth))
        if text == "{":
            depth += 1
        elif text == "}":
            depth = max(0, depth - 1)
    return out


# ----------------------------------------------------------------------------- where things are


class Source:
    """The query as written and the texts derived from it, to say where an offset in the latest
    text came from ("line 2, column 14")."""

    def __init__(self, query: str, anchors: list[tuple[int, int]], canonical: str) -> None:
        self.query = query
        self._anchors = anchors  # (offset in the canonical text, offset in the query), ascending
        self._texts = [canonical]

    def derive(self, text: str) -> None:
        """``text`` is the latest text: the previous one with one stretch added or replaced."""
        self._texts.append(text)

    def origin(self, pos: int, text: str | None = None) -> int:
        """The offset in the query of offset ``pos`` in ``text`` (default: the latest text)."""
        texts = self._texts
        i = len(texts) - 1 if text is None else max(i for i, t in enumerate(texts) if t == text)
        for newer, older in zip(texts[i:0:-1], texts[i - 1 :: -1], strict=False):
            pos = _back(pos, newer, older)
        j = bisect.bisect_right(self._anchors, (pos, len(self.query))) - 1
        if j < 0:
            return 0
        canon_at, query_at = self._anchors[j]
        return min(len(self.query), query_at + (pos - canon_at))

    def where(self, pos: int, text: str | None = None) -> str:
        return where(self.query, self.origin(pos, text))

    def near(self, pos: int, text: str | None = None) -> str:
        at = self.origin(pos, text)
        line = self.query[at:].split("\n", 1)[0]
        return line[:30] + ("…" if len(line) > 30 else "")


def where(query: str, at: int) -> str:
    line = query.count("\n", 0, at) + 1
    return f"line {line}, column {at - (query.rfind(chr(10), 0, at) + 1) + 1}"


def _back(pos: int, newer: str, older: str) -> int:
    """Offset ``pos`` of ``newer`` in ``older``, which differs from it in one stretch."""
    prefix = len(os.path.commonprefix([newer, older]))
    if pos < prefix:
        return pos
    room = min(len(newer), len(older)) - prefix
    suffix = len(os.path.commonprefix([newer[::-1][:room], older[::-1][:room]]))
    if pos >= len(newer) - suffix:
        return pos - (len(newer) - len(older))
    return prefix


# ----------------------------------------------------------------------------- canonical text

_CODEPOINT = r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})"
_IRI_ESCAPE = re.compile(_CODEPOINT)
_STRING_ESCAPE = re.compile(_CODEPOINT + r"|\\(.)", re.DOTALL)
_ECHARS = "tbnrf\"'\\"
_REESCAPE = {'"': '\\"', "'": "\\'", "\\": "\\\\", "\n": "\\n", "\r": "\\r"}
_IRI_FORBIDDEN = re.compile(r'[<>"{}|^`\\\x00-\x20]')

# SPARQL 1.1's PN_PREFIX and PN_LOCAL (section 19.8), to check a prefixed name that holds escapes.
_BASE = ("A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d\u2070-\u218f"
         "\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff")
_CHARS = _BASE + "_\\-0-9\u00b7\u0300-\u036f\u203f-\u2040"
_PN_ESCAPABLE = "_~.-!$&'()*+,;=/?#@%"
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_PN_PREFIX = re.compile(f"(?:[{_BASE}](?:[{_CHARS}.]*[{_CHARS}])?)?")
_PN_LOCAL = re.compile(f"(?:[{_BASE}_:0-9]|{_PLX})(?:(?:[{_CHARS}.:]|{_PLX})*(?:[{_CHARS}:]|{_PLX}))?")
_PN_UNESCAPE = re.compile(r"\\(.)")
_BARE_PERCENT = re.compile("%(?![0-9A-Fa-f]{2})")


def _codepoint(m: re.Match[str]) -> str:
    code = int(m.group(1) or m.group(2), 16)
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise UnsafeQueryError(f"invalid codepoint escape {m.group()!r}: it names no character")
    return chr(code)


def _canonical_string(text: str, at: Callable[[], str]) -> str:
    quote = text[:3] if text[:3] in ("'''", '"""') else text[0]

    def replace(m: re.Match[str]) -> str:
        if m.group(3) is None:
            ch = _codepoint(m)
            return _REESCAPE.get(ch, ch)
        if m.group(3) not in _ECHARS:
            raise ToolError(f"SPARQL syntax error at {at()}: invalid escape {m.group()!r} in a string (a string may "
                            "hold \\t \\b \\n \\r \\f \\\" \\' \\\\ and \\uXXXX)")
        return m.group()

    return quote + _STRING_ESCAPE.sub(replace, text[len(quote) : -len(quote)]) + quote


def _canonical_iri(text: str, at: Callable[[], str]) -> str:
    body = _IRI_ESCAPE.sub(_codepoint, text[1:-1])
    bad = _IRI_FORBIDDEN.search(body)
    if bad:
        raise UnsafeQueryError(f"an escape in IRI {text[:100]!r} at {at()} decodes to {bad.group()!r}, which IRIs "
                               "cannot hold")
    return f"<{body}>"


def _escaped_pname(text: str, prefixes: dict[str, str], at: str) -> str:
    """``ex:a\\-b`` as the IRI it names, ``<http://ex/a-b>`` (the escapes decoded, per the grammar)."""
    prefix, _, local = text.partition(":")
    if not _PN_PREFIX.fullmatch(prefix) or not _PN_LOCAL.fullmatch(local):
        bad = re.search(r"\\(?![_~.\-!$&'()*+,;=/?#@%])(.?)", local, re.DOTALL)
        if bad and bad.group(1) == ":":  # a draft's form (W3C qname-escape-01); the final grammar refuses it
            raise ToolError(f"SPARQL syntax error at {at}: {text[:80]!r} escapes a colon, which SPARQL 1.1 does not "
                            f"allow; a colon needs no escape in a prefixed name: write {text.replace(chr(92) + ':', ':')[:80]}")
        if bad:
            raise ToolError(f"SPARQL syntax error at {at}: {text[:80]!r} holds the escape {bad.group()!r}; a "
                            f"prefixed name may escape only {_PN_ESCAPABLE} (or write the full IRI in <...>)")
        raise ToolError(f"SPARQL syntax error at {at}: {text[:80]!r} is not a valid prefixed name")
    ns = prefixes.get(prefix)
    if ns is None:
        raise ToolError(f"SPARQL syntax error at {at}: the prefix {prefix}: of {text[:80]!r} is not declared; add "
                        f"PREFIX {prefix}: <...> before the query")
    if _IRI_FORBIDDEN.search(ns):  # a PREFIX IRI read as part of one token (PREFIX p:<...>) is unchecked
        raise ToolError(f"SPARQL syntax error at {at}: the prefix IRI <{ns[:80]}> of {text[:80]!r} holds a "
                        "character IRIs cannot hold")
    if not SCHEME.match(ns):
        raise UnsafeQueryError(f"the prefixed name {text[:80]!r} at {at} has escapes and its prefix IRI <{ns}> is "
                               "relative: write the full IRI in <...> instead")
    decoded = _PN_UNESCAPE.sub(lambda m: m.group(1), local)
    if _BARE_PERCENT.search(decoded):
        raise ToolError(f"SPARQL syntax error at {at}: {text[:80]!r} names an IRI with a '%' that starts no %XX "
                        "code, which IRIs cannot hold; write %25 for a percent sign")
    return f"<{ns}{decoded}>"


def canonical_text(query: str) -> tuple[str, Source]:
    """The query with every escape resolved and comments dropped (see the module doc), and where
    each part of it came from."""
    parts: list[str] = []
    anchors: list[tuple[int, int]] = []
    size = 0
    prefixes: dict[str, str] = {}
    declaring: str | None = None  # after PREFIX: "name", then the prefix awaiting its IRI
    for m in TOKEN_RE.finditer(query):
        kind, text = m.lastgroup or "other", m.group()
        at = m.start()
        if kind == "comment":
            text = " "
        elif kind == "string" and text[0] in "'\"":
            text = _canonical_string(text, functools.partial(where, query, at))
        elif kind == "iri":
            text = _canonical_iri(text, functools.partial(where, query, at))
        elif kind == "pname" and "\\" in text:
            text = _escaped_pname(text, prefixes, where(query, at))
            kind = "iri"
        elif "\\" in text:
            near = query[at : at + 24]
            hint = ""
            with contextlib.suppress(ToolError):
                hint = f" (it reads {_IRI_ESCAPE.sub(_codepoint, near)!r})"
            raise UnsafeQueryError(f"unexpected backslash at {where(query, at)} in {near!r}{hint}: escapes are only "
                                   "allowed in strings, IRIs and prefixed names; write the character itself")
        if kind not in ("ws", "comment"):
            declaring = _declare(declaring, kind, text, prefixes)
        anchors.append((size, at))
        parts.append(text)
        size += len(text)
    canonical = "".join(parts)
    return canonical, Source(query, anchors, canonical)


def _declare(declaring: str | None, kind: str, text: str, prefixes: dict[str, str]) -> str | None:
    """Follow ``PREFIX p: <iri>`` declarations: the state after this token (None: not in one,
    ``_NAME``: after PREFIX, else the prefix awaiting its IRI)."""
    if kind == "word" and text.upper() == "PREFIX":
        return _NAME
    if declaring == _NAME and kind == "pname":
        name, _, rest = text.partition(":")
        if rest.startswith("<") and rest.endswith(">"):  # PREFIX p:<iri> without a space reads as one name
            prefixes[name] = rest[1:-1]
            return None
        return None if rest else name
    if declaring not in (None, _NAME) and kind == "iri":
        prefixes[declaring] = text[1:-1]
    return None


_NAME = "\x00"  # no prefix is called that
