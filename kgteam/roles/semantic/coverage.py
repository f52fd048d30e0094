"""Which words of a question its reading left unread: a confidence feature that needs no KG words.

A reading accounts for a question's names (the topic mentions), its shape words ("how many",
"the largest", "not"), the kind it asks for ("which *rivers*"), the classes it names, and the
words that named each relation it walks. A content word none of these explain is a part of the
question the answer ignored: "how many *major* cities are in Florida" counted every city. Such an
answer is right less often, whatever its score: the answer carries its unread words
(``ReadingSignals.unread``), the team's signal map weighs them (docs/benchmarks.md), and a person
sees which they were. Only closed-class English is used to tell content words from function words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kgteam.roles.semantic.scoring import lexical_similarity
from kgteam.roles.semantic.shape import AUXILIARIES, IMPERATIVES, ShapeReading
from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, normalise, tokenize

# words that ask, not say: "could you tell me", "what are the names of", "is there"
_ASKING = frozenset({"tell", "name", "names", "called", "there", "exist", "exists", "located", "situated",
                     "find", "found", "please", "kindly", "us", "me", "give", "list", "show", "whats"})


def unread_words(question: str, *, mentions: Sequence[Any] = (), shape: ShapeReading | None = None,
                 matches: Iterable[Any] = (), class_spans: Sequence[tuple[int, int]] = (),
                 said: Iterable[str] = ()) -> list[str]:
    """The content words of ``question`` that no part of the reading explains (see the module doc).

    ``matches``: the reading's relation matches (their ``words`` and ``label``); ``said``: other
    text the reading used (its ordering relation's label, an explanation's words)."""
    tokens = tokenize(question)
    taken: set[int] = set()
    for m in mentions:
        taken.update(range(getattr(m, "start", 0), getattr(m, "end", 0)))
    for a, b in class_spans:
        taken.update(range(a, b))
    if shape is not None:
        taken.update(shape.cue_positions)
    read: list[str] = []
    for m in matches:
        read += [getattr(m, "words", None) or "", getattr(m, "label", None) or ""]
    if shape is not None:
        # the kind's head noun names the answer's kind ("which *cities*"); a word before it ("which
        # *major* cities") is read only where a class or relation of the reading reads it
        kind = (shape.kind_words or "").split()
        read += [kind[-1] if kind else "", shape.order_words or "", shape.superlative_word or "",
                 shape.number or "", shape.compared_noun or ""]
    read += list(said)
    read_words = {w for text in read for w in normalise(text).split()}
    out: list[str] = []
    for i, t in enumerate(tokens):
        w = t.lower
        if i in taken or not w.isalpha() or len(w) < 3 or w in STOPWORDS or w in WH_WORDS or w in AUXILIARIES \
                or w in IMPERATIVES or w in _ASKING:
            continue
        if w in read_words or any(lexical_similarity(w, r) >= 1.0 for r in read_words):
            continue
        out.append(w)
    return out
