"""When an answer counts as grounded: one rule for every playbook's answering role."""

from __future__ import annotations

from collections.abc import Sequence

from kgteam.protocols.evidence import EvidenceTriple, RelationMatch
from kgteam.protocols.payloads import AnswerValue
from kgteam.roles.semantic.paths import walked_back


def grounded_by(triples: Sequence[EvidenceTriple], values: Sequence[AnswerValue],
                matches: Sequence[RelationMatch] = ()) -> bool:
    """Grounded: the KG's triples reach every answer. Whether the question's words named the
    relations they walk is another matter, said apart (:func:`inferred_steps`): a right answer
    along an unnamed relation is backed by the KG all the same."""
    if not triples or not values:
        return False
    ends = {t.object for t in triples} | {t.subject for t in triples}
    ends |= {_as_value(t.object) for t in triples if t.object_is_literal}
    return all((v.iri or v.label) in ends or (v.iri is None and _as_value(v.label) in ends) for v in values[:25])


def _as_value(text: str) -> str:
    """A literal as it reads: "410.0" and "410" are one number (an answer shows the short form)."""
    try:
        number = float(text)
    except (TypeError, ValueError):
        return text
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)


def inferred_steps(matches: Sequence[RelationMatch]) -> int:
    """How many relations of the reading no word of the question named (the walk back of the step
    before it, "bridges that share a builder", needs no word of its own)."""
    back = set(walked_back([(m.predicate, m.direction) for m in matches]))
    return sum(1 for number, m in enumerate(matches, start=1) if not m.words and number not in back)
