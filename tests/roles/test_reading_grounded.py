"""A count or a yes/no is grounded only by the set it counted or checked (issue 40: a mutant that
called such a reading grounded with no evidence triple at all passed every test); a relation no word
of the question named is said apart as inferred, not read as "made up" (issue 39)."""

from __future__ import annotations

import pytest

from kgteam.protocols.evidence import EvidenceTriple, RelationMatch
from kgteam.protocols.payloads import AnswerValue
from kgteam.protocols.query_graph import Aggregate, QueryGraph
from kgteam.roles.semantic.grounding import inferred_steps
from kgteam.roles.semantic.reading_answer import reading_grounded

EX = "http://example.org/"
COUNT = QueryGraph(aggregate=Aggregate(function="count"))
ASK = QueryGraph(form="ask")
NAMED = [RelationMatch(predicate=EX + "tendedBy", label="tended by", words="gardener")]
TRIPLE = EvidenceTriple(subject=EX + "Oak", predicate=EX + "tendedBy", object=EX + "Bo")


@pytest.mark.parametrize("graph,value", [(COUNT, "1"), (ASK, "Yes")])
def test_a_count_or_a_yes_no_needs_the_triples_it_counted_or_checked(graph, value):
    values = [AnswerValue(label=value)]
    assert not reading_grounded(graph, [], values, NAMED)  # nothing counted or checked: no ground
    assert not reading_grounded(graph, [], values, [])
    assert reading_grounded(graph, [TRIPLE], values, NAMED)
    unnamed = [NAMED[0].model_copy(update={"words": None})]  # a relation no word of the question named
    assert reading_grounded(graph, [TRIPLE], values, unnamed)  # the triples are the KG's all the same
    assert inferred_steps(unnamed) == 1 and inferred_steps(NAMED) == 0
