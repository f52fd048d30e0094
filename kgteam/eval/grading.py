"""Three-way grading (accurate / hallucinated / missing) and groundedness.

Rules decide first because they are free, deterministic and auditable; an optional LLM judge
with written rules (``kgteam/prompts/judge.txt``) decides only what the rules cannot, such as a
free-text answer that names none of the gold items verbatim. Every grade records its path in
``decided_by`` so a report can say how much of a score rests on the judge.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from kgteam.eval.datasets import GoldAnswer
from kgteam.eval.metrics import (
    NOT_ENOUGH_INFO,
    Predicted,
    SetScores,
    gold_verdict,
    is_missing_text,
    match_item,
    normalize,
    parse_boolean,
    parse_verdict,
    set_scores,
    split_answer_text,
    text_contains,
)
from kgteam.protocols.evidence import EvidenceTriple

if TYPE_CHECKING:
    from kgteam.llm.base import ChatModel
    from kgteam.tools.kg_tools import KGTools

GradeName = Literal["accurate", "hallucinated", "missing", "ungraded"]
_PLACEHOLDER = re.compile(r"\{(question|reference|answer)\}")
JUDGE_PROMPT = Path(__file__).resolve().parent.parent / "prompts" / "judge.txt"


class Grading(BaseModel):
    """Grade of one answer plus the set metrics computed on the way."""

    grade: GradeName
    decided_by: str  # "rule:<how>" or "llm-judge"
    reason: str = ""
    exact_match: bool = False
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    hits1: bool = False
    judge_calls: int = 0
    judge_tokens: int = 0


class JudgeVerdict(BaseModel):
    grade: Literal["accurate", "hallucinated", "missing"]
    reason: str = ""


def predicted_items(text: str, values: Sequence[Predicted]) -> tuple[list[Predicted], bool]:
    """The answer's items: structured values when the team gave them, else split text.

    Returns ``(items, structured)``; structured items are graded by rules alone.
    """
    if values:
        return list(values), True
    return [Predicted(label=p) for p in split_answer_text(text)], False


def _scored(grade: GradeName, how: str, scores: SetScores, reason: str = "") -> Grading:
    return Grading(grade=grade, decided_by=how, reason=reason, exact_match=scores.exact_match,
                   precision=scores.precision, recall=scores.recall, f1=scores.f1, hits1=scores.hits1)


def _match_kinds(items: Sequence[Predicted], golds: Sequence[GoldAnswer]) -> str:
    kinds = sorted({k for p in items for g in golds if (k := match_item(p, g))})
    return "+".join(kinds) or "set"


def abstained(text: str, values: Sequence[object], status: str) -> bool:
    """The answer says nothing: status unknown/refused, or no values and an empty/"I don't know" text."""
    return status in {"unknown", "refused"} or (not values and is_missing_text(text))


def grade_empty_gold(text: str, values: Sequence[Predicted], *, status: str = "answered") -> tuple[Grading, bool]:
    """A question whose gold is *empty* (the KG holds no answer): abstaining is the right answer.

    An abstention is accurate (``rule:empty-gold-abstained``), any stated answer, values or text,
    is hallucinated (``rule:empty-gold-stated``: a made-up answer to an unanswerable question is
    wrong), an error is missing. Always sure: no judge is asked.
    """
    if status == "error":
        return _verdict_grading("missing", "rule:missing", f"status={status}"), True
    if abstained(text, values, status):
        return _verdict_grading("accurate", "rule:empty-gold-abstained", "the KG holds no answer"), True
    return _verdict_grading("hallucinated", "rule:empty-gold-stated", "the KG holds no answer, one was stated"), True


def grade_by_rules(
    text: str, values: Sequence[Predicted], golds: Sequence[GoldAnswer], *, status: str = "answered",
    answer_kind: str | None = None,
) -> tuple[Grading, bool]:
    """Rule grade and whether the rules were *sure* (False: a judge may overrule).

    Missing: status unknown/refused/error, or no values and empty/"I don't know" text.
    Accurate: every gold item matched and every predicted item correct (all-items rule).
    ``answer_kind="empty"``: the gold is known to be empty, see :func:`grade_empty_gold`.
    """
    if answer_kind == "empty":
        return grade_empty_gold(text, values, status=status)
    verdict = gold_verdict(golds)
    if verdict is not None:
        return grade_verdict(text, values, verdict, status=status)
    items, structured = predicted_items(text, values)
    scores = set_scores(items, golds) if golds else SetScores(0, 0, 0, False, False, 0, 0)
    if status == "error" or abstained(text, values, status):
        return _scored("missing", "rule:missing", scores, f"status={status}"), True
    if not golds:
        return _scored("ungraded", "rule:no-gold", scores, "dataset has no gold answers"), True
    if scores.exact_match:
        return _scored("accurate", f"rule:{_match_kinds(items, golds)}", scores), True
    if structured:
        return _scored("hallucinated", "rule:set-mismatch", scores,
                       f"{scores.matched_gold}/{len(golds)} gold matched, "
                       f"{len(items) - scores.correct_pred} wrong"), True
    # Free text: yes/no questions are decided by the leading yes/no.
    gold_bools = [parse_boolean(g.label) for g in golds if g.label is not None and normalize(g.label) in {"true", "false"}]
    if len(golds) == 1 and gold_bools:
        said = parse_boolean(text)
        if said is not None:
            verdict: GradeName = "accurate" if said == gold_bools[0] else "hallucinated"
            return _scored(verdict, "rule:boolean", scores), True
    contained = [text_contains(text, g) for g in golds]
    if all(contained):
        wrong = [p for p in items if not any(match_item(p, g) for g in golds) and
                 not any(text_contains(p.label, g) for g in golds)]
        if not wrong:
            scores = SetScores(1.0, 1.0, 1.0, True, True, len(golds), len(items))
            return _scored("accurate", "rule:contains", scores), True
        return _scored("accurate", "rule:contains-extra", scores, "all gold items named, with more text"), False
    return _scored("hallucinated", "rule:no-match", scores,
                   f"{sum(contained)}/{len(golds)} gold items named in the text"), False


def grade_verdict(text: str, values: Sequence[Predicted], gold: str, *, status: str = "answered") -> tuple[Grading, bool]:
    """Claim items: three classes, where "not enough info" is an answer, not an abstention.

    The answer's verdict is its first value's label, else its text's leading words (True/yes read
    as supported, False/no as refuted). "I don't know", an empty text and status ``unknown`` or
    ``refused`` read as "not enough info": accurate when that is the gold, missing otherwise (an
    abstention on a decidable claim). An error is missing; a wrong verdict is hallucinated; a text
    with no verdict is hallucinated but unsure (the judge may read it).
    """
    if status == "error":
        return _verdict_grading("missing", "rule:missing", f"status={status}"), True
    said = NOT_ENOUGH_INFO if status in {"unknown", "refused"} else parse_verdict(values[0].label if values else text)
    if said is None:
        return _verdict_grading("hallucinated", "rule:verdict-unread", "no verdict in the answer"), False
    if said == gold:
        return _verdict_grading("accurate", "rule:verdict", f"said {said}"), True
    if said == NOT_ENOUGH_INFO:
        return _verdict_grading("missing", "rule:verdict-abstained", f"said {said}, gold {gold}"), True
    return _verdict_grading("hallucinated", "rule:verdict", f"said {said}, gold {gold}"), True


def _verdict_grading(grade: GradeName, how: str, reason: str) -> Grading:
    hit = grade == "accurate"
    return Grading(grade=grade, decided_by=how, reason=reason, exact_match=hit, precision=float(hit),
                   recall=float(hit), f1=float(hit), hits1=hit)


def _reference(golds: Sequence[GoldAnswer]) -> str:
    return "\n".join(f"- {g.display()}" for g in golds)


async def judge(
    model: ChatModel, question: str, text: str, golds: Sequence[GoldAnswer], *, prompt_path: Path = JUDGE_PROMPT
) -> tuple[JudgeVerdict | None, int, int]:
    """Ask the LLM judge; returns (verdict or None when it never produced valid JSON, calls, tokens)."""
    from kgteam.llm.fencing import fence
    from kgteam.llm.structured import structured_call

    template = prompt_path.read_text(encoding="utf-8")
    # one pass, so a question that contains "{answer}" cannot pull the answer in twice
    values = {"question": fence(question, tag="question"), "reference": fence(_reference(golds), tag="reference"),
              "answer": fence(text, tag="answer")}
    prompt = _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
    outcome = await structured_call(model, [{"role": "user", "content": prompt}], JudgeVerdict, role="judge",
                                    max_repairs=1)
    return outcome.value, outcome.attempts, outcome.prompt_tokens + outcome.completion_tokens


def guess_correct(guess: Sequence[Predicted], golds: Sequence[GoldAnswer], *,
                  answer_kind: str | None = None) -> bool | None:
    """Whether an abstention's best guess, had it been stated, would have been graded accurate.

    None when there is no guess or no gold to grade it by. On an empty-gold question every guess
    is wrong. Rules only (a guess is a list of values, which the rules always decide).
    """
    if not guess or (not golds and answer_kind != "empty"):
        return None
    grading, _ = grade_by_rules("", guess, golds, answer_kind=answer_kind)
    return grading.grade == "accurate"


async def grade_answer(
    question: str, text: str, values: Sequence[Predicted], golds: Sequence[GoldAnswer], *,
    status: str = "answered", judge_model: ChatModel | None = None, answer_kind: str | None = None,
) -> Grading:
    """Rules first; the judge (when given) decides only where the rules were not sure."""
    grading, sure = grade_by_rules(text, values, golds, status=status, answer_kind=answer_kind)
    if sure or judge_model is None:
        return grading
    verdict, calls, tokens = await judge(judge_model, question, text, golds)
    if verdict is None:
        grading.decided_by += "(judge-invalid)"
        grading.judge_calls, grading.judge_tokens = calls, tokens
        return grading
    out = grading.model_copy(update={
        "grade": verdict.grade, "decided_by": "llm-judge", "reason": verdict.reason,
        "judge_calls": calls, "judge_tokens": tokens,
    })
    if verdict.grade == "accurate":
        out.exact_match, out.precision, out.recall, out.f1, out.hits1 = True, 1.0, 1.0, 1.0, True
    return out


# ------------------------------------------------------------------------------- groundedness

class GroundednessCheck(BaseModel):
    cited: int = 0
    existing: int = 0
    contains_answer: bool = False
    grounded: bool = False
    errors: list[str] = []


def ask_query(t: EvidenceTriple) -> str:
    """``ASK`` whether an evidence triple is in the KG (a literal object is compared by its text)."""
    from kgteam.tools.sparql_guard import sparql_iri, sparql_literal

    s, p = sparql_iri(t.subject), sparql_iri(t.predicate)
    if t.object_is_literal:
        return f"ASK {{ {s} {p} ?o . FILTER(STR(?o) = {sparql_literal(t.object)}) }}"
    return f"ASK {{ {s} {p} {sparql_iri(t.object)} }}"


def _triple_mentions(t: EvidenceTriple, item: Predicted, kg_labels: dict[str, str]) -> bool:
    """The triple names the answer by IRI, by its literal object, or by a label *from the KG*.

    The team's ``subject_label``/``object_label`` are never trusted: a real triple with a
    made-up label must not ground a made-up answer.
    """
    if item.iri and item.iri in (t.subject, t.object):
        return True
    label = normalize(item.label)
    if not label:
        return False
    names = [kg_labels.get(t.subject), t.object if t.object_is_literal else kg_labels.get(t.object)]
    return any(n is not None and normalize(n) == label for n in names)


async def check_groundedness(
    triples: Sequence[EvidenceTriple], answer_items: Sequence[Predicted], tools: KGTools
) -> GroundednessCheck:
    """Grounded = at least one cited triple, every cited triple exists in the KG (ASK), and one of them
    names the answer (IRI, literal object, or a label the KG itself gives the subject/object)."""
    out = GroundednessCheck(cited=len(triples))
    verified: list[EvidenceTriple] = []
    for t in triples:
        try:
            result = await tools.run_sparql(ask_query(t))
        except Exception as exc:  # an unsafe IRI or a store error: the triple is not verified
            out.errors.append(f"{type(exc).__name__}: {exc}"[:200])
            continue
        if result.boolean:
            out.existing += 1
            verified.append(t)
    iris = {t.subject for t in verified} | {t.object for t in verified if not t.object_is_literal}
    try:
        kg_labels = await tools.labels_for(sorted(iris)) if iris else {}
    except Exception as exc:  # labels unavailable: only IRIs and literal objects can name the answer
        out.errors.append(f"labels: {type(exc).__name__}: {exc}"[:200])
        kg_labels = {}
    out.contains_answer = any(_triple_mentions(t, item, kg_labels) for t in verified for item in answer_items)
    out.grounded = out.cited > 0 and out.existing == out.cited and out.contains_answer
    return out
