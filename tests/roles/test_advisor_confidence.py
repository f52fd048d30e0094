"""The advisor states every answer with a confidence (issue 28), also when no scored reading stands
behind the query (an aggregate a model wrote): the chosen filling's score, else 0."""

from __future__ import annotations

from roles_helpers import E, R, add, make_ctx, null_model

from kgteam.protocols.payloads import CandidateQuery, QueryCandidates, QueryResult, Question
from kgteam.roles.triad.advisor import Advisor, AdvisorSettings

COUNT = f"SELECT (COUNT(?f) AS ?n) WHERE {{ ?f <{R}starred_actors> <{E}Temuera%20Morrison> }}"
ROWS = [{"n": {"type": "literal", "value": "3", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}}]


async def _answer(tools, candidates: QueryCandidates):
    transcript: list = []
    add(transcript, [Question(text="how many films did Temuera Morrison act in")], "user")
    result = add(transcript, [candidates, QueryResult(sparql=COUNT, variables=["n"], rows=ROWS)],
                 "decision_maker")[-1]
    ctx = make_ctx(null_model(), tools, transcript)
    [answer] = await Advisor(AdvisorSettings(use_model=False)).handle(result, ctx)
    return answer


async def test_an_aggregate_states_the_fillings_score(small_tools):
    scored = QueryCandidates(queries=[CandidateQuery(sparql=COUNT, score=0.62, row_count=1)], selected=0)
    answer = await _answer(small_tools, scored)
    assert (answer.status, answer.text, answer.confidence) == ("answered", "3", 0.62)


async def test_an_aggregate_nothing_scored_states_zero(small_tools):
    answer = await _answer(small_tools, QueryCandidates(queries=[CandidateQuery(sparql=COUNT, row_count=1)],
                                                        selected=0))
    assert (answer.status, answer.text, answer.confidence) == ("answered", "3", 0.0)
