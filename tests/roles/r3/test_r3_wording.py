"""R3 states its verdicts as plain clauses built from the triples, in the KG's direction, on a KG
with camelCase relation names (tests/data/kgs/isles: ``flowsThrough``, ``onRiver``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgteam import Team
from kgteam.roles.statements import statement

ROOT = Path(__file__).resolve().parents[3]
ISLES = ROOT / "tests" / "data" / "kgs" / "isles" / "isles.ttl"


@pytest.mark.parametrize("relation,expected", [
    ("liesOn", "Vienna lies on Danube"),
    ("flowsThrough", "Vienna flows through Danube"),
    ("lies_on", "Vienna lies on Danube"),
    ("onRiver", "Vienna is on river Danube"),
    ("directed by", "Vienna is directed by Danube"),
    ("hasPart", "Vienna has part Danube"),
    ("population", "Vienna has population Danube"),
])
def test_a_triple_reads_as_subject_relation_object(relation, expected):
    assert statement("Vienna", relation, "Danube") == expected


@pytest.fixture(scope="module")
def r3(tmp_path_factory):
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("r3_isles_home")
    build_kg([ISLES], "isles", home=home, progress=False, embed=False)
    with Team.from_yaml(ROOT / "examples" / "teams" / "r3.yaml", kg="isles", model="none", home=home) as team:
        yield team


def test_a_supported_claim_is_stated_as_the_triple(r3):
    answer = r3.ask("Claim: the Sorrel flows through Quillsey.")
    assert answer.text == "Supported: Sorrel flows through Quillsey."
    assert answer.evidence.axioms[0].text == "If Sorrel flows through Quillsey, the claim holds"


def test_an_inverse_claim_is_stated_in_the_kgs_direction(r3):
    answer = r3.ask("Claim: Quillsey is flowed through by the Grisk.")  # the KG has Grisk flowsThrough Quillsey
    assert answer.text == "Supported: Grisk flows through Quillsey."
    refuted = r3.ask("Claim: Ostrand flows through the Sorrel.")
    assert refuted.text == ("Refuted: the KG states only that Grisk flows through Ostrand, "
                            "not that Sorrel flows through Ostrand.")


def test_a_yes_no_answer_reads_as_a_sentence(r3):
    answer = r3.ask("Is Brackwater on the Ammel river?")
    assert answer.text == "True: Brackwater is on river Ammel."
    for line in answer.evidence.reasoning:  # no "X among Y's relation" or "^relation" fragments
        assert " among " not in line and "^" not in line, line
