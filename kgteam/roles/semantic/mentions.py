"""Topic mentions: the longest spans of the question that the KG's label index knows exactly."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, Token, normalise, tokenize
from kgteam.tools.types import LabelHit, ToolError

if TYPE_CHECKING:
    from kgteam.tools.toolbox import Toolbox

_LEADING_OK = {"the", "a", "an"}


@dataclass
class Mention:
    text: str
    start: int  # token span in the question (see :func:`text.tokenize`)
    end: int
    hits: list[LabelHit] = field(default_factory=list)

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)

    def exact_iris(self) -> list[str]:
        """IRIs whose label or alias is this mention exactly (search order kept, no repeats)."""
        out: list[str] = []
        for h in self.hits:
            if is_exact_hit(h, self.text) and h.iri not in out:
                out.append(h.iri)
        return out


def is_exact_hit(hit: LabelHit, span_text: str) -> bool:
    """The label index knows ``span_text`` exactly (as a label or an alias)."""
    want = normalise(span_text)
    return hit.exact or normalise(hit.matched) == want or normalise(hit.label) == want


def _short_name(token: Token, position: int) -> bool:
    """One- or two-letter words count as names only when capitalised mid-sentence ("M", "Up")."""
    return position > 0 and token.text[:1].isupper() and token.text not in ("I", "A")


async def spot_mentions(question: str, tools: Toolbox, *, max_ngram: int = 10, k: int = 5) -> list[Mention]:
    """Longest exactly-known spans, best first (longer, then capitalised, then longer text).

    A span may not start or end with a function word unless that word is capitalised mid-sentence
    (a title such as "Stand by Me"), nor be a lone possessive marker.
    """
    tokens = tokenize(question)
    covered = [False] * len(tokens)
    found: list[Mention] = []
    lower = [t.lower for t in tokens]
    for n in range(min(max_ngram, len(tokens)), 0, -1):
        for i in range(0, len(tokens) - n + 1):
            if any(covered[i : i + n]):
                continue
            first, last = lower[i], lower[i + n - 1]
            first_ok = first in _LEADING_OK or (i > 0 and tokens[i].text[:1].isupper())
            last_ok = i + n - 1 > 0 and tokens[i + n - 1].text[:1].isupper()
            if (first in STOPWORDS or first in WH_WORDS or first.startswith("'")) and not first_ok:
                continue
            if (last in STOPWORDS or last in WH_WORDS or last.startswith("'")) and not last_ok:
                continue
            if n == 1 and len(first) < 3 and not _short_name(tokens[i], i):
                continue
            text = question[tokens[i].start : tokens[i + n - 1].end]
            try:
                hits = await tools["search_entities"](text, k=k)
            except ToolError:
                continue
            if any(is_exact_hit(h, text) for h in hits):
                found.append(Mention(text, i, i + n, hits))
                for j in range(i, i + n):
                    covered[j] = True
    found.sort(key=lambda m: (-(m.end - m.start), 0 if m.text[:1].isupper() else 1, -len(m.text)))
    return found


def mention_in(question: str, text: str, iris: list[str]) -> Mention:
    """A mention known by its text and already-linked IRIs, placed in the question when it occurs there."""
    words = [t.lower for t in tokenize(text)]
    tokens = [t.lower for t in tokenize(question)]
    start = end = len(tokens)
    for i in range(len(tokens) - len(words) + 1):
        if words and tokens[i : i + len(words)] == words:
            start, end = i, i + len(words)
            break
    hits = [LabelHit(iri=iri, label=text, matched=text, score=1.0, exact=True) for iri in iris]
    return Mention(text, start, end, hits)
