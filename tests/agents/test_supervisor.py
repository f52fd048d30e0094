"""The supervisor's scheduling rules, without AutoGen: FIFO deliveries, branches, depth, budgets."""

from agents_playbook import Brancher, Diver

from kgteam.agents.supervisor import RunState
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.evidence import Usage
from kgteam.protocols.payloads import (
    Axiom,
    Candidate,
    EntityCandidates,
    MissingInfo,
    Question,
    RelationCandidates,
    RetrySignal,
)
from kgteam.protocols.routes import Route


def state(budgets=None, routes=None):
    routes = routes or [Route(kind="question", to=["a", "b"]), Route(kind="axiom", to=["diver"]),
                        Route(kind="missing_info", to=["diver"]), Route(kind="retry_signal", to=["a"])]
    return RunState(session_id="s", turn=0, routes=routes, roles={"a": Brancher(), "diver": Diver()},
                    budgets=budgets or Budgets())


def question():
    return Envelope(session_id="s", sender="user", payload=Question(text="q"))


def test_fifo_breadth_first_in_route_order():
    st = state()
    q = question()
    st.start(q)
    first, second = st.next_delivery(), st.next_delivery()
    assert (first.to, second.to) == ("a", "b") and first.envelope is q
    outs = st.make_envelopes(q, "a", [Axiom(text="x"), Axiom(text="y")], Usage(llm_calls=1))
    st.accept(outs)
    assert [e.branch for e in outs] == [0, 1] and [e.usage.llm_calls for e in outs] == [1, 0]
    assert [d.envelope.payload.text for d in st.pending] == ["x", "y"]
    assert st.next_delivery().envelope is outs[0]
    assert st.used.turns == 2 and st.used.breadth == 2


def test_depth_rule_uses_role_deepens():
    st = state(Budgets(max_depth=1))
    q = question()
    st.start(q)
    (hop,) = st.make_envelopes(q, "diver", [MissingInfo(description="h")], Usage())
    (same,) = st.make_envelopes(q, "other", [MissingInfo(description="h")], Usage())
    assert hop.depth == 1 and same.depth == 0  # only roles that declare the kind go deeper
    st.accept([hop])
    (deeper,) = st.make_envelopes(hop, "diver", [MissingInfo(description="h2")], Usage())
    st.accept([deeper])
    assert st.stop.reason == "max_depth" and st.stop.used == 2 and st.stop.limit == 1


def test_fan_out_to_more_recipients_than_breadth_stops():
    st = state(Budgets(max_breadth=1))
    st.start(question())  # routed to a and b
    assert st.stop.reason == "max_breadth"
    assert st.next_delivery() is None


def test_breadth_counts_declared_branches_only():
    st = state(Budgets(max_breadth=1), routes=[Route(kind="question", to=["a"])])
    q = question()
    st.start(q)
    cands = [Candidate(iri=":x", label="x")]
    # a role without ``branches``: two hops of one plan, plus a payload of another kind
    plan = st.make_envelopes(q, "planner", [EntityCandidates(mention="m", candidates=cands),
                                            RelationCandidates(phrase="hop 0", candidates=cands),
                                            RelationCandidates(phrase="hop 1", candidates=cands)], Usage())
    st.accept(plan)
    assert st.stop is None and st.used.breadth == 0
    assert [e.branch for e in plan] == [0, 0, 0] and plan[-1] in st.transcript
    # the same number of alternatives from a role that declares them is a fan-out of 2
    alternatives = st.make_envelopes(q, "a", [Axiom(text="x"), Axiom(text="y")], Usage())
    assert [e.branch for e in alternatives] == [0, 1]
    st.accept(alternatives)
    assert st.stop.reason == "max_breadth" and st.stop.used == 2 and st.stop.limit == 1


def test_retry_attempts_counted_and_capped():
    st = state(Budgets(max_retries=1))
    q = question()
    st.start(q)
    (r1,) = st.make_envelopes(q, "b", [RetrySignal(phase="p", reason="empty_result")], Usage())
    st.accept([r1])
    assert r1.attempt == 1 and st.stop is None
    (r2,) = st.make_envelopes(r1, "b", [RetrySignal(phase="p", reason="empty_result")], Usage())
    assert r2.attempt == 2
    st.accept([r2])
    assert st.stop.reason == "max_retries"
    assert r2 not in st.transcript  # refused, not delivered


def test_bus_running_dry_means_no_answer():
    st = state(routes=[Route(kind="question", to=["a"])])
    st.start(question())
    st.next_delivery()
    assert st.next_delivery() is None and st.stop.reason == "no_answer"
