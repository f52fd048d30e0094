"""R3 end to end through the runtime on a small real KG: rules, grounded verdicts, the tree's
depth and breadth bounds, the join, and a model that cannot name a triple it was not shown."""

from __future__ import annotations

import pytest

from kgteam.llm.no_model import NoModel
from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.payloads import Answer, Verdict
from kgteam.roles.base import ListTrace, RoleContext
from kgteam.roles.r3.verdict_join import VerdictJoin
from kgteam.team_builder import playbook_runner


async def _ask(question, small_tools, *, model=None, budgets=None, settings=None):
    trace = ListTrace()
    runner = playbook_runner("r3", model or NoModel(), small_tools.toolbox(), trace=trace, budgets=budgets,
                             settings=settings)
    seen = [env async for env in runner.stream(question, session_id="t")]
    answer = seen[-1].payload
    assert isinstance(answer, Answer)
    return answer, seen, trace


def _label(answer):
    return answer.values[0].label if answer.values else None


@pytest.mark.parametrize("claim,expected", [
    ("Claim: Tracker: directed by Ian Sharp.", "supported"),
    ("Claim: Tracker: directed by Vincent Ward.", "refuted"),
    ("Claim: Lone Film: starred actors Ray Winstone.", "not enough info"),  # Lone Film has no actors at all
])
async def test_claims(claim, expected, small_tools):
    answer, _, _ = await _ask(claim, small_tools)
    assert _label(answer) == expected, answer.text


async def test_a_shared_value_grounds_true_and_the_reasoning_cites_the_triples(small_tools):
    answer, seen, _ = await _ask("Do Tracker and River Queen share an actor?", small_tools)
    assert _label(answer) == "True" and answer.grounded
    assert {t.object_label for t in answer.evidence.triples} == {"Temuera Morrison"}
    assert any("[t0]" in line for line in answer.evidence.reasoning)
    assert answer.evidence.axioms and "same" in answer.evidence.axioms[0].text
    assert any(e.kind == "axiom" for e in seen) and any(e.kind == "selected_facts" for e in seen)


async def test_a_comparison_of_years(small_tools):
    answer, _, _ = await _ask("Is Tracker older than River Queen?", small_tools)
    assert _label(answer) == "False"  # 2010 is not before 2005
    assert [t.object_label for t in answer.evidence.triples] == ["2010", "2005"]


async def test_every_true_or_false_stands_on_triples_the_kg_holds(small_tools):
    for q in ["Do Tracker and River Queen share an actor?", "Is Tracker older than River Queen?",
              "Claim: Tracker: directed by Ian Sharp.", "Did Temuera Morrison star in River Queen?"]:
        answer, _, _ = await _ask(q, small_tools)
        if _label(answer) in ("True", "False", "supported", "refuted"):
            assert answer.evidence.triples, q
            for t in answer.evidence.triples:
                ask = f"ASK {{ <{t.subject}> <{t.predicate}> {_term(t)} }}"
                assert (await small_tools.run_sparql(ask)).boolean, (q, t)


def _term(t):
    return f'"{t.object}"' if t.object_is_literal else f"<{t.object}>"


async def test_an_undecided_branch_goes_deeper_then_a_new_rule_opens_a_branch_within_max_breadth(small_tools):
    # Lone Film has no actors: every rule about actors stays unbound; the tree expands, then tries
    # other rules, and ends in "I don't know" without crashing
    answer, seen, _ = await _ask("Do Tracker and Lone Film share an actor?", small_tools,
                                 budgets=Budgets(max_depth=2, max_breadth=2, max_llm_calls=40, max_turns=80))
    assert answer.status == "unknown" and "I don't know" in answer.text
    depths = [e.depth for e in seen if e.kind == "missing_info"]
    assert depths and max(depths) <= 2
    branches = {e.branch for e in seen if e.kind == "axiom"}
    assert 1 <= len(branches) <= 2 + len([p for p in answer.pruned if p.reason == "max_breadth"])


async def test_breadth_one_keeps_the_best_rule_and_still_answers(small_tools):
    answer, seen, _ = await _ask("Do Tracker and River Queen share an actor?", small_tools,
                                 budgets=Budgets(max_depth=2, max_breadth=1, max_llm_calls=40, max_turns=80))
    assert _label(answer) == "True"
    assert len({e.branch for e in seen if e.kind == "axiom" and e.branch not in
                {p.branch for p in answer.pruned}}) == 1


def test_the_join_reports_grounded_branches_that_disagree():
    yes = Verdict(verdict="true", label="True", axiom="rule A", reasoning=["a [t0]"], final=True)
    no = Verdict(verdict="false", label="False", axiom="rule B", reasoning=["b [t0]"], final=True)
    unknown = Verdict(verdict="unknown", label="I don't know", axiom="rule C", final=True, missing=["x"])
    ctx = RoleContext(model=NoModel())
    answer = VerdictJoin().answer([yes, no], ctx)
    assert answer.status == "unknown" and "disagree" in answer.text and {a.text for a in answer.evidence.axioms} == {
        "rule A", "rule B"}
    assert _label(VerdictJoin().answer([unknown, yes], ctx)) == "True"  # grounded beats "I don't know"


async def test_a_model_naming_a_triple_it_was_not_shown_is_refused(small_tools):
    model = ScriptedModel(name="liar")
    model.add("fact_selector", None, '{"chosen": ["o99"], "reason": "an invented fact"}')
    model.add("*", None, '{"chosen": ["o1"], "reason": "ok", "names": []}')
    answer, seen, trace = await _ask("Do Tracker and River Queen share an actor?", small_tools, model=model)
    assert _label(answer) == "True"  # the invented id changed nothing
    picks = [e for e in trace.events if e.get("decision") == "facts"]
    assert picks and all(e["source"] == "fallback" for e in picks)
    listed = {(t.subject, t.predicate, t.object) for e in seen if e.kind == "selected_facts" for t in e.payload.triples}
    assert all((t.subject, t.predicate, t.object) in listed for t in answer.evidence.triples)


@pytest.mark.parametrize("question,expected", [
    ("I only watch films in English: would I like River Queen?", "True"),
    ("I never watch Drama films: would I like Tracker?", "False"),      # a negated condition that holds
    ("I only watch films from before 2000: would I like Tracker?", "False"),  # 2010 is not before 2000
])
async def test_a_preference_in_the_question_becomes_conditions_on_the_item(question, expected, small_tools):
    answer, seen, _ = await _ask(question, small_tools)
    assert _label(answer) == expected, answer.text
    axiom = next(e.payload for e in seen if e.kind == "axiom")
    assert axiom.form == "prefer" and axiom.constraints and answer.evidence.triples


@pytest.mark.parametrize("text", [
    "count the films Ian Sharp directed",
    "list the actors of Tracker",
    "give me the director of Tracker",
    "In which year was Tracker released",
    "claim: lone film: starred actors ray winstone.",  # read as a claim, but in lower case: names unsure
])
async def test_an_input_the_team_cannot_read_is_i_dont_know_never_a_stated_value(text, small_tools):
    """Requests for values are no claims, and an undecided claim in lower case may be a misread name:
    "I don't know" (status unknown), never the value "not enough info" at confidence 1.0."""
    answer, _, _ = await _ask(text, small_tools)
    assert answer.status == "unknown" and not answer.values and answer.confidence is None, answer.text
    assert answer.text.startswith("I don't know"), answer.text


def test_the_form_of_an_input():
    from kgteam.protocols.payloads import TopicMention
    from kgteam.roles.r3.rules import question_form

    assert question_form("Claim: Tracker: directed by Ian Sharp.") == "claim"
    assert question_form("Tracker was directed by Ian Sharp.") == "claim"
    assert question_form("Is Tracker older than River Queen?") == "yes_no"
    assert question_form("Tell me whether Tracker is older than River Queen") == "yes_no"
    assert question_form("Count the films Ian Sharp directed") == "request"
    assert question_form("from which country is Tracker") == "request"
    dracula = TopicMention(text="Count Dracula", start=0, end=2, iris=["http://example.org/Count_Dracula"])
    assert question_form("Count Dracula was directed by Jess Franco.", [dracula]) == "claim"
