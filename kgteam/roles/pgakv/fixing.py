"""The model-free graph fixer: each pseudo-triple becomes its best-supported real triple(s), or unverified.

A pseudo-triple the KG holds itself is verified. An open term (``?x``, or the answer) is filled by
the retrieved triples that agree with its known end, sharing the best one's relation. A triple
whose known ends agree with a retrieved one but whose other end differs conflicts: it is
replaced, by the latest value when the values are dates or years (a fact that changes over
time). An open relation ("everything about X") adds the retrieved triples about X. Anything
else is unverified: kept for people to see, never stated as fact.
"""

from __future__ import annotations

import re

from kgteam.protocols.evidence import EvidenceTriple
from kgteam.protocols.payloads import (
    FixedGraph,
    FixedTriple,
    PseudoGraph,
    PseudoTriple,
    RetrievedTriple,
    VerifiedGraph,
)
from kgteam.roles.pgakv.writing import words
from kgteam.roles.semantic.scoring import lexical_similarity
from kgteam.roles.semantic.text import normalise

_DATE = re.compile(r"^\s*(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?")


def evidence_of(c: RetrievedTriple) -> EvidenceTriple:
    return EvidenceTriple(**c.model_dump(include=set(EvidenceTriple.model_fields)))


def _agrees(term: str, iri: str | None, value: str, label: str | None) -> bool:
    """Whether a pseudo-triple's end names the same thing as a real triple's end."""
    if term.startswith("?"):
        return True
    if iri:
        return iri == value
    return normalise(term) in (normalise(label or ""), normalise(value))


def _known(term: str) -> bool:
    return not term.startswith("?")


def latest(cands: list[RetrievedTriple]) -> RetrievedTriple:
    """The candidate with the latest date-like object, when every object is one; else the best scored."""
    keyed = []
    for c in cands:
        m = _DATE.match(c.object_label or c.object)
        if not m:
            return cands[0]
        keyed.append((tuple(int(g or 0) for g in m.groups()), c))
    return max(keyed, key=lambda kc: kc[0])[1]


def fix_triple(i: int, t: PseudoTriple, cands: list[RetrievedTriple], exact: bool, min_score: float
               ) -> list[FixedTriple]:
    def fixed(status: str, c: RetrievedTriple) -> FixedTriple:
        return FixedTriple(status=status, triple=evidence_of(c), pseudo=i, kg=c.kg, score=c.score)  # type: ignore[arg-type]

    s_ok = [c for c in cands if _agrees(t.subject, t.subject_iri, c.subject, c.subject_label)]
    same = [c for c in s_ok if _agrees(t.object, t.object_iri, c.object, c.object_label)
            and (_agrees(t.predicate, t.predicate_iri, c.predicate, c.predicate_label) or t.predicate.startswith("?"))]
    if exact:  # the KG holds the pseudo-triple itself: an atomic fact check needs no similarity
        hit = next((c for c in cands if (c.subject, c.predicate, c.object) == (t.subject_iri, t.predicate_iri,
                                                                              t.object_iri)), None)
        return [fixed("verified", hit)] if hit else [FixedTriple(status="verified", pseudo=i, score=1.0, triple=EvidenceTriple(
            subject=t.subject_iri or "", predicate=t.predicate_iri or "", object=t.object_iri or "",
            subject_label=t.subject, predicate_label=t.predicate, object_label=t.object))]
    if same and _known(t.subject) and _known(t.object) and not t.predicate.startswith("?"):
        return [fixed("verified", same[0])]
    if t.predicate.startswith("?"):  # everything about the known end: add what was retrieved about it
        about = [c for c in cands if c.score >= min_score and (
            (_known(t.subject) and _agrees(t.subject, t.subject_iri, c.subject, c.subject_label))
            or (_known(t.object) and _agrees(t.object, t.object_iri, c.object, c.object_label)))]
        return [fixed("added", c) for c in about]
    open_end = "object" if not _known(t.object) else "subject" if not _known(t.subject) else None
    if open_end:
        anchored = [c for c in cands if c.score >= min_score and (
            _agrees(t.subject, t.subject_iri, c.subject, c.subject_label) if open_end == "object"
            else _agrees(t.object, t.object_iri, c.object, c.object_label))]
        named = [c for c in anchored if t.predicate_iri is None or c.predicate == t.predicate_iri]
        if named:  # the relation the belief names best, by its words and by the retrieval's similarity
            best = max(named, key=lambda c: lexical_similarity(t.predicate, words(c.predicate_label or c.predicate))
                       + c.score).predicate
            return [fixed("verified", c) for c in named if c.predicate == best]
        return []
    # both ends known but no real triple holds them together: a conflicting value replaces it
    rivals = [c for c in s_ok if c.score >= min_score and c.object_is_literal == t.object_is_literal
              and (t.predicate_iri is None or c.predicate == t.predicate_iri)]
    rivals = [c for c in rivals if c.predicate == rivals[0].predicate] if rivals else []
    if rivals:
        return [fixed("replaced", latest(rivals))]
    return []


def fix_graph(graph: PseudoGraph, verified: VerifiedGraph, *, min_score: float) -> FixedGraph:
    """The deterministic fix: real triples for what the KG supports, ``unverified`` for the rest."""
    out: list[FixedTriple] = []
    seen: set[tuple[str, str, str]] = set()
    by_index = {c.pseudo: c for c in verified.checks}
    for i, t in enumerate(graph.triples):
        check = by_index.get(i)
        found = fix_triple(i, t, check.candidates if check else [], bool(check and check.exact), min_score)
        if not found:
            out.append(FixedTriple(status="unverified", pseudo=i, triple=EvidenceTriple(
                subject=t.subject_iri or t.subject, predicate=t.predicate_iri or t.predicate,
                object=t.object_iri or t.object, object_is_literal=t.object_is_literal,
                subject_label=t.subject, predicate_label=t.predicate, object_label=t.object)))
            continue
        for f in found:
            key = (f.triple.subject, f.triple.predicate, f.triple.object)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return FixedGraph(triples=out, source="fallback")
