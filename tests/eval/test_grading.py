from __future__ import annotations

from kgteam.eval.datasets import GoldAnswer
from kgteam.eval.grading import grade_answer, grade_by_rules
from kgteam.eval.metrics import Predicted
from kgteam.llm.scripted import ScriptedModel

GENRES = [GoldAnswer(label="Drama"), GoldAnswer(label="Music")]


def rules(text, golds, values=(), status="answered"):
    return grade_by_rules(text, list(values), golds, status=status)


def test_missing_paths():
    g, sure = rules("I don't know.", GENRES)
    assert (g.grade, g.decided_by, sure) == ("missing", "rule:missing", True)
    assert rules("", GENRES)[0].grade == "missing"
    assert rules("Drama", GENRES, status="unknown")[0].grade == "missing"
    assert rules("boom", GENRES, status="error")[0].grade == "missing"


def test_sets_need_all_items_and_no_wrong_item():
    g, _ = rules("", GENRES, values=[Predicted("Drama"), Predicted("Music")])
    assert (g.grade, g.decided_by, g.f1) == ("accurate", "rule:string", 1.0)
    g, _ = rules("", GENRES, values=[Predicted("Drama")])
    assert (g.grade, g.decided_by, g.recall) == ("hallucinated", "rule:set-mismatch", 0.5)
    g, _ = rules("", GENRES, values=[Predicted("Drama"), Predicted("Music"), Predicted("War")])
    assert g.grade == "hallucinated" and round(g.precision, 3) == 0.667
    g, sure = rules("Drama and Music", GENRES)
    assert (g.grade, sure) == ("accurate", True)


def test_numbers_dates_booleans():
    assert rules("12.19", [GoldAnswer(label="12.192")])[0].decided_by == "rule:number"
    assert rules("12.3", [GoldAnswer(label="12.192")])[0].grade == "hallucinated"
    g, _ = rules("March 1, 1967", [GoldAnswer(label="1967-03-01")])
    assert (g.grade, g.decided_by) == ("accurate", "rule:date")
    g, _ = rules("Yes, Berlin is the capital.", [GoldAnswer(label="true")])
    assert (g.grade, g.decided_by) == ("accurate", "rule:boolean")
    assert rules("No.", [GoldAnswer(label="true")])[0].grade == "hallucinated"


def test_free_text_containing_gold_is_accurate_but_unsure_with_extra_items():
    golds = [GoldAnswer(label="Michael Mann")]
    g, sure = rules("Heat was directed by Michael Mann.", golds)
    assert g.grade == "accurate" and g.decided_by.startswith("rule:contains")
    g, sure = rules("The United Kingdom", [GoldAnswer(label="UK")])
    assert (g.grade, g.decided_by, sure) == ("hallucinated", "rule:no-match", False)


def test_no_gold_is_ungraded():
    g, _ = rules("Paris", [])
    assert (g.grade, g.decided_by) == ("ungraded", "rule:no-gold")


async def test_llm_judge_decides_only_what_rules_cannot():
    model = ScriptedModel([("judge", "UK", {"grade": "accurate", "reason": "UK is the United Kingdom"})])
    golds = [GoldAnswer(label="UK")]
    g = await grade_answer("Which country?", "The United Kingdom", [], golds, judge_model=model)
    assert (g.grade, g.decided_by, g.judge_calls) == ("accurate", "llm-judge", 1)
    prompt = model.calls[0].messages[0]["content"]
    assert "The United Kingdom" in prompt and "- UK" in prompt and "Numbers must be equal after rounding" in prompt
    # a rule-decided case never reaches the judge
    g = await grade_answer("Which country?", "UK", [], golds, judge_model=model)
    assert g.decided_by == "rule:string" and len(model.calls) == 1


async def test_invalid_judge_output_falls_back_to_rules():
    model = ScriptedModel([("judge", None, ["not json", "still not json"])])
    g = await grade_answer("q", "The United Kingdom", [], [GoldAnswer(label="UK")], judge_model=model)
    assert g.grade == "hallucinated" and g.decided_by == "rule:no-match(judge-invalid)" and g.judge_calls == 2
