"""Claim verdicts as a third class, the verifiability of reasoning statements, and ungrounded verdicts."""

from __future__ import annotations

import asyncio

import pytest

from kgteam.eval.datasets import DatasetItem, GoldAnswer
from kgteam.eval.grading import grade_by_rules
from kgteam.eval.metrics import Predicted
from kgteam.eval.report import summarize, write_report
from kgteam.eval.runner import read_run, run_eval
from kgteam.eval.verifiability import check_verifiability, citations, is_ungrounded_verdict
from kgteam.protocols.evidence import Evidence, EvidenceTriple
from kgteam.protocols.payloads import Answer, AnswerValue

E, R = "http://example.org/metaqa/e/", "http://example.org/metaqa/r/"
KISMET_DIRECTOR = EvidenceTriple(subject=E + "Kismet", predicate=R + "directed_by", object=E + "William%20Dieterle",
                                 subject_label="Kismet", predicate_label="directed by", object_label="William Dieterle")
KISMET_YEAR = EvidenceTriple(subject=E + "Kismet", predicate=R + "release_year", object=E + "1944")
MADE_UP = EvidenceTriple(subject=E + "Kismet", predicate=R + "directed_by", object=E + "Woody%20Allen",
                         subject_label="Kismet", object_label="Woody Allen")


def _verdict(text: str, gold: str, *, values: tuple[str, ...] = (), status: str = "answered"):
    return grade_by_rules(text, [Predicted(label=v) for v in values], [GoldAnswer(label=gold)], status=status)


@pytest.mark.parametrize(("text", "values", "status", "gold", "grade"), [
    ("supported", (), "answered", "supported", "accurate"),
    ("", ("Supported",), "answered", "supported", "accurate"),
    ("True: t0 says so", (), "answered", "supported", "accurate"),
    ("False.", (), "answered", "refuted", "accurate"),
    ("Refuted: t1", (), "answered", "supported", "hallucinated"),
    ("I don't know.", (), "unknown", "not enough info", "accurate"),  # abstaining IS the third class
    ("Not enough information in the KG", (), "answered", "not enough info", "accurate"),
    ("I don't know.", (), "unknown", "supported", "missing"),  # an abstention on a decidable claim
    ("True", (), "answered", "not enough info", "hallucinated"),
    ("anything", (), "error", "refuted", "missing"),
])
def test_claim_verdicts_grade_as_three_classes(text, values, status, gold, grade):
    grading, sure = _verdict(text, gold, values=values, status=status)
    assert grading.grade == grade and sure
    assert grading.exact_match == (grade == "accurate")


def test_a_text_without_a_verdict_is_wrong_but_left_to_the_judge():
    grading, sure = _verdict("William Dieterle", "supported")
    assert grading.grade == "hallucinated" and not sure and grading.decided_by == "rule:verdict-unread"


def test_yes_no_gold_is_still_graded_as_before():
    grading, _ = grade_by_rules("False", [], [GoldAnswer(label="True")])
    assert grading.grade == "hallucinated" and grading.decided_by == "rule:boolean"


def test_citations_are_read_in_order_without_repeats():
    assert citations("t3 and t10, again t3; not t or at2") == [3, 10]


def test_statements_verify_only_with_real_cited_triples_they_name(metaqa_demo):
    _, tools = metaqa_demo
    evidence = Evidence(triples=[KISMET_DIRECTOR, MADE_UP, KISMET_YEAR], reasoning=[
        "Kismet was directed by William Dieterle (t0).",            # verified: names subject and object
        "The release year of Kismet: t2",                            # verified: names the subject
        "Woody Allen directed Kismet (t1).",                         # the triple is not in the KG
        "It is a fine film (t0).",                                   # cites a real triple it does not name
        "So the claim is supported.",                                # cites nothing
        "See t7 for William Dieterle.",                              # cites past the evidence
    ])
    check = asyncio.run(check_verifiability(evidence, tools))
    assert [c.verified for c in check.checks] == [True, True, False, False, False, False]
    assert [c.why for c in check.checks[2:]] == ["t1 is not in the KG", "t0 is not named by the statement",
                                                 "cites no triple", "t7 is not in the evidence"]
    assert check.statements == 6 and check.verified == 2 and check.score == pytest.approx(2 / 6)


def test_the_teams_own_labels_and_the_relation_words_alone_do_not_verify(metaqa_demo):
    _, tools = metaqa_demo
    relabelled = KISMET_DIRECTOR.model_copy(update={"object_label": "Orson Welles", "subject_label": "Citizen Kane"})
    evidence = Evidence(triples=[relabelled], reasoning=["Citizen Kane was directed by Orson Welles (t0).",
                                                         "step 1: directed by (t0)"])
    check = asyncio.run(check_verifiability(evidence, tools))
    assert check.verified == 0 and {c.why for c in check.checks} == {"t0 is not named by the statement"}


def test_no_reasoning_is_not_applicable():
    check = asyncio.run(check_verifiability(Evidence(triples=[KISMET_DIRECTOR]), tools=None))  # type: ignore[arg-type]
    assert check.statements == 0 and check.score is None


@pytest.mark.parametrize(("text", "values", "triples", "status", "ungrounded"), [
    ("True", [], [], "answered", True),
    ("", [AnswerValue(label="refuted")], [], "answered", True),
    ("True", [], [KISMET_DIRECTOR], "answered", False),
    ("I don't know", [], [], "unknown", False),
    ("not enough info", [], [], "answered", False),
    ("No Country for Old Men", [], [], "answered", False),  # an entity answer, not a "no"
])
def test_ungrounded_verdicts(text, values, triples, status, ungrounded):
    assert is_ungrounded_verdict(text, values, Evidence(triples=triples), status) is ungrounded


class _ClaimTeam:
    """Answers by a fixed table: verdicts with and without reasoning, one with no evidence at all."""

    ANSWERS = {
        "c1": Answer(confidence=1.0, text="supported", values=[AnswerValue(label="supported")], status="answered",
                     evidence=Evidence(triples=[KISMET_DIRECTOR],
                                       reasoning=["Kismet is directed by William Dieterle (t0)"])),
        "c2": Answer(confidence=1.0, text="refuted", status="answered",
                     evidence=Evidence(triples=[KISMET_DIRECTOR, MADE_UP],
                                       reasoning=["Kismet: directed by William Dieterle, t0", "Woody Allen: t1"])),
        "c3": Answer(confidence=1.0, text="True", status="answered"),  # a verdict with nothing behind it
        "c4": Answer(text="I don't know.", status="unknown"),
    }

    async def ask(self, question: str, *, session_id: str | None = None) -> Answer:
        return self.ANSWERS[question]


def test_eval_records_and_reports_verifiability(metaqa_demo, tmp_path):
    _, tools = metaqa_demo
    golds = {"c1": "supported", "c2": "refuted", "c3": "refuted", "c4": "not enough info"}
    items = [DatasetItem(id=k, question=k, answers=[GoldAnswer(label=v)], tags={"kind": "claim"})
             for k, v in golds.items()]
    out = tmp_path / "run.jsonl"
    asyncio.run(run_eval(items, _ClaimTeam(), out, tools=tools, progress=False))
    records = {r.id: r for r in read_run(out)}
    assert records["c1"].verifiability.score == 1.0 and records["c2"].verifiability.score == 0.5
    assert records["c3"].verifiability is None and records["c4"].grading.grade == "accurate"
    summary = summarize(list(records.values()))
    assert summary["verifiability"] == pytest.approx(0.75)
    assert summary["verifiability_checked"] == 2 and summary["verifiability_na"] == 2
    assert summary["ungrounded_verdicts"] == 1
    assert summary["accuracy"] == pytest.approx(3 / 4)  # c3 says True (supported) for a refuted claim
    report = write_report([out], tmp_path / "report").read_text(encoding="utf-8")
    assert "| verifiable | ungrounded verdicts |" in report and "| 75.0 | 1 |" in report
    assert (tmp_path / "report" / "verifiability.png").stat().st_size > 5_000
