"""The kind of answer a question asks documents for: a number, a date, or a name.

The semantic layer's shape reading says it (``read_shape().answer_kind``); the KG tells it which of
the question's words name a relation holding numbers or dates ("the *population* of X" asks for a
number where the KG stores populations as numbers), so a document answer is checked against what
the KG would give for the same words. Month and weekday names are closed-class English words of
time: in a document they are dates, never the name of a place or a person.
"""

from __future__ import annotations

import re
from typing import Any

from kgteam.protocols.query_graph import AnswerKindName
from kgteam.roles.semantic.shape import read_shape
from kgteam.roles.semantic.shaped import value_kind
from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, normalise, tokenize
from kgteam.tools.types import ToolError

MONTHS = frozenset(["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"])
WEEKDAYS = frozenset(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])
_IRI = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def is_time_name(text: str) -> bool:
    """A month or a weekday ("August", "in May"): a date word, not a name."""
    words = normalise(text).split()
    return bool(words) and all(w in MONTHS or w in WEEKDAYS for w in words)


async def kg_literal_relations(question: str, tools: Any, *, per_word: int = 3) -> dict[str, AnswerKindName]:
    """The KG relations named by the question's words whose values are numbers or dates, by label."""
    out: dict[str, AnswerKindName] = {}
    words = [t.lower for t in tokenize(question) if t.lower not in STOPWORDS and t.lower not in WH_WORDS
             and t.text.islower() and len(t.lower) > 2]
    for word in dict.fromkeys(words):
        try:
            hits = await tools["search_relations"](word, k=per_word)
        except (ToolError, KeyError):
            return out
        for h in hits:
            if h.label in out or word not in normalise(h.label).split() or not _IRI.match(h.iri):
                continue
            try:
                res = await tools["run_sparql"](f"SELECT ?o WHERE {{ ?s <{h.iri}> ?o }} LIMIT 1")
            except (ToolError, KeyError):
                continue
            for row in res.rows[:1]:
                term = row.get("o")
                if term is not None:
                    kind = value_kind(term.model_dump(exclude_none=True))
                    if kind in ("number", "date"):
                        out[h.label] = kind
    return out


async def asked_kind(question: str, tools: Any) -> AnswerKindName:
    """What the question asks for, read with the KG's literal relations; "who" asks for someone,
    whatever relation its verb shares a word with ("who *founded* X" beside a founding date)."""
    low = [t.lower for t in tokenize(question)]
    wh = next((w for w in low if w in WH_WORDS), None)
    if wh in ("who", "whom", "whose"):
        return read_shape(question).answer_kind
    return read_shape(question, await kg_literal_relations(question, tools)).answer_kind
