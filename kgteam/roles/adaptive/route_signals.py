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
from kgteam.roles.semantic.mentions import is_exact_hit
from kgteam.roles.semantic.path_planning import Limits, plan_paths, words_left
from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, singular, tokenize
from kgteam.roles.semantic.topics import find_topics
from kgteam.tools.types import ToolError

# English words that ask about the present or the latest state of things
TIME_WORDS = frozenset(["current", "currently", "now", "nowadays", "today", "latest", "recent", "recently", "presently", "this-year"])
_YEAR = re.compile(r"\b(1[5-9]\d\d|2[01]\d\d)\b")
_DETERMINERS = frozenset(["the", "a", "an"])
_IRI = re.compile(r"^[a-z][a-z0-9+.-]*:[^\s<>\"{}|^`\\]*$", re.I)
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


@dataclass
class RouteSignals:
    topics: list[str] = field(default_factory=list)  # KG mentions written as names
    unlinked_names: list[str] = field(default_factory=list)  # names the KG does not know
    words_left: list[str] = field(default_factory=list)  # words the best relation path leaves unexplained
    best_score: float | None = None  # the semantic layer's score of that path (> 0: the words name it)
    unknown_things: list[str] = field(default_factory=list)  # lower-case things the KG does not know ("the opera house")
    kinds_known: list[str] = field(default_factory=list)  # words naming a class of the KG ("region", "river")
    time_words: list[str] = field(default_factory=list)
    years_after_snapshot: list[int] = field(default_factory=list)
    best_path: str = ""

    def decide(self) -> tuple[RouteName, str]:
        timely = self.time_words or self.years_after_snapshot
        when = ", ".join([*self.time_words, *map(str, self.years_after_snapshot)])
        if not self.topics:
            if self.unlinked_names and self.kinds_known and not timely:
                # documents → KG: the documents say what the name is, the KG what the question asks of it
                return "both", (f"the KG does not know {', '.join(map(repr, self.unlinked_names[:3]))}, but it knows "
                                f"{', '.join(map(repr, self.kinds_known[:3]))}: documents name it, the KG finishes")
            why = "names nothing the KG knows" + (f" ({', '.join(self.unlinked_names[:3])})" if self.unlinked_names else "")
            return "web", why + (f"; asks about {when}" if timely else "")
        if timely:
            return "both", f"the KG knows {self.topics[0]!r}, but the question asks about {when}"
        if self.unlinked_names:
            return "both", (f"the KG knows {self.topics[0]!r}, not {', '.join(map(repr, self.unlinked_names[:3]))}")
        if self.unknown_things:
            return "both", (f"the KG knows {self.topics[0]!r}, not {', '.join(map(repr, self.unknown_things[:3]))}")
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
        if signals.unlinked_names:
            signals.kinds_known = await kg_class_words(question, tools)
        return signals
    kept = await plan_paths(layer, question, topics, hops=hops, limits=Limits())
    best = max(kept, key=lambda p: p.score, default=None)
    if best is None:
        return signals
    signals.best_path = best.explain()
    signals.best_score = best.score
    signals.words_left = words_left(question, topics, best)
    signals.unknown_things = await unknown_things(question, signals.words_left, tools,
                                                  named_at={t.start for t in topics})
    return signals


async def _known_label(word: str, tools: Any) -> list[str]:
    """IRIs the KG names exactly ``word`` (or its singular)."""
    out: list[str] = []
    for form in dict.fromkeys([word, singular(word)]):
        try:
            hits = await tools["search_entities"](form, k=5)
        except (ToolError, KeyError):
            return out
        out += [h.iri for h in hits if is_exact_hit(h, form) and h.iri not in out]
    return out


async def _is_class(iri: str, tools: Any) -> bool:
    try:
        res = await tools["run_sparql"](f"ASK {{ ?s <{RDF_TYPE}> <{iri}> }}")
    except (ToolError, KeyError):
        return False
    return bool(res.boolean)


async def kg_class(word: str, tools: Any) -> str | None:
    """The class of the KG named ``word`` (or its singular), if there is one."""
    for iri in (await _known_label(word, tools))[:3]:
        if _IRI.match(iri) and await _is_class(iri, tools):
            return iri
    return None


async def is_member(iri: str, klass: str, tools: Any) -> bool:
    if not (_IRI.match(iri) and _IRI.match(klass)):
        return False
    try:
        res = await tools["run_sparql"](f"ASK {{ <{iri}> <{RDF_TYPE}> <{klass}> }}")
    except (ToolError, KeyError):
        return False
    return bool(res.boolean)


async def kg_class_words(question: str, tools: Any) -> list[str]:
    """The question's lower-case words that name a class of the KG ("which *region*")."""
    found = []
    for tok in tokenize(question):
        w = tok.lower
        if not tok.text.islower() or w in STOPWORDS or w in WH_WORDS or len(w) < 3 or w in found:
            continue
        if await kg_class(w, tools) is not None:
            found.append(w)
    return found


async def unknown_things(question: str, left: list[str], tools: Any, *, named_at: set[int] | frozenset[int] = frozenset()
                         ) -> list[str]:
    """Lower-case things the question names with a determiner ("the *opera house* in X") that no
    relation explains and the KG has no entity or class of that name for: unknown, as an unknown
    name is. A noun right before a name the KG knows says what that name is ("the movie *Heat*"):
    not a thing of its own (``named_at``: the token positions where KG names start)."""
    tokens = tokenize(question)
    low = [t.lower for t in tokens]
    out = []
    for i, w in enumerate(low):
        if w not in _DETERMINERS:
            continue
        run = []
        j = i + 1
        while j < len(tokens) and len(run) < 3 and tokens[j].text.islower() and low[j] not in STOPWORDS \
                and low[j] not in WH_WORDS:
            run.append(low[j])
            j += 1
        if j in named_at:  # "the movie Heat": the noun names what Heat is; "the observatory above X": a thing
            run = run[:-1]
        if not run or not all(x in left for x in run):
            continue
        thing = " ".join(run)
        if await _known_label(thing, tools) or await _known_label(run[-1], tools):
            continue
        out.append(thing)
    return out
