"""What the router sees before it decides: time words, the KG's entities, and what they leave over.

A question goes to the KG when it names KG entities and the relations around them explain its
other words; to the web when it names nothing the KG knows, or asks about a time after the KG's
snapshot; to both when the KG knows its entity but some of its words or names are still
unexplained (the graph can narrow the answer, the text must finish it). The only words written
here are general English words of time; relation meaning comes from the KG's labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kgteam.protocols.payloads import RouteName
from kgteam.roles.adaptive.reading import contains_name, question_names
from kgteam.roles.semantic import SemanticLayer
from kgteam.roles.semantic.path_planning import Limits, plan_paths, words_left
from kgteam.roles.semantic.text import tokenize
from kgteam.roles.semantic.topics import find_topics

# English words that ask about the present or the latest state of things
TIME_WORDS = frozenset(["current", "currently", "now", "nowadays", "today", "latest", "recent", "recently", "presently", "this-year"])
_YEAR = re.compile(r"\b(1[5-9]\d\d|2[01]\d\d)\b")


@dataclass
class RouteSignals:
    topics: list[str] = field(default_factory=list)  # KG mentions written as names
    unlinked_names: list[str] = field(default_factory=list)  # names the KG does not know
    words_left: list[str] = field(default_factory=list)  # words the best relation path leaves unexplained
    best_score: float | None = None  # the semantic layer's score of that path (> 0: the words name it)
    time_words: list[str] = field(default_factory=list)
    years_after_snapshot: list[int] = field(default_factory=list)
    best_path: str = ""

    def decide(self) -> tuple[RouteName, str]:
        timely = self.time_words or self.years_after_snapshot
        when = ", ".join([*self.time_words, *map(str, self.years_after_snapshot)])
        if not self.topics:
            why = "names nothing the KG knows" + (f" ({', '.join(self.unlinked_names[:3])})" if self.unlinked_names else "")
            return "web", why + (f"; asks about {when}" if timely else "")
        if timely:
            return "both", f"the KG knows {self.topics[0]!r}, but the question asks about {when}"
        if self.unlinked_names:
            return "both", (f"the KG knows {self.topics[0]!r}, not {', '.join(map(repr, self.unlinked_names[:3]))}")
        if self.best_score is None or self.best_score <= 0:
            left = f" ({', '.join(map(repr, self.words_left[:3]))})" if self.words_left else ""
            return "both", f"the KG knows {self.topics[0]!r}, but no relation near it is what the question asks{left}"
        return "kg", f"the KG knows {self.topics[0]!r} and {self.best_path or 'its relations'} explains the question"

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v}


def time_words(question: str) -> list[str]:
    low = [t.lower for t in tokenize(question)]
    found = [w for w in low if w in TIME_WORDS]
    found += [f"{a} {b}" for a, b in zip(low, low[1:], strict=False) if a == "this" and b == "year"]
    return found


def years_after(question: str, snapshot_year: int | None) -> list[int]:
    if snapshot_year is None:
        return []
    return [int(y) for y in _YEAR.findall(question) if int(y) > snapshot_year]


async def route_signals(question: str, tools: Any, layer: SemanticLayer, *, snapshot_year: int | None = None,
                        hops: int = 2) -> RouteSignals:
    """Link the question to the KG the way KERAG's planner does (mention spotting, then the
    relations within ``hops`` of the entities, scored by the semantic layer)."""
    signals = RouteSignals(time_words=time_words(question), years_after_snapshot=years_after(question, snapshot_year))
    topics = [t for t in await find_topics(question, tools, exact_only=True) if t.firm]
    names = question_names(question)
    # a written name counts as known only when a KG mention covers it whole
    covered = [n for n in names if any(contains_name(t.text, n) for t in topics)]
    signals.unlinked_names = [n for n in names if n not in covered and not any(contains_name(n, t.text) for t in topics
                                                                                 if len(t.text) >= len(n))]
    # a KG mention inside a longer unknown name ("Presidents" in "The Martyred Presidents") is not that name
    topics = [t for t in topics if not any(contains_name(n, t.text) and len(n) > len(t.text)
                                           for n in signals.unlinked_names)]
    if signals.unlinked_names:  # beside an unknown name, an everyday word or a bare number is not the subject
        topics = [t for t in topics if any(c.isupper() for c in t.text) and not t.text.strip().isdigit()]
    signals.topics = [t.text for t in topics]
    if not topics:
        return signals
    kept = await plan_paths(layer, question, topics, hops=hops, limits=Limits())
    best = max(kept, key=lambda p: p.score, default=None)
    if best is None:
        return signals
    signals.best_path = best.explain()
    signals.best_score = best.score
    signals.words_left = words_left(question, topics, best)
    return signals
