"""No stated answer without a confidence (issue 28): the contract refuses it, and every playbook
gives one on every question shape it answers, aggregates included."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import STORED, Answer, AnswerValue, payload_from_dict

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "names"


def test_the_contract_refuses_an_answer_without_a_confidence():
    with pytest.raises(ValidationError, match="needs a confidence"):
        Answer(text="Jonah Pettifer", values=[AnswerValue(label="Jonah Pettifer")])
    with pytest.raises(ValidationError, match="needs a confidence"):
        Answer.model_validate({"text": "40, 60", "status": "answered"})
    assert Answer(text="Jonah Pettifer", confidence=0.7).confidence == 0.7
    assert Answer(text="I don't know.", status="unknown").confidence is None  # no statement, nothing to judge


def test_records_written_before_the_rule_still_read_back():
    old = {"kind": "answer", "text": "40, 60", "status": "answered"}
    assert payload_from_dict(old).confidence is None
    assert Answer.model_validate(old, context=STORED).text == "40, 60"
    env = Envelope.model_validate_json(Envelope(session_id="s", sender="advisor",
                                                payload=Answer(text="x", confidence=0.5)).model_dump_json()
                                       .replace('"confidence":0.5', '"confidence":null'))
    assert env.payload.confidence is None


QUESTIONS = [
    "Which students does Marisol Achterburg advise?",           # a list
    "How many students does Marisol Achterburg advise?",        # a count
    "Which course has the most seats?",                         # a superlative
    "Does Marisol Achterburg advise Jonah Pettifer?",           # yes / no
    "Is Jonah Pettifer enrolled in Organic Chemistry?",         # yes / no
    "Who founded the campus choir?",                            # only the documents say
]


@pytest.fixture(scope="module")
def campus_home(tmp_path_factory) -> Path:
    from kgteam.tools.loading import build_kg
    from kgteam.tools.web.corpus_build import build_corpus

    home = tmp_path_factory.mktemp("confidence-home")
    build_kg([DATA / "schema_name.ttl"], "campus", home=home, progress=False, embed=False)
    build_corpus("movie-notes", [DATA / "campus_docs.jsonl"], home=home, progress=None)  # adaptive.yaml's corpus
    return home


@pytest.mark.parametrize("playbook", ["triad", "kerag", "r3", "adaptive"])
def test_every_playbook_states_answers_with_a_confidence(campus_home, playbook):
    from kgteam import Team

    answered = []
    with Team.from_yaml(ROOT / "examples" / "teams" / f"{playbook}.yaml", kg="campus", model="none",
                        home=campus_home) as team:
        for question in QUESTIONS:
            answer = team.ask(question)
            assert answer.status != "error", (question, answer.error)  # a refused Answer would end here
            if answer.status == "answered":
                assert answer.confidence is not None and 0.0 <= answer.confidence <= 1.0, (question, answer)
                answered.append(question)
    assert answered, f"{playbook} answered none of the questions"
