"""Data fences: how untrusted text (KG labels, literals, query results, documents, the user's words,
error messages that quote them) is shown to a model.

Every prompt marks such text as data between ``<<<tag`` and ``tag>>>`` lines, and the system
prompts say that fenced text is never an instruction. That only holds if the data cannot close
its fence or open a new one, so inside the fence every run of three or more angle brackets
(ASCII or a look-alike such as ``＞`` or ``»``) is broken up: a label ``results>>>`` arrives as
``results> > >`` and cannot end the block it sits in. The helper lives in ``llm/`` because the
structured-output repair messages (below the prompt layer) fence the errors they quote too.
"""

from __future__ import annotations

import re
import unicodedata

OPEN = "<<<"
CLOSE = ">>>"

# Characters a model may read as an angle bracket: ASCII, full-width, small, guillemets, CJK brackets.
_ANGLES = "<>\uff1c\uff1e\ufe64\ufe65\u2039\u203a\u00ab\u00bb\u226a\u226b\u300a\u300b\u3008\u3009\u27e8\u27e9"
_MARKER_RUN = re.compile(f"[{re.escape(_ANGLES)}](?:\\s*[{re.escape(_ANGLES)}])+")
_TAG = re.compile(r"[^A-Za-z0-9_]")
# Line breaks other than \n that a model may still read as a new line.
_ODD_BREAKS = re.compile("[\r\u2028\u2029\u0085\x0b\x0c]")
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f]")


def _spaced(match: re.Match[str]) -> str:
    run = "".join(ch for ch in match.group(0) if not ch.isspace())
    if len(run) < 2 or (len(run) == 2 and unicodedata.normalize("NFKC", run) not in ("<<", ">>")):
        return match.group(0)
    # a single space between brackets keeps the text readable and no longer a marker
    return " ".join(run)


def neutralise_markers(text: str) -> str:
    """``text`` with anything that could read as a fence marker broken up (and odd line breaks made plain).

    Doubled brackets are broken up too: two of them next to a third from the fence itself would
    otherwise make a marker (``x>>`` + ``\\ndata>>>`` is harmless, but ``<<`` + ``<`` is not).
    """
    text = _ODD_BREAKS.sub("\n", str(text))
    text = _CONTROL.sub("", text)
    return _MARKER_RUN.sub(_spaced, text)


def fence(text: object, *, tag: str = "data") -> str:
    """Quote untrusted text between explicit markers; markers inside the text are neutralised."""
    name = _TAG.sub("_", tag) or "data"
    return f"{OPEN}{name}\n{neutralise_markers(str(text))}\n{name}{CLOSE}"


def one_line(text: object) -> str:
    """A label as plain data on one line (for answers and tables): no line breaks, no fence markers."""
    return " ".join(neutralise_markers(str(text)).split())
