"""Text from a KG shown as data, never as layout: one sanitiser for every display boundary.

A KG is written by someone else. A label may hold newlines and a line that reads like the
program's own output ("SYSTEM: ...", a forged ``results>>>`` fence), terminal control codes,
bidi overrides or a megabyte of text; an IRI quoted in a load error may hold ``\\u0001`` or a
newline that splits the message. Whatever shows such text to a person or a client (the terminal,
``--json``, the web chat and its API, MCP) passes it through :func:`display_text` (one string),
:func:`display_data` (JSON-like data) or :func:`display_answer` (an :class:`Answer`): line breaks
are folded into spaces, other control and invisible format characters are written as escapes
(seen, not obeyed), and the length is capped. Stored answers and what roles read stay as they
are: only what is shown is changed.
"""

from __future__ import annotations

import re
from typing import Any

from kgteam.protocols.payloads import STORED, Answer

LABEL_CHARS = 500  # a label, an IRI, a value: longer is not a name but a payload
TEXT_CHARS = 4000  # an answer's text, a query, an error, a document snippet
LONG_KEYS = frozenset({"text", "sparql", "error", "message", "snippet", "reasoning", "summary", "question",
                       "content", "problem"})

# C0/C1 controls (line breaks are folded before), DEL, bidi overrides and isolates, invisible
# separators and the BOM: characters that steer a terminal or reorder text instead of showing.
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def display_text(text: object, limit: int = LABEL_CHARS) -> str:
    """``text`` on one line: line breaks and runs of white space folded into one space, control
    and bidi characters escaped (``\\x01``, ``\\u202e``), at most ``limit`` characters (``…`` at the cut)."""
    folded = " ".join(str(text).split())  # str.split breaks on \n \r \v \f \x1c-\x1f \x85 \u2028 \u2029 too
    shown = _HIDDEN.sub(_escape, folded)
    return shown if len(shown) <= limit else shown[: max(limit - 1, 0)] + "…"


def display_data(data: Any, *, limit: int = LABEL_CHARS, long_limit: int = TEXT_CHARS) -> Any:
    """JSON-like ``data`` (dicts, lists, scalars) with every string passed through :func:`display_text`;
    values under the keys in :data:`LONG_KEYS` may be ``long_limit`` characters, the others ``limit``."""
    def walk(value: Any, cap: int) -> Any:
        if isinstance(value, str):
            return display_text(value, cap)
        if isinstance(value, dict):
            return {k: walk(v, long_limit if k in LONG_KEYS else cap) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v, cap) for v in value]
        return value

    return walk(data, limit)


def display_answer(answer: Answer) -> Answer:
    """A copy of ``answer`` fit to show: every string in it through :func:`display_data`."""
    return Answer.model_validate(display_data(answer.model_dump(mode="json")), context=STORED)
