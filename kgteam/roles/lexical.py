"""Deterministic text signals that carry the pipeline when the model's output is unusable.

Relation ranking compares the question with each relation's name through word stems and a
small cue lexicon ("act in" ~ starred_actors, "written" ~ written_by). It is deliberately
simple, fast and explainable; a strong model adds value on top of it, a weak one cannot break it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words(
    "a an the of in on at by for to from with and or is are was were be been being do does did "
    "this that these those it its as into about than then there their them they he she his her "
    "me my we our you your i has have had can could would should will shall may might also "
    "same share shares together some any all each name list tell give show"
)
WH_WORDS = _words("what which who whom whose when where how")
# words that say "the same relation twice" (movie -> director -> other movies; co-stars)
SAME_RELATION_MARKERS = re.compile(
    r"\b(?:same|together|also|share[sd]?|co-\w+|co\s+\w+|costar\w*|cowr\w*|codirect\w*)\b", re.IGNORECASE
)

_TOKEN = re.compile(r"[\w'-]+", re.UNICODE)
_SUFFIXES = ("ings", "ing", "ers", "ors", "ies", "ied", "ed", "es", "er", "or", "s")

# relation-name stem -> cue stems found in questions (a cue matches a question token by prefix)
RELATION_CUES: dict[str, tuple[str, ...]] = {
    "direct": ("direct", "helm", "filmmaker", "codirect"),
    "star": ("act", "star", "appear", "cast", "perform", "costar", "co-star"),
    "actor": ("act", "star", "appear", "cast", "perform", "costar", "co-star"),
    "writ": ("writ", "wrote", "screenwrit", "screenplay", "script", "author", "creator", "penned", "cowr", "co-wr"),
    "genre": ("genre", "type", "kind", "sort", "categor", "style"),
    "year": ("year", "when", "releas", "date"),
    "releas": ("year", "when", "releas", "date"),
    "languag": ("languag", "spoken", "speak", "tongue"),
    "tag": ("tag", "describ", "topic", "about", "word", "term", "keyword", "subject"),
    "rating": ("rating", "rate", "rated", "score", "imdb"),
    "vote": ("vote", "popular", "famous"),
}
# cues that are decisive for their relation (outweigh a weaker cue of another relation)
STRONG_CUES = {"popular": 1.5, "famous": 1.5}


def tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


def stem(word: str) -> str:
    w = word.lower().strip("'-")
    for suf in _SUFFIXES:
        if len(w) - len(suf) >= 4 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def relation_words(iri_or_label: str) -> list[str]:
    """Words of a relation name: ``.../r/starred_actors`` -> ["starred", "actors"]."""
    local = re.split(r"[/#]", iri_or_label.rstrip("/#"))[-1]
    local = re.sub(r"([a-z])([A-Z])", r"\1 \2", local)
    return [w for w in re.split(r"[\W_]+", local.lower()) if w]


def relation_cues(relation_names: list[str]) -> set[str]:
    """Cue stems for a relation: its own content-word stems plus lexicon synonyms."""
    cues: set[str] = set()
    for name in relation_names:
        for word in relation_words(name):
            if word in STOPWORDS or word in ("has", "is", "imdb"):
                continue
            cues.add(stem(word))
            for key, syn in RELATION_CUES.items():
                if word.startswith(key):
                    cues.update(syn)
    return cues


@dataclass(frozen=True)
class CueHit:
    position: int  # token index in the question
    weight: float


def cue_hits(question_tokens: list[str], cues: set[str]) -> list[CueHit]:
    hits = []
    for i, tok in enumerate(question_tokens):
        if tok.startswith("co-") and len(tok) > 5:
            tok = tok[3:]
        for cue in cues:
            if tok.startswith(cue) or (len(cue) >= 5 and stem(tok) == stem(cue)):
                hits.append(CueHit(i, STRONG_CUES.get(cue, 1.0)))
                break
    return hits


def content_distance(question_tokens: list[str], a: int, span: tuple[int, int]) -> int:
    """Number of content words between token ``a`` and the mention span (stopwords skipped)."""
    start, end = span
    if start <= a < end:
        return 0
    lo, hi = (a + 1, start) if a < start else (end, a)
    return 1 + sum(1 for t in question_tokens[lo:hi] if t not in STOPWORDS)


def after_wh(question_tokens: list[str], pos: int) -> bool:
    """Is the token at ``pos`` the thing asked for ("which actors", "what are the genres", "when")?"""
    if question_tokens[pos] in WH_WORDS:
        return True
    seen = 0
    for j in range(pos - 1, -1, -1):
        t = question_tokens[j]
        if t in WH_WORDS:
            return True
        if t not in STOPWORDS:
            seen += 1
            if seen >= 2:
                return False
    return False


def fuzzy_similarity(a: str, b: str) -> float:
    """0..1 token-set similarity, a weak signal for relations with no cue in the lexicon."""
    return fuzz.token_set_ratio(a.lower(), b.lower()) / 100.0


def same_relation_marked(question: str) -> bool:
    return SAME_RELATION_MARKERS.search(question) is not None
