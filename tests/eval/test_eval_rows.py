"""Eval rows: a verdict's groundedness is n/a (a verdict label is never in a triple), rows carry the
route a routing team took, and ``--where`` matches JSON booleans whatever their case."""

from __future__ import annotations

from kgteam.eval.datasets import slice_by
from kgteam.eval.items import DatasetItem, GoldAnswer
from kgteam.eval.report import summarize
from kgteam.eval.runner import evaluate_item
from kgteam.protocols.payloads import Answer, AnswerValue


class _Says:
    """A team double of the runner's ``AskingTeam`` shape: always this answer."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    async def ask(self, question: str, *, session_id: str | None = None) -> Answer:
        return self.answer


async def test_a_verdicts_groundedness_is_not_applicable(atelier_kg):
    _, tools = atelier_kg
    item = DatasetItem(id="c1", question="Claim: something.", answers=[GoldAnswer(label="refuted")])
    answer = Answer(text="Refuted: the KG says otherwise.", values=[AnswerValue(label="Refuted")], status="answered",
                    confidence=0.9)
    record = await evaluate_item(item, _Says(answer), tools=tools)
    assert record.grading is not None and record.grading.grade == "accurate"
    assert record.groundedness is None
    assert summarize([record])["groundedness"] is None  # the table reads n/a, not 0.000


async def test_rows_carry_the_route(atelier_kg):
    _, tools = atelier_kg
    item = DatasetItem(id="q1", question="Who?", answers=[GoldAnswer(label="Nobody")])
    answer = Answer(text="Nobody.", values=[AnswerValue(label="Nobody")], status="answered", route="both",
                    confidence=0.9)
    record = await evaluate_item(item, _Says(answer), tools=tools)
    assert record.route == "both" and '"route":"both"' in record.model_dump_json()


def test_where_matches_a_json_boolean_case_blind():
    items = [DatasetItem(id="a", question="?", tags={"negated": True}),
             DatasetItem(id="b", question="?", tags={"negated": False}),
             DatasetItem(id="c", question="?", tags={"negated": "True"})]
    assert [x.id for x in slice_by(items, negated="true")] == ["a", "c"]
    assert [x.id for x in slice_by(items, negated="True")] == ["a", "c"]
    assert [x.id for x in slice_by(items, negated="FALSE")] == ["b"]
