"""Every budget, exercised by a playbook whose roles branch and go deep: right ``stopped_by``,
a ``BudgetExceeded`` message, and a well-formed answer (finalize's best-so-far or "I don't know").

Per-branch budgets (depth, breadth, retries) prune branches; the run ends by them only when no
branch is left. Run-wide budgets (turns, calls, tokens, time) end the run."""

import asyncio
import time

import pytest
from agents_playbook import Brancher, Diver, Executor, Planner, any_reply_model, explore_routes, plan_routes

from kgteam.agents.team import TeamRunner
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.payloads import Answer

BIG = dict(max_depth=100, max_breadth=10, max_retries=10, max_turns=1000, max_llm_calls=1000,
           max_tokens=10**7, timeout_s=60)


def runner(budgets: dict, *, n=2, answer_at=None, sleep_s=0.0, prompt_size=40, model=None, scores=None,
           concurrency=4):
    limits = Budgets(**{**BIG, **budgets})
    return TeamRunner(
        roles={"brancher": Brancher(n=n, scores=scores), "diver": Diver(answer_at=answer_at, sleep_s=sleep_s,
                                                                        prompt_size=prompt_size)},
        routes=explore_routes(), model=model or any_reply_model(), tools=None, budgets=limits,
        answer_role="diver", concurrency=concurrency,
    )


async def ask(team: TeamRunner, question="explore"):
    events = []
    answer = await team.ask(question, on_event=events.append)
    return answer, events


def assert_well_formed(answer: Answer, events, stopped_by: str):
    assert isinstance(answer, Answer)
    assert answer.stopped_by == stopped_by
    assert events[0].kind == "question" and events[-1].kind == "answer"
    assert events[-1].payload == answer
    assert answer.cost.seconds > 0
    if stopped_by not in ("done", "cancelled", "error"):
        exceeded = [e for e in events if e.kind == "budget_exceeded"]
        assert len(exceeded) == 1 and exceeded[0].payload.budget == stopped_by
        assert events[-2].kind == "budget_exceeded"


async def test_runs_to_done_when_within_budgets():
    team = runner({}, answer_at=2)
    answer, events = await ask(team)
    assert_well_formed(answer, events, "done")
    assert answer.status == "answered" and answer.text == "found at depth 2 via axiom 0"
    # both branches advance together; the first answer admitted ends the run
    assert [e.kind for e in events] == ["question", "axiom", "axiom", "missing_info", "missing_info",
                                        "missing_info", "missing_info", "answer"]
    assert [e.depth for e in events] == [0, 0, 0, 1, 1, 2, 2, 2]
    assert [e.branch for e in events] == [0, 1, 2, 1, 2, 1, 2, 1]
    # the cost is the work done: 1 brancher call + 3 rounds of 2 diver calls (the second answer
    # was computed in the same round, then not admitted: the run was over)
    assert answer.cost.llm_calls == 7


async def test_one_delivery_at_a_time_when_concurrency_is_one():
    team = runner({}, answer_at=2, concurrency=1)
    answer, events = await ask(team)
    assert answer.cost.llm_calls == 6 == sum(e.usage.llm_calls for e in events)
    assert answer.text == "found at depth 2 via axiom 0"


async def test_max_depth_prunes_every_branch_then_the_run_ends_by_it():
    team = runner({"max_depth": 2})
    answer, events = await ask(team)
    assert_well_formed(answer, events, "max_depth")
    assert max(e.depth for e in events if e.kind == "missing_info") == 3  # produced, not delivered
    assert answer.text == "partial: reached depth 2"  # the refused depth-3 hops are not in the lineage
    assert answer.status == "answered"  # finalize gave the best answer so far
    assert sorted((p.branch, p.reason) for p in answer.pruned) == [(1, "max_depth"), (2, "max_depth")]
    assert [e.payload.pruned.branch for e in events if e.kind == "branch_pruned"] == [1, 2]


async def test_max_breadth_keeps_the_best_alternatives_and_the_run_goes_on():
    team = runner({"max_breadth": 2}, n=4, scores=[0.1, 0.9, 0.5, 0.7], answer_at=1)
    answer, events = await ask(team)
    assert_well_formed(answer, events, "done")
    delivered = {e.payload.text for e in events if e.kind == "axiom"
                 and any(m.branch == e.branch for m in events if m.kind in ("missing_info", "answer"))}
    assert delivered == {"axiom 1", "axiom 3"}
    assert sorted(p.reason for p in answer.pruned) == ["max_breadth", "max_breadth"]
    assert team.last_run.used.breadth == 2


async def test_max_breadth_ignores_several_parts_of_one_plan():
    """Per-hop candidate sets (and payloads of different kinds) from one step are one plan, not
    alternative branches: ``max_breadth: 1`` must not stop a 2-hop question."""
    team = TeamRunner(roles={"planner": Planner(hops=2), "executor": Executor()}, routes=plan_routes(),
                      model=any_reply_model(), tools=None, budgets=Budgets(**{**BIG, "max_breadth": 1}))
    answer, events = await ask(team, "who directed the film's sequel?")
    assert_well_formed(answer, events, "done")
    assert answer.text == "Joel Zwick" and answer.status == "answered"
    assert [e.kind for e in events] == ["question", "entity_candidates", "relation_candidates",
                                        "relation_candidates", "query_candidates", "answer"]
    assert {e.branch for e in events} == {0}  # one plan, one branch
    assert team.last_run.used.breadth == 0 and answer.pruned == []


async def test_max_turns():
    team = runner({"max_turns": 7})
    answer, events = await ask(team)
    assert_well_formed(answer, events, "max_turns")
    role_messages = [e for e in events[:-1] if e.sender in ("brancher", "diver")]
    assert len(role_messages) == 8  # the 8th was produced and refused


async def test_max_llm_calls_stops_before_the_call():
    model = any_reply_model()
    team = runner({"max_llm_calls": 4}, model=model)
    answer, events = await ask(team)
    assert_well_formed(answer, events, "max_llm_calls")
    assert len(model.calls) == 4  # the 5th call never reached the model
    assert answer.cost.llm_calls == 4


async def test_max_tokens_stops_after_the_call_that_crossed_it():
    model = any_reply_model()
    team = runner({"max_tokens": 120}, prompt_size=200, model=model)  # ~50 tokens per diver call
    answer, events = await ask(team)
    assert_well_formed(answer, events, "max_tokens")
    assert answer.cost.prompt_tokens + answer.cost.completion_tokens > 120
    # brancher 3+1 tokens, each diver call 50+1: 4, 55, 106, then 157 > 120 on the 4th call
    assert len(model.calls) == 4
    assert answer.cost.prompt_tokens + answer.cost.completion_tokens == 157


async def test_timeout_s_clock_starts_at_ask_and_stops_promptly():
    team = runner({"timeout_s": 0.4}, sleep_s=0.15)
    time.sleep(0.5)  # a runner built long ago must not be timed out already
    t0 = time.monotonic()
    answer, events = await ask(team)
    elapsed = time.monotonic() - t0
    assert_well_formed(answer, events, "timeout_s")
    assert 0.35 < elapsed < 1.5
    assert answer.status in ("answered", "unknown")


async def test_budget_usage_visible_to_roles_and_runner():
    team = runner({"max_depth": 1})
    answer, _ = await ask(team)
    run = team.last_run
    assert run is not None and run.used.depth == 2 and run.used.breadth == 2
    assert run.metrics.role_usage["brancher"].llm_calls == 1
    assert run.metrics.role_usage["diver"].llm_calls == answer.cost.llm_calls - 1


@pytest.mark.parametrize("budget", ["max_depth", "max_turns", "max_llm_calls"])
async def test_deterministic_under_budget(budget):
    limits = {"max_depth": {"max_depth": 2}, "max_turns": {"max_turns": 6}, "max_llm_calls": {"max_llm_calls": 5}}
    a1, e1 = await ask(runner(limits[budget]))
    a2, e2 = await ask(runner(limits[budget]))
    assert [(e.sender, e.kind, e.depth, e.branch) for e in e1] == [(e.sender, e.kind, e.depth, e.branch) for e in e2]
    assert a1.text == a2.text and a1.stopped_by == a2.stopped_by == budget


class HangingModel:
    """Answers its first ``answers`` calls, then never again (a model server that hangs)."""

    name = "stuck-model"
    base_url = "http://127.0.0.1:9/v1"

    def __init__(self, answers: int):
        self.answers = answers
        self.calls = 0

    async def chat(self, messages, *, role, json_schema=None, temperature=0.0, max_tokens=None):
        from kgteam.llm.base import ChatReply

        self.calls += 1
        if self.calls > self.answers:
            await asyncio.sleep(3600)
        return ChatReply(text="ok", prompt_tokens=1, completion_tokens=1)


async def test_a_run_timed_out_inside_a_model_call_is_an_error_naming_the_model():
    answer, events = await ask(runner({"timeout_s": 0.5}, model=HangingModel(answers=0)))
    assert_well_formed(answer, events, "timeout_s")
    assert answer.status == "error" and "I don't know" not in answer.text
    assert "the model 'stuck-model' at http://127.0.0.1:9/v1 did not answer role 'brancher'" in answer.error
    assert "timeout_s=0.5 s" in answer.text


async def test_a_finalized_answer_is_kept_when_the_model_stalls_later_with_the_stall_noted():
    answer, events = await ask(runner({"timeout_s": 0.5}, model=HangingModel(answers=5)))
    assert_well_formed(answer, events, "timeout_s")
    assert answer.status == "answered" and answer.text.startswith("partial: reached depth")
    assert "the model 'stuck-model'" in answer.error and "did not answer role 'diver'" in answer.error
