"""Verifiability: how much of an answer's stated reasoning the KG itself bears out (FActScore-like, by rule).

An answer's ``evidence.reasoning`` is a list of statements that cite its evidence triples by
position (``t0``, ``t3``). A statement is *verified* when

1. it cites at least one triple, and every citation points at a triple of the evidence;
2. every cited triple exists in the KG (an ``ASK`` re-executed through the KG tools); and
3. every cited triple is *named* by the statement: the statement contains (as whole words, after
   the grading normalisation) the label the KG gives the triple's subject or object (the literal
   itself for a literal object). The relation's label alone is not enough: "Citizen Kane was
   directed by Orson Welles (t0)" must not be verified by a real ``(Kismet, directed by, William
   Dieterle)``. The team's own labels in the evidence are never used, so a real triple cited for a
   made-up statement does not verify it.

The answer's score is the share of its statements verified. An answer without reasoning is "not
applicable" and counted apart, never as 0 or 1. An *ungrounded verdict* is an answer whose verdict
is True/False/supported/refuted while its evidence holds no triple at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from kgteam.eval.grading import ask_query
from kgteam.eval.metrics import NOT_ENOUGH_INFO, exact_verdict, normalize
from kgteam.protocols.evidence import Evidence, EvidenceTriple

if TYPE_CHECKING:
    from kgteam.protocols.payloads import AnswerValue
    from kgteam.tools.kg_tools import KGTools

_CITATION = re.compile(r"\bt(\d+)\b")


class StatementCheck(BaseModel):
    statement: str
    cited: list[int] = Field(default_factory=list)
    verified: bool = False
    why: str = ""  # what failed: "cites nothing", "t4 is not in the evidence", "t1 not in the KG", "t2 not named"


class VerifiabilityCheck(BaseModel):
    statements: int = 0
    verified: int = 0
    score: float | None = None  # verified / statements; None when the answer has no reasoning
    checks: list[StatementCheck] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


def citations(statement: str) -> list[int]:
    """Triple positions a statement cites (``t3`` -> 3), in order, without repeats."""
    return list(dict.fromkeys(int(m.group(1)) for m in _CITATION.finditer(statement)))


def _names(statement: str, triple: EvidenceTriple, labels: dict[str, str]) -> bool:
    text = f" {normalize(statement)} "
    names = [labels.get(triple.subject), triple.object if triple.object_is_literal else labels.get(triple.object)]
    return any(n and normalize(n) and f" {normalize(n)} " in text for n in names)


async def check_verifiability(evidence: Evidence, tools: KGTools) -> VerifiabilityCheck:
    """Checks every reasoning statement of one answer against the KG (see the module docstring)."""
    out = VerifiabilityCheck(statements=len(evidence.reasoning))
    if not evidence.reasoning:
        return out
    cited_all = sorted({i for s in evidence.reasoning for i in citations(s) if 0 <= i < len(evidence.triples)})
    exists: dict[int, bool] = {}
    for i in cited_all:
        try:
            exists[i] = bool((await tools.run_sparql(ask_query(evidence.triples[i]))).boolean)
        except Exception as exc:  # an unsafe IRI or a store error: that triple is not verified
            exists[i] = False
            out.errors.append(f"t{i}: {type(exc).__name__}: {exc}"[:200])
    iris = {x for i in cited_all for t in [evidence.triples[i]]
            for x in (t.subject, *([] if t.object_is_literal else [t.object]))}
    try:
        labels = await tools.labels_for(sorted(iris)) if iris else {}
    except Exception as exc:  # no labels: nothing can be named, so nothing verifies
        out.errors.append(f"labels: {type(exc).__name__}: {exc}"[:200])
        labels = {}
    for statement in evidence.reasoning:
        check = StatementCheck(statement=statement, cited=citations(statement))
        if not check.cited:
            check.why = "cites no triple"
        elif bad := [i for i in check.cited if not 0 <= i < len(evidence.triples)]:
            check.why = f"t{bad[0]} is not in the evidence"
        elif missing := [i for i in check.cited if not exists.get(i)]:
            check.why = f"t{missing[0]} is not in the KG"
        elif unnamed := [i for i in check.cited if not _names(statement, evidence.triples[i], labels)]:
            check.why = f"t{unnamed[0]} is not named by the statement"
        else:
            check.verified = True
        out.checks.append(check)
    out.verified = sum(c.verified for c in out.checks)
    out.score = out.verified / out.statements
    return out


def answer_verdict(text: str, values: Sequence[AnswerValue]) -> str | None:
    """The verdict an answer gives when its first value or its text's first clause is one
    (True/False/yes/no/supported/refuted/not enough info), else None."""
    return exact_verdict(values[0].label if values else text)


def is_ungrounded_verdict(text: str, values: Sequence[AnswerValue], evidence: Evidence, status: str = "answered") -> bool:
    """True/False/supported/refuted said with no evidence triple behind it."""
    if status != "answered" or evidence.triples:
        return False
    verdict = answer_verdict(text, values)
    return verdict is not None and verdict != NOT_ENOUGH_INFO
