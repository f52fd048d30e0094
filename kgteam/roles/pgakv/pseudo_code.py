"""The pseudo-graph as code: Turtle the model writes, parsed by the RDF parser kgteam ships (pyoxigraph).

Going through a graph language with a real parser keeps triples well formed; a parse error is
reported with its line and column so it can be repaired or sent back as a retry signal. Names
are words, not KG identifiers: ``:Ada_Lovelace`` reads "Ada Lovelace"; a blank node (``_:x``,
``[]``) is an unknown the KG must fill.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import pyoxigraph as ox

from kgteam.protocols.payloads import PseudoTriple

PREFIX = "urn:kgteam:pg:"
_DECLARES_DEFAULT = re.compile(r"@prefix\s+:\s*<|PREFIX\s+:\s*<", re.IGNORECASE)
MAX_CODE_CHARS = 8000
ANSWER = "answer"  # the blank node ``_:answer`` marks what the question asks for


class PseudoCodeError(ValueError):
    """The model's Turtle does not parse (the message names the line), or holds no triple."""


def words_of(term: ox.NamedNode | ox.BlankNode | ox.Literal, unknowns: dict[str, str]) -> tuple[str, bool]:
    """(words, is_literal) of one parsed term; blank nodes become ``?x1``, ``?x2`` … in order met."""
    if isinstance(term, ox.BlankNode):
        if term.value == ANSWER:
            return "?answer", False
        return unknowns.setdefault(term.value, f"?x{len(unknowns) + 1}"), False
    if isinstance(term, ox.Literal):
        return " ".join(term.value.split()), True
    iri = term.value
    local = iri[len(PREFIX):] if iri.startswith(PREFIX) else re.split(r"[/#:]", iri.rstrip("/#"))[-1]
    return " ".join(unquote(local).replace("_", " ").split()), False


def parse_pseudo_graph(code: str, *, max_triples: int = 40) -> list[PseudoTriple]:
    """Pseudo-triples of a Turtle text (the default prefix ``:`` is declared when the text does not)."""
    text = code.strip()
    if text.startswith("```"):  # a fenced block: keep its body
        text = re.sub(r"^```[a-zA-Z]*\n?|```$", "", text).strip()
    if not text:
        raise PseudoCodeError("the Turtle is empty: write at least one triple such as `:Subject :relation :Object .`")
    if len(text) > MAX_CODE_CHARS:
        raise PseudoCodeError(f"the Turtle is longer than {MAX_CODE_CHARS} characters")
    header = "" if _DECLARES_DEFAULT.search(text) else f"@prefix : <{PREFIX}> .\n"
    try:
        parsed = list(ox.parse(header + text, format=ox.RdfFormat.TURTLE))
    except SyntaxError as exc:
        raise PseudoCodeError(_shift_lines(str(exc), 1 if header else 0)) from None
    unknowns: dict[str, str] = {}
    out: list[PseudoTriple] = []
    for t in parsed[:max_triples]:
        s, _ = words_of(t.subject, unknowns)  # type: ignore[arg-type]
        p, _ = words_of(t.predicate, unknowns)
        o, literal = words_of(t.object, unknowns)  # type: ignore[arg-type]
        if s and p and o:
            end = "object" if o == "?answer" else "subject" if s == "?answer" else None
            out.append(PseudoTriple(subject=s, predicate=p, object=o, object_is_literal=literal, answer_end=end))
    if not out:
        raise PseudoCodeError("the Turtle parses but holds no triple")
    return out


def _shift_lines(message: str, by: int) -> str:
    """The parser's message with line numbers of the model's own text (our prefix line removed)."""
    if not by:
        return message
    return re.sub(r"line (\d+)", lambda m: f"line {max(1, int(m.group(1)) - by)}", message)
