"""Deterministic relation ranking for Triad: lexical cues, their position, and chain coherence.

* hop 1: a relation whose cue sits next to the topic mention ("films *directed by* X") scores
  higher than one near the question word ("*which actors*").
* a 2-hop chain (r0, r1) scores high when both relations have cues at different places, r0 near
  the mention and r1 where the question asks; or, with a "same / together / co-" marker, when it
  walks one relation there and back (co-stars, films by the same director).
Relations with no cue fall back to fuzzy similarity between question and relation name.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgteam.roles.lexical import (
    after_wh,
    content_distance,
    cue_hits,
    fuzzy_similarity,
    relation_cues,
    same_relation_marked,
    tokens,
)
from kgteam.roles.triad.parsing import CUE_GROUPS, normalise, strip_brackets


@dataclass
class QuestionView:
    text: str
    toks: list[str]
    span: tuple[int, int]  # mention token span
    same_marked: bool
    groups: int  # distinct relation-cue families outside the mention

    @classmethod
    def build(cls, question: str, mention: str | None) -> QuestionView:
        plain = strip_brackets(question)
        toks = tokens(plain)
        span = (len(toks), len(toks))
        if mention:
            mt = tokens(mention)
            for i in range(len(toks) - len(mt) + 1):
                if mt and toks[i : i + len(mt)] == mt:
                    span = (i, i + len(mt))
                    break
        groups = 0
        for cues in CUE_GROUPS.values():
            if any(not span[0] <= h.position < span[1] for h in cue_hits(toks, set(cues))):
                groups += 1
        return cls(plain, toks, span, same_relation_marked(plain), groups)

    def hits(self, names: list[str]) -> list[tuple[int, float]]:
        return [(h.position, h.weight) for h in cue_hits(self.toks, relation_cues(names))
                if not self.span[0] <= h.position < self.span[1]]


def _fuzzy(q: QuestionView, names: list[str]) -> float:
    return 0.3 * max((fuzzy_similarity(normalise(q.text), normalise(n.replace("_", " "))) for n in names), default=0.0)


def hop1_score(q: QuestionView, names: list[str]) -> float:
    hits = q.hits(names)
    if not hits:
        return _fuzzy(q, names)
    best = 0.0
    for pos, w in hits:
        d = content_distance(q.toks, pos, q.span)
        s = w * (1.0 + 0.5 / max(d, 1))
        if after_wh(q.toks, pos) and d > 1:
            s -= 0.25
        best = max(best, s)
    return best


def pair_score(q: QuestionView, r0: list[str], r1: list[str], *, same_relation: bool) -> float:
    """Coherence of the chain r0 then r1 with the question."""
    h0, h1 = q.hits(r0), q.hits(r1)
    if same_relation:
        return (1.0 if h0 else 0.2) + (1.2 if q.same_marked else 0.0) + (0.5 if q.groups <= 1 else 0.0)
    if not h0 and not h1:
        return _fuzzy(q, r0) + _fuzzy(q, r1)
    best = 0.0
    for p0, w0 in h0 or [(None, 0.0)]:
        for p1, w1 in h1 or [(None, 0.0)]:
            if p0 is not None and p0 == p1:
                continue
            s = 0.0
            d0 = d1 = 99
            if p0 is not None:
                d0 = content_distance(q.toks, p0, q.span)
                s += w0 * (1.0 + 0.5 / max(d0, 1)) + (0.1 if p0 < q.span[0] else 0.0)
            if p1 is not None:
                d1 = content_distance(q.toks, p1, q.span)
                s += w1 * (1.0 + (0.5 if after_wh(q.toks, p1) else 0.0))
            if p0 is not None and p1 is not None and d0 < d1:
                s += 0.25
            best = max(best, s)
    if q.same_marked:
        best -= 1.0
    return best
