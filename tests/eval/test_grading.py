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


# ------------------------------------------------------------------ typed gold: numbers, dates, booleans, empty

XSD = "http://www.w3.org/2001/XMLSchema#"


def kinds(pred: str, gold: GoldAnswer):
    from kgteam.eval.metrics import match_item

    return match_item(Predicted(pred), gold)


def test_numbers_in_every_notation():
    gold = GoldAnswer(label="42", datatype=XSD + "integer")
    for said in ("42", "42.0", "42.00", "4.2e1", '"42"^^xsd:integer', f'"42"^^<{XSD}integer>', '"42.0"^^xsd:decimal'):
        assert kinds(said, gold) == "number", said
    for said in ("43", "41.9", "420", '"43"^^xsd:integer', "forty"):
        assert kinds(said, gold) is None, said
    assert kinds("1,234", GoldAnswer(label="1234.0")) == "number"
    # a gold written as a typed literal is read the same way
    assert kinds("7", GoldAnswer(label='"7"^^xsd:integer')) == "number"


def test_a_number_gold_is_never_matched_as_a_year_of_a_date():
    count = GoldAnswer(label="1979", datatype=XSD + "integer")
    assert kinds("1979-05-25", count) is None
    assert kinds("1979", count) == "number"


def test_dates_year_gold_versus_full_date():
    year = GoldAnswer(label="1979", datatype=XSD + "gYear")
    assert kinds("1979-05-25", year) == "date"  # the gold is a year: any date of that year
    assert kinds('"1979-05-25"^^xsd:date', year) == "date"
    assert kinds("1979", year) == "number"
    assert kinds("1980-01-01", year) is None
    day = GoldAnswer(label="1979-05-25", datatype=XSD + "date")
    assert kinds("1979-05-25T00:00:00Z", day) == "date"
    assert kinds('"1979-05-25T10:30:00+02:00"^^xsd:dateTime', day) == "date"
    assert kinds("May 25, 1979", day) == "date"
    assert kinds("1979", day) is None  # less precise than the gold
    assert kinds("1979-05-26", day) is None
    stamp = GoldAnswer(label="1979-05-25T00:00:00Z", datatype=XSD + "dateTime")
    assert kinds("1979-05-25", stamp) == "date"


def test_booleans_yes_no_true_false():
    yes = GoldAnswer(label="true", datatype=XSD + "boolean")
    for said in ("yes", "Yes", "true", "TRUE", '"true"^^xsd:boolean'):
        assert kinds(said, yes) == "boolean", said
    for said in ("no", "false", '"false"^^xsd:boolean', "maybe"):
        assert kinds(said, yes) is None, said
    no = GoldAnswer(label="false", datatype=XSD + "boolean")
    assert rules("", [no], values=[Predicted("No")])[0].grade == "accurate"
    assert rules("", [no], values=[Predicted("yes")])[0].grade == "hallucinated"
    assert rules("I don't know", [no], status="unknown")[0].grade == "missing"


def test_empty_gold_abstaining_is_right_stating_is_wrong():
    for text, status in (("I don't know.", "unknown"), ("I don't know", "answered"), ("", "answered"),
                         ("no answer", "refused")):
        g, sure = grade_by_rules(text, [], [], status=status, answer_kind="empty")
        assert (g.grade, g.decided_by, g.hits1, sure) == ("accurate", "rule:empty-gold-abstained", True, True), text
    g, sure = grade_by_rules("Alps", [Predicted("Alps")], [], answer_kind="empty")
    assert (g.grade, g.decided_by, sure) == ("hallucinated", "rule:empty-gold-stated", True)
    g, _ = grade_by_rules("The Danube flows into the North Sea.", [], [], answer_kind="empty")
    assert g.grade == "hallucinated"
    g, _ = grade_by_rules("boom", [], [], status="error", answer_kind="empty")
    assert g.grade == "missing"
    # without the kind an empty gold stays ungraded (a dataset with no answers, such as LC-QuAD)
    assert grade_by_rules("Alps", [Predicted("Alps")], [])[0].grade == "ungraded"


def test_guess_correct():
    from kgteam.eval.grading import guess_correct

    assert guess_correct([Predicted("Drama"), Predicted("Music")], GENRES) is True
    assert guess_correct([Predicted("Drama")], GENRES) is False
    assert guess_correct([Predicted("Alps")], [], answer_kind="empty") is False
    assert guess_correct([], GENRES) is None
    assert guess_correct([Predicted("Alps")], []) is None


async def test_a_text_with_every_gold_item_and_more_is_left_to_the_judge():
    """"Paris, Lyon" names the gold and something else: the rules say accurate but not sure, so the
    judge is asked, and its verdict stands (a mutant that called this sure never asked it)."""
    golds = [GoldAnswer(label="Paris")]
    g, sure = rules("Paris, Lyon", golds)
    assert (g.grade, g.decided_by, sure) == ("accurate", "rule:contains-extra", False)
    model = ScriptedModel([("judge", None, {"grade": "hallucinated", "reason": "Lyon is not where it was filmed"})])
    g = await grade_answer("Where was it filmed?", "Paris, Lyon", [], golds, judge_model=model)
    assert (g.grade, g.decided_by, g.judge_calls) == ("hallucinated", "llm-judge", 1)
