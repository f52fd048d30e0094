"""Generic English text handling for the path scorer: words, content units, and their order.

Only closed-class English words live here (articles, prepositions, pronouns, auxiliaries, the
question words and the few words that say "the same thing again"); no word that names a
relation of any KG. Relation meaning comes from the KG's labels and the embedder.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words(
    "a an the of in on at by for to from with and or is are was were be been being do does did done "
    "this that these those it its as into about than then there their them they he she his her him "
    "me my we our you your i has have had having can could would should will shall may might must "
    "some any all each name names list tell give show find please whose whom which what who when where "
    "how s 's ' also same share shares shared sharing other others else together too both one ones "
    "not no yes if so such very just only ever many much"
)
WH_WORDS = _words("what which who whom whose when where how")
# wh-words that carry relation meaning of their own ("where" ~ a place, "when" ~ a time)
RELATIONAL_WH = _words("where when who")
# wh-words that take a noun naming the answer's kind ("*which* club", "*what* types", "*how many* awards")
DETERMINER_WH = _words("what which whose many")
# wh-words asking for an entity, never a bare value ("who founded X" is not "the year X was founded")
ENTITY_WH = _words("who whom")
# closed-class words that say one relation is walked there and back ("bridges that *share* a builder")
SAMENESS = _words("same share shares shared sharing also else together")
_POSSESSIVE = _words("'s ' s")

_TOKEN = re.compile(r"'s\b|\w[\w'-]*", re.UNICODE)
_SUFFIXES = ("ings", "ing", "ers", "ors", "ies", "ied", "ed", "es", "er", "or", "s")


def normalise(text: str) -> str:
    """Case-folded words joined by single spaces (for comparing names)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.findall(r"[\w'-]+", text))


def stem(word: str) -> str:
    w = word.lower().strip("'-")
    for suf in _SUFFIXES:
        if len(w) - len(suf) >= 4 and w.endswith(suf):
            return w[: -len(suf)]
    return w


@dataclass(frozen=True)
class Token:
    text: str
    start: int  # character offsets in the question
    end: int

    @property
    def lower(self) -> str:
        return self.text.lower()


def tokenize(text: str) -> list[Token]:
    """Words with offsets; a possessive "'s" is a token of its own ("Ann's son" -> Ann, 's, son)."""
    out: list[Token] = []
    for m in _TOKEN.finditer(text):
        word = m.group(0)
        if word.lower().endswith("'s") and len(word) > 2:  # "Ann's" -> "Ann", "'s"
            out.append(Token(word[:-2], m.start(), m.end() - 2))
            out.append(Token(word[-2:], m.end() - 2, m.end()))
        else:
            out.append(Token(word, m.start(), m.end()))
    return out


@dataclass(frozen=True)
class Unit:
    """A piece of the question that may name a relation: a content word or two adjacent ones."""

    text: str
    positions: tuple[int, ...]  # token indexes
    order: tuple[int, int]  # (side class, distance from the mention): smaller = nearer the topic


def is_content(token: Token) -> bool:
    w = token.lower
    if w in RELATIONAL_WH:
        return True
    return w not in STOPWORDS and (len(w) > 1 or w.isdigit()) and not w.startswith("'")


def order_keys(tokens: list[Token], span: tuple[int, int]) -> list[tuple[int, int]]:
    """How near each token is to the topic, in the order relations are walked from it.

    A possessive chain right of the mention ("X 's spouse 's father") comes first, then words
    left of it, nearest first ("the father of X"), then other words right of it ("X was in ...").
    """
    start, end = span
    keys: list[tuple[int, int]] = []
    chain = end < len(tokens) and tokens[end].lower in _POSSESSIVE
    dist_right = 0
    for i, tok in enumerate(tokens):
        if start <= i < end:
            keys.append((-1, 0))
        elif i < start:
            between = sum(1 for t in tokens[i + 1 : start] if is_content(t))
            keys.append((1, between + 1))
        else:
            if is_content(tok):
                dist_right += 1
            keys.append((0 if chain else 2, dist_right))
    return keys


def content_units(question: str, span: tuple[int, int] | None,
                  exclude: Sequence[tuple[int, int]] = ()) -> tuple[list[Token], list[Unit]]:
    """Content words outside the mention, plus pairs of neighbouring ones ("jersey number").

    ``exclude`` holds the spans of other topic mentions of the same reading (a question about
    two entities): their words name entities, not relations."""
    tokens = tokenize(question)
    span = span or (len(tokens), len(tokens))
    keys = order_keys(tokens, span)
    idx = [i for i, t in enumerate(tokens) if not span[0] <= i < span[1] and is_content(t)
           and not any(a <= i < b for a, b in exclude)]
    units = [Unit(tokens[i].lower, (i,), keys[i]) for i in idx]
    for a, b in zip(idx, idx[1:], strict=False):
        # neighbours, or one "of" apart ("place of birth"), on the same side of the mention
        gap = [t.lower for t in tokens[a + 1 : b]]
        same_side = (a < span[0]) == (b < span[0])
        if same_side and (not gap or gap == ["of"]) and tokens[a].lower not in RELATIONAL_WH:
            text = " ".join([tokens[a].lower, *gap, tokens[b].lower])
            units.append(Unit(text, (a, b), min(keys[a], keys[b])))
    return tokens, units


def has_sameness(tokens: list[Token], span: tuple[int, int] | None = None) -> bool:
    """Does the question say a relation is shared ("same", "also", "co-stars", "share")?"""
    for i, t in enumerate(tokens):
        if span and span[0] <= i < span[1]:
            continue
        w = t.lower
        if w in SAMENESS or (w.startswith("co-") and len(w) > 4):
            return True
    return False


def singular(words: str) -> str:
    """English plural to singular for the last word (closed-class morphology)."""
    head, _, last = words.rpartition(" ")
    w = last
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("ches", "shes", "sses", "xes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        w = w[:-1]
    return f"{head} {w}".strip()
