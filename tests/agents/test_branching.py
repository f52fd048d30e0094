"""Branching teams on the real bus: per-branch pruning, best-of breadth, joins, concurrency, lineage.

A two-branch playbook whose branches go deeper until a condition, run with the scripted model
(no network): what R3's tree search, KERAG's hops and adaptive RAG's loops need from the runtime.
"""

import time

from agents_playbook import (
    Brancher,
    Diver,
    Judge,
    Peeker,
    Surfacer,
    any_reply_model,
    deepen_then_branch_routes,
    explore_routes,
    join_routes,
)

from kgteam.agents.team import TeamRunner
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.routes import Route

BIG = dict(max_depth=100, max_breadth=10, max_retries=10, max_turns=1000, max_llm_calls=1000,
           max_tokens=10**7, timeout_s=60)


def team(roles, routes, concurrency=4, answer_role=None, **budgets):
    return TeamRunner(roles=roles, routes=routes, model=any_reply_model(), tools=None,
                      budgets=Budgets(**{**BIG, **budgets}), answer_role=answer_role, concurrency=concurrency)


async def ask(runner, question="explore"):
    events = []
    answer = await runner.ask(question, on_event=events.append)
    return answer, events


async def test_a_branch_past_max_depth_is_pruned_while_the_other_answers_and_the_join_sees_both():
    runner = team({"brancher": Brancher(n=2), "diver": Diver(answer_at=1, answer_on=("axiom 0",)),
                   "judge": Judge()}, join_routes("all"), max_depth=2)
    answer, events = await ask(runner)
    assert answer.status == "answered" and answer.stopped_by == "done"
    # the join waited for the diving branch to be pruned, then got the other's result and the prune record
    assert answer.text == "found at depth 1 via axiom 0 | pruned 2:max_depth"
    join = next(e for e in events if e.kind == "join")
    assert join.payload.branches == [1] and [p.reason for p in join.payload.pruned] == ["max_depth"]
    assert [(p.branch, p.reason) for p in answer.pruned] == [(2, "max_depth")]
    assert max(e.depth for e in events if e.branch == 2 and e.kind == "missing_info") == 3


async def test_join_receives_every_branch_result():
    runner = team({"brancher": Brancher(n=2), "diver": Diver(answer_at=1), "judge": Judge()}, join_routes("all"))
    answer, events = await ask(runner)
    assert answer.text == "found at depth 1 via axiom 0; found at depth 1 via axiom 1"
    assert [v.label for v in answer.values] == ["found at depth 1 via axiom 0", "found at depth 1 via axiom 1"]
    assert sum(1 for e in events if e.kind == "join") == 1


async def test_join_first_takes_the_first_result_and_prunes_the_siblings():
    runner = team({"brancher": Brancher(n=2), "diver": Diver(answer_at=1, answer_on=("axiom 1",)),
                   "judge": Judge()}, join_routes("first"))
    answer, events = await ask(runner)
    assert answer.text.startswith("found at depth 1 via axiom 1")
    assert [(p.branch, p.reason) for p in answer.pruned] == [(1, "join_first")]


async def test_max_breadth_two_of_four_alternatives_keeps_the_two_best():
    runner = team({"brancher": Brancher(n=4, scores=[0.2, 0.9, 0.1, 0.7]), "diver": Diver(answer_at=1),
                   "judge": Judge()}, join_routes("all"), max_breadth=2)
    answer, events = await ask(runner)
    assert answer.text.startswith("found at depth 1 via axiom 1; found at depth 1 via axiom 3")
    assert sorted(p.reason for p in answer.pruned) == ["max_breadth", "max_breadth"]
    pruned_axioms = {e.payload.text for e in events if e.kind == "axiom"
                     and e.branch in {p.branch for p in answer.pruned}}
    assert pruned_axioms == {"axiom 0", "axiom 2"}


async def test_branches_run_concurrently():
    def make(concurrency):
        return team({"brancher": Brancher(n=2), "diver": Diver(answer_at=2, sleep_s=0.25), "judge": Judge()},
                    join_routes("all"), concurrency=concurrency)

    t0 = time.perf_counter()
    together, _ = await ask(make(4))
    concurrent_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    one_by_one, _ = await ask(make(1))
    sequential_s = time.perf_counter() - t0
    assert together.text == one_by_one.text  # same result either way
    # 3 levels x 0.25 s per branch: ~0.75 s together against ~1.5 s one at a time
    assert concurrent_s < 0.7 * sequential_s, (concurrent_s, sequential_s)


async def test_a_role_cannot_read_a_sibling_branch():
    runner = team({"brancher": Brancher(n=2), "peeker": Peeker(sleep_s=0.05), "judge": Judge()},
                  [Route(kind="question", to=["brancher"]), Route(kind="axiom", to=["peeker"]),
                   Route(kind="answer", to=["judge"], sender="peeker", join="all")])
    answer, _ = await ask(runner)
    assert answer.text == "axiom 0 sees ['axiom 0']; axiom 1 sees ['axiom 1']"


async def test_deeper_while_depth_below_max_depth_else_a_new_branch():
    runner = team({"surfacer": Surfacer(), "diver": Diver(answer_at=1, answer_on=("axiom 1",))},
                  deepen_then_branch_routes(), max_depth=2, max_breadth=3)
    answer, events = await ask(runner)
    assert answer.text == "found at depth 1 via axiom 1"
    axioms = [(e.payload.text, e.branch, e.depth) for e in events if e.kind == "axiom"]
    assert axioms == [("axiom 0", 1, 0), ("axiom 1", 2, 0)]  # a new branch starts at depth 0
    assert [e.sender for e in events if e.kind == "axiom"] == ["surfacer", "surfacer"]


async def test_new_branches_stop_at_max_breadth_and_the_run_says_so():
    runner = team({"surfacer": Surfacer(), "diver": Diver()}, deepen_then_branch_routes(),
                  answer_role="diver", max_depth=1, max_breadth=2)
    answer, events = await ask(runner)
    assert answer.stopped_by == "max_breadth"
    assert [e.payload.text for e in events if e.kind == "axiom"] == ["axiom 0", "axiom 1", "axiom 2"]
    assert [(p.branch, p.reason) for p in answer.pruned] == [(3, "max_breadth")]
    assert answer.text.startswith("partial: reached depth") and events[-2].kind == "budget_exceeded"


async def test_run_wide_budget_still_ends_the_run_with_the_best_answer_so_far():
    runner = team({"brancher": Brancher(n=2), "diver": Diver()}, explore_routes(), answer_role="diver",
                  max_llm_calls=5)
    answer, events = await ask(runner)
    assert answer.stopped_by == "max_llm_calls" and answer.text.startswith("partial: reached depth")
