"""The supervisor's scheduling rules, without AutoGen: rounds, branches, budgets per branch, joins."""

import pytest
from agents_playbook import Brancher, Diver, Judge, Peeker

from kgteam.agents.supervisor import Delivery, Supervisor
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.evidence import Usage
from kgteam.protocols.payloads import (
    Answer,
    Axiom,
    Candidate,
    EntityCandidates,
    MissingInfo,
    Question,
    RelationCandidates,
    RetrySignal,
)
from kgteam.protocols.routes import Route
from kgteam.roles.lineage import UndeclaredRead


def supervisor(budgets=None, routes=None, concurrency=4):
    routes = routes or [Route(kind="question", to=["a", "b"]), Route(kind="axiom", to=["diver"]),
                        Route(kind="missing_info", to=["diver"]), Route(kind="retry_signal", to=["a"])]
    said: list[Envelope] = []
    sup = Supervisor("s", 0, routes, {"a": Brancher(), "diver": Diver(), "peeker": Peeker(), "judge": Judge()},
                     budgets or Budgets(), concurrency=concurrency, on_envelope=said.append)
    return sup, said


def question():
    return Envelope(session_id="s", sender="user", payload=Question(text="q"))


def step(sup, delivery, sender, payloads):
    """What the bus does for one delivery: wrap the outputs and hand them back."""
    outs = sup.make_envelopes(delivery, sender, payloads, Usage(llm_calls=1))
    sup.collect(delivery, outs)
    return outs


def test_rounds_fifo_in_route_order_and_alternatives_open_branches():
    sup, said = supervisor()
    q = question()
    sup.start(q)
    first_round = sup.next_round()
    assert [d.to for d in first_round] == ["a", "b"] and first_round[0].envelope is q
    outs = step(sup, first_round[0], "a", [Axiom(text="x"), Axiom(text="y")])
    assert sup.pending == type(sup.pending)()  # nothing admitted until the whole round is back
    step(sup, first_round[1], "b", [])
    assert [e.branch for e in outs] == [1, 2] and [e.usage.llm_calls for e in outs] == [1, 0]
    assert {e.step for e in outs} == {first_round[0].step}
    assert [d.envelope.payload.text for d in sup.pending] == ["x", "y"]
    assert [e.kind for e in said] == ["question", "axiom", "axiom"]
    assert sup.used.turns == 2 and sup.used.breadth == 2


def test_concurrency_bounds_a_round():
    sup, _ = supervisor(concurrency=1)
    sup.start(question())
    assert len(sup.next_round()) == 1


def test_depth_prunes_the_branch_not_the_run():
    sup, said = supervisor(Budgets(max_depth=1))
    q = question()
    sup.start(q)
    d0 = sup.next_round()
    alts = step(sup, d0[0], "a", [Axiom(text="x"), Axiom(text="y")])
    step(sup, d0[1], "b", [])
    ax, ay = sup.next_round()
    (hx,) = step(sup, ax, "diver", [MissingInfo(description="hx")])
    (hy,) = step(sup, ay, "diver", [MissingInfo(description="hy")])
    assert hx.depth == 1 and hx.branch == alts[0].branch
    dx, dy = sup.next_round()
    (too_deep,) = step(sup, dx, "diver", [MissingInfo(description="deeper")])
    step(sup, dy, "diver", [Answer(confidence=1.0, text="found")])
    assert sup.stop is not None and sup.stop.reason == "done"  # the other branch answered
    pruned = sup.branches.pruned()
    assert [(p.branch, p.reason, p.depth) for p in pruned] == [(too_deep.branch, "max_depth", 2)]
    assert too_deep in said and too_deep not in list(sup.transcript)  # said, but never delivered or read
    assert any(e.kind == "branch_pruned" and e.payload.pruned.branch == too_deep.branch for e in said)


def test_max_breadth_keeps_the_best_scored_alternatives():
    sup, said = supervisor(Budgets(max_breadth=2), routes=[Route(kind="question", to=["a"]),
                                                           Route(kind="axiom", to=["diver"])])
    sup.start(question())
    (d,) = sup.next_round()
    outs = step(sup, d, "a", [Axiom(text=f"a{i}", score=s) for i, s in enumerate([0.1, 0.9, 0.5, 0.7])])
    kept = [dl.envelope.payload.text for dl in sup.pending]
    assert kept == ["a1", "a3"]
    pruned = {p.branch: p.reason for p in sup.branches.pruned()}
    assert pruned == {outs[0].branch: "max_breadth", outs[2].branch: "max_breadth"}
    assert sup.stop is None and sup.used.breadth == 2
    # a later alternative of the same kind has no room left
    (d2,) = sup.next_round()[:1]
    later = step_single(sup, d2, "a", [Axiom(text="late", score=1.0)])
    assert sup.branches.is_pruned(later[0].branch)


def step_single(sup, delivery, sender, payloads):
    outs = sup.make_envelopes(delivery, sender, payloads, Usage())
    sup.accept(outs)
    return outs


def test_retries_are_capped_per_branch():
    sup, _ = supervisor(Budgets(max_retries=1))
    q = question()
    sup.start(q)
    d = Delivery(q, "b")
    (r1,) = sup.make_envelopes(d, "b", [RetrySignal(phase="query", reason="empty_result")], Usage())
    sup.accept([r1])
    assert r1.attempt == 1 and sup.stop is None
    (r2,) = sup.make_envelopes(Delivery(r1, "a"), "b", [RetrySignal(phase="query", reason="empty_result")], Usage())
    assert r2.attempt == 2
    sup.accept([r2])
    assert sup.branches.is_pruned(0) and sup.last_prune_reason() == "max_retries"
    assert r2 not in list(sup.transcript)  # refused, not delivered


def test_a_nested_branch_counts_its_parents_retries_too():
    """max_retries is one budget down a branch's line: a branch opened inside another (and that one
    inside the trunk) does not get max_retries again at each level."""
    sup, _ = supervisor(Budgets(max_retries=2))
    q = question()
    sup.start(q)
    (r0,) = sup.make_envelopes(Delivery(q, "b"), "b", [RetrySignal(phase="query", reason="empty_result")], Usage())
    sup.accept([r0])  # the trunk's first retry
    (child,) = sup.make_envelopes(Delivery(r0, "a"), "a", [Axiom(text="x")], Usage())
    sup.accept([child])
    (r1,) = sup.make_envelopes(Delivery(child, "b"), "b", [RetrySignal(phase="query", reason="empty_result")], Usage())
    sup.accept([r1])  # two in its line: still within the budget
    assert child.branch != 0 and not sup.branches.is_pruned(child.branch)
    (grandchild,) = sup.make_envelopes(Delivery(r1, "a"), "a", [Axiom(text="y")], Usage())
    sup.accept([grandchild])
    assert sup.budget_view(grandchild).branch_retries == 2  # its parents' retries are its own
    (r2,) = sup.make_envelopes(Delivery(grandchild, "b"), "b", [RetrySignal(phase="query", reason="empty_result")],
                               Usage())
    sup.accept([r2])  # a third retry in one line: refused, though the grandchild never retried before
    assert grandchild.branch not in (0, child.branch) and sup.branches.is_pruned(grandchild.branch)
    assert sup.last_prune_reason() == "max_retries" and r2 not in list(sup.transcript)


def test_lineage_holds_ancestors_and_coproducts_never_a_sibling_branch():
    sup, _ = supervisor(routes=[Route(kind="question", to=["a"]), Route(kind="axiom", to=["peeker"])])
    sup.start(question())
    (d,) = sup.next_round()
    outs = step(sup, d, "a", [Axiom(text="x"), Axiom(text="y")])
    lineage = sup.lineage(outs[0], Peeker())
    assert [a.text for a in lineage.ancestors(Axiom)] == ["x"]  # not the sibling branch's "y"
    assert [e.kind for e in lineage.envelopes] == ["question", "axiom"]
    with pytest.raises(UndeclaredRead, match="reads Question but declares only Axiom"):
        lineage.ancestor(Question)  # Peeker declares only Axiom: reading more is a contract error


def test_plan_parts_from_one_step_are_one_branch():
    sup, _ = supervisor(Budgets(max_breadth=1), routes=[Route(kind="question", to=["a"])])
    q = question()
    sup.start(q)
    cands = [Candidate(iri=":x", label="x")]
    plan = sup.make_envelopes(Delivery(q, "planner"), "planner",
                              [EntityCandidates(mention="m", candidates=cands),
                               RelationCandidates(phrase="hop 0", candidates=cands),
                               RelationCandidates(phrase="hop 1", candidates=cands)], Usage())
    sup.accept(plan)
    assert sup.stop is None and sup.used.breadth == 0
    assert [e.branch for e in plan] == [0, 0, 0] and plan[-1] in list(sup.transcript)


def test_join_waits_for_the_family_then_hands_everything_over():
    routes = [Route(kind="question", to=["a"]), Route(kind="axiom", to=["diver"]),
              Route(kind="answer", to=["judge"], sender="diver", join="all")]
    sup, said = supervisor(routes=routes)
    sup.start(question())
    (d,) = sup.next_round()
    step(sup, d, "a", [Axiom(text="x"), Axiom(text="y")])
    dx, dy = sup.next_round()
    step(sup, dx, "diver", [Answer(confidence=1.0, text="from x")])
    step(sup, dy, "diver", [MissingInfo(description="still looking")])  # unrouted here: branch y ends
    (j,) = sup.next_round()
    assert j.to == "judge" and j.envelope.kind == "join"
    assert [a.text for a in j.envelope.payload.items] == ["from x"] and j.envelope.branch == 0


def test_bus_running_dry_means_no_answer():
    sup, _ = supervisor(routes=[Route(kind="question", to=["a"])])
    sup.start(question())
    (d,) = sup.next_round()
    sup.collect(d, [])
    assert sup.next_round() == [] and sup.stop.reason == "no_answer"
