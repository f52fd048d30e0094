"""The generalist's deterministic parse: the semantic layer's best relation path as a parse plan."""

from __future__ import annotations

from dataclasses import dataclass

from kgteam.protocols.payloads import AnswerTypeName, RankedPath, RelationPaths, TriplePattern
from kgteam.roles.semantic import Mention

_NUMERIC = ("integer", "decimal", "double", "float", "int", "long", "short")
_DATES = ("date", "gYear", "dateTime", "time")


@dataclass
class ParsePlan:
    mention: Mention | None
    hops: int
    answer_type: AnswerTypeName
    phrases: list[str]  # the words that named each hop's relation, nearest the entity first

    def patterns(self) -> list[TriplePattern]:
        subject = self.mention.text if self.mention else "?e"
        out, prev = [], subject
        for i in range(self.hops):
            var = f"?x{i + 1}"
            out.append(TriplePattern(subject=prev, predicate=self.phrases[i] if i < len(self.phrases) else "?",
                                     object=var))
            prev = var
        return out


def answer_type_of(path: RankedPath | None) -> AnswerTypeName:
    """What the path's end values are: literals by datatype, IRIs as resources."""
    if path is None or not path.answers:
        return "resource"
    first = path.answers[0]
    if first.get("type") != "literal":
        return "resource"
    dt = (first.get("datatype") or "").rsplit("#", 1)[-1]
    if any(dt.startswith(d) for d in _DATES):
        return "date"
    if any(n in dt.lower() for n in _NUMERIC):
        return "number"
    return "string"


def plan_from_paths(paths: RelationPaths, mentions: list[Mention], *, force_hops: int | None = None,
                    max_hops: int = 3) -> ParsePlan:
    """The best path (of ``force_hops`` length when a retry asks for it) read as a parse."""
    candidates = paths.of_length(force_hops) if force_hops else paths.paths
    best = candidates[0] if candidates else None
    mention = next((m for m in mentions if best and m.text == best.mention), mentions[0] if mentions else None)
    if best is None:
        hops = max(1, min(force_hops or 1, max_hops))
        return ParsePlan(mention, hops, "resource", ["?relation"] * hops)
    hops = min(best.hops, max_hops)
    phrases = [s.words or s.label for s in best.steps][:hops]
    return ParsePlan(mention, hops, answer_type_of(best), phrases)
