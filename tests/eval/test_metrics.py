from __future__ import annotations

import pytest

from kgteam.eval.datasets import GoldAnswer
from kgteam.eval.metrics import (
    PartialDate,
    Predicted,
    dates_match,
    is_missing_text,
    match_item,
    normalize,
    numbers_match,
    parse_date,
    parse_number,
    set_scores,
    split_answer_text,
)

XSD_BOOL = "http://www.w3.org/2001/XMLSchema#boolean"


def G(label=None, iri=None, datatype=None):  # noqa: N802 - short constructor for tables
    return GoldAnswer(label=label, iri=iri, datatype=datatype)


def test_normalize():
    assert normalize("  The Beatles! ") == "beatles"
    assert normalize("Zoë_Saldaña") == "zoe saldana"
    assert normalize("Commands & Colors: Ancients") == "commands colors ancients"


@pytest.mark.parametrize("text", ["I don't know", "i dont know.", "Unknown", "", "   ", "No answer",
                                  "I'm not sure", "Cannot be determined", "insufficient information",
                                  "Unable to determine the answer from the KG"])
def test_missing_texts(text):
    assert is_missing_text(text)


@pytest.mark.parametrize("text", ["Paris", "No", "I know: Paris", "none of them is French? Paris"])
def test_not_missing(text):
    assert not is_missing_text(text)


@pytest.mark.parametrize(("answer", "gold", "expected"), [
    ("12", "12", True), ("12.0", "12", True), ("1,234", "1234", True), ("+100", "100", True),
    ("12.19", "12.192", True),   # answer rounded: gold rounded to the answer's precision
    ("12.2", "12.192", True),
    ("12.3", "12.192", False),
    ("12.192", "12.19", False),  # more precise answer must equal the gold
    ("52 000", "52000", True), ("1.2e3", "1200", True), ("13", "12", False),
    # an integer answer is not a rounding of a decimal gold (was: matched anything within ±0.5)
    ("8", "7.6", False), ("0", "0.4", False), ("2000", "1999.5", False), ("12", "12.192", False),
    ("12", "12.0", True), ("0.1", "0.10000000000000001", True),  # float noise still matches
    ("twelve", "12", None), ("12", "Paris", None),
])
def test_numbers(answer, gold, expected):
    assert numbers_match(answer, gold) is expected


def test_parse_number_rejects_words():
    assert parse_number("12%") == 12 and parse_number("abc") is None and parse_number("1,2,3") is None


@pytest.mark.parametrize(("text", "expected"), [
    ("1967-03-01", PartialDate(1967, 3, 1)), ("1967-03-01T00:00:00Z", PartialDate(1967, 3, 1)),
    ("March 1, 1967", PartialDate(1967, 3, 1)), ("1 March 1967", PartialDate(1967, 3, 1)),
    ("1st Mar 1967", PartialDate(1967, 3, 1)), ("01/03/1967", PartialDate(1967, 3, 1)),
    ("12/25/1967", PartialDate(1967, 12, 25)), ("March 1967", PartialDate(1967, 3)),
    ("1967", PartialDate(1967)), ("1967-02-30", None), ("Paris", None),
])
def test_parse_date(text, expected):
    assert parse_date(text) == expected


@pytest.mark.parametrize(("answer", "gold", "expected"), [
    ("March 1, 1967", "1967-03-01", True), ("1967-03-01", "1967-03-01T00:00:00Z", True),
    ("1 March 1967", "1967-03-02", False), ("1967", "1967-03-01", False),  # less precise than gold
    ("1967-03-01", "1967", True), ("1968-03-01", "1967", False), ("1967", "1967", None),
])
def test_dates(answer, gold, expected):
    assert dates_match(answer, gold) is expected


def test_match_item_paths():
    assert match_item(Predicted("whatever", iri="http://x/e/A"), G("A", "http://x/e/A")) == "iri"
    assert match_item(Predicted("the beatles"), G("The Beatles")) == "string"
    assert match_item(Predicted("Mountain Time Zone"), G(None, "http://dbpedia.org/resource/Mountain_Time_Zone")) == "string"
    assert match_item(Predicted("Q42299"), G(None, "http://www.wikidata.org/entity/Q42299")) is None
    assert match_item(Predicted("Yes"), G("true", datatype=XSD_BOOL)) == "boolean"
    assert match_item(Predicted("no"), G("true", datatype=XSD_BOOL)) is None
    assert match_item(Predicted("8.0"), G("8")) == "number"
    assert match_item(Predicted("1 March 1967"), G("1967-03-01")) == "date"


def test_split_answer_text():
    assert split_answer_text("Drama|Music") == ["Drama", "Music"]
    assert split_answer_text("Bill Paxton, Don Cheadle and Joaquin Phoenix") == ["Bill Paxton", "Don Cheadle",
                                                                               "Joaquin Phoenix"]
    assert split_answer_text("- Greek\n- French") == ["Greek", "French"]
    assert split_answer_text("") == []


def test_set_scores_hand_checked():
    golds = [G("Drama"), G("Music")]
    s = set_scores([Predicted("Drama"), Predicted("Music")], golds)
    assert (s.precision, s.recall, s.f1, s.exact_match, s.hits1) == (1.0, 1.0, 1.0, True, True)
    s = set_scores([Predicted("Drama")], golds)  # partial
    assert (s.precision, s.recall, round(s.f1, 4), s.exact_match, s.hits1) == (1.0, 0.5, 0.6667, False, True)
    s = set_scores([Predicted("Comedy"), Predicted("Drama"), Predicted("War")], golds)
    assert (round(s.precision, 4), s.recall, s.f1, s.exact_match, s.hits1) == (0.3333, 0.5, 0.4, False, False)
    s = set_scores([], golds)
    assert (s.precision, s.recall, s.f1, s.hits1) == (0.0, 0.0, 0.0, False)
