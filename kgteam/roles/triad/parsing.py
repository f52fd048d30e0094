"""The generalist's deterministic parser: exact label spotting plus cue-based hop analysis.

Mentions are the longest spans of the question that the label index knows *exactly* (a
``[bracketed]`` span, as MetaQA marks topic entities, is taken as given). The hop count comes
from how many distinct relation cues the question holds, or a "same/together/co-" marker that
means one relation walked twice (co-stars, films by the same director).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kgteam.protocols.payloads import AnswerTypeName, TriplePattern
from kgteam.roles.lexical import (
    RELATION_CUES,
    STOPWORDS,
    WH_WORDS,
    content_distance,
    cue_hits,
    same_relation_marked,
    tokens,
)
from kgteam.tools.types import LabelHit

if TYPE_CHECKING:
    from kgteam.tools.toolbox import Toolbox

_WORD = re.compile(r"[\w'-]+", re.UNICODE)
_BRACKET = re.compile(r"\[([^\[\]]+)\]")
_LEADING_OK = {"the", "a", "an"}
# cue groups: relation families the lexicon knows (synonymous keys collapse to one group)
CUE_GROUPS: dict[str, frozenset[str]] = {
    "direct": frozenset(RELATION_CUES["direct"]),
    "act": frozenset(RELATION_CUES["star"]),
    "write": frozenset(RELATION_CUES["writ"]),
    "genre": frozenset(RELATION_CUES["genre"]),
    "year": frozenset(RELATION_CUES["year"]),
    "language": frozenset(RELATION_CUES["languag"]),
    "tag": frozenset(RELATION_CUES["tag"]),
    "rating": frozenset(RELATION_CUES["rating"]),
    "votes": frozenset(RELATION_CUES["vote"]),
}
_NUMBER_GROUPS = {"rating", "votes"}


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_WORD.findall(text))


@dataclass
class Mention:
    text: str
    start: int  # token span in the question
    end: int
    hits: list[LabelHit]
    bracketed: bool = False


@dataclass
class ParsePlan:
    mention: Mention | None
    hops: int
    answer_type: AnswerTypeName
    phrases: list[str]  # relation phrase per hop, nearest the entity first
    same_relation: bool = False

    def patterns(self) -> list[TriplePattern]:
        subject = self.mention.text if self.mention else "?e"
        out, prev = [], subject
        for i in range(self.hops):
            var = f"?x{i + 1}"
            out.append(TriplePattern(subject=prev, predicate=self.phrases[i] if i < len(self.phrases) else "?", object=var))
            prev = var
        return out


def _word_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _WORD.finditer(text)]


def is_exact_hit(hit: LabelHit, span_text: str) -> bool:
    """The label index knows `span_text` exactly (shared with the contextualizer's title check)."""
    return hit.exact or normalise(hit.matched) == normalise(span_text) or normalise(hit.label) == normalise(span_text)


async def spot_mentions(question: str, tools: Toolbox, *, max_ngram: int = 10, k: int = 5) -> list[Mention]:
    """Longest exactly-known spans, best first (bracketed, then longer, then capitalised)."""
    found: list[Mention] = []
    for m in _BRACKET.finditer(question):
        text = m.group(1).strip()
        hits = await tools["search_entities"](text, k=k)
        before = len(_WORD.findall(question[: m.start()]))
        n = len(_WORD.findall(text))
        found.append(Mention(text, before, before + n, hits, bracketed=True))
    if found:
        return found
    spans = _word_spans(question)
    words = [question[s:e] for s, e in spans]
    lower = [w.lower() for w in words]
    covered = [False] * len(words)
    for n in range(min(max_ngram, len(words)), 0, -1):
        for i in range(0, len(words) - n + 1):
            if any(covered[i : i + n]):
                continue
            first, last = lower[i], lower[i + n - 1]
            # a stopword may bound a title when written capitalised mid-sentence ("Stand by Me")
            first_ok = first in _LEADING_OK or (i > 0 and words[i][:1].isupper())
            last_ok = i + n - 1 > 0 and words[i + n - 1][:1].isupper()
            if (first in STOPWORDS or first in WH_WORDS) and not first_ok:
                continue
            if (last in STOPWORDS or last in WH_WORDS) and not last_ok:
                continue
            if n == 1 and (_is_cue_word(first) or (len(first) < 3 and not _short_title(words[i], i))):
                continue
            text = question[spans[i][0] : spans[i + n - 1][1]]
            hits = await tools["search_entities"](text, k=k)
            exact = [h for h in hits if is_exact_hit(h, text)]
            if exact:
                found.append(Mention(text, i, i + n, hits))
                for j in range(i, i + n):
                    covered[j] = True
    found.sort(key=lambda m: (-(m.end - m.start), 0 if m.text[:1].isupper() else 1, -len(m.text)))
    return found


def _short_title(word: str, position: int) -> bool:
    """"FM", "M", "Up" mid-sentence: short words count as names only when capitalised."""
    return position > 0 and word[:1].isupper() and word not in ("I", "A")


def _is_cue_word(word: str) -> bool:
    return any(word.startswith(c) for cues in CUE_GROUPS.values() for c in cues)


def strip_brackets(question: str) -> str:
    return _BRACKET.sub(lambda m: m.group(1), question)


def analyse(question: str, mention: Mention | None, *, force_hops: int | None = None) -> ParsePlan:
    """Hop count, answer type and the relation phrase of each hop, from cue words alone."""
    q = strip_brackets(question)
    qt = tokens(q)
    span = (mention.start, mention.end) if mention else (len(qt), len(qt))
    groups: dict[str, list[int]] = {}
    for name, cues in CUE_GROUPS.items():
        hits = [h.position for h in cue_hits(qt, set(cues)) if not span[0] <= h.position < span[1]]
        if hits:
            groups[name] = hits
    if "votes" in groups and "rating" in groups:  # "popularity rating": votes
        groups.pop("rating")
    same = same_relation_marked(q)
    ordered = sorted(groups, key=lambda g: min(content_distance(qt, p, span) for p in groups[g]))
    if force_hops:
        hops = force_hops
    elif len(groups) >= 2 or (len(groups) == 1 and same):
        hops = 2
    else:
        hops = 1
    phrases = [qt[min(groups[g], key=lambda p: content_distance(qt, p, span))] for g in ordered]
    if hops == 2 and len(phrases) == 1:
        phrases = phrases * 2
    if not phrases:
        phrases = ["?relation"] * hops
    answer_group = ordered[-1] if ordered else ""
    if "how many" in q.lower():
        atype: AnswerTypeName = "number"
    elif answer_group == "year":
        atype = "date"
    elif answer_group in _NUMBER_GROUPS:
        atype = "number"
    else:
        atype = "resource"
    return ParsePlan(mention, hops, atype, phrases[:hops], same_relation=same and len(groups) <= 1)
