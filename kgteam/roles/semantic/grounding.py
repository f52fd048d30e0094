"""When an answer counts as grounded: one rule for every playbook's answering role."""

from __future__ import annotations

from collections.abc import Sequence

from kgteam.protocols.evidence import EvidenceTriple, RelationMatch
from kgteam.protocols.payloads import AnswerValue
from kgteam.roles.semantic.paths import walked_back


def grounded_by(triples: Sequence[EvidenceTriple], values: Sequence[AnswerValue],
                matches: Sequence[RelationMatch]) -> bool:
    """Grounded: the evidence reaches every answer, along relations the question's words named.

    A step no word named is allowed only as the walk back of the step before it ("bridges that
    share a builder": the builder relation, then the same relation in reverse).
    """
    if not triples or not values:
        return False
    ends = {t.object for t in triples} | {t.subject for t in triples}
    if not all((v.iri or v.label) in ends for v in values[:25]):
        return False
    if not matches:
        return True  # no scorer reading to compare with (a path the model chose outside the ranking)
    back = set(walked_back([(m.predicate, m.direction) for m in matches]))
    return all(m.words or number in back for number, m in enumerate(matches, start=1))
