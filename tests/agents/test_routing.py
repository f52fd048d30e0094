"""The pure routing function, on its own."""

from kgteam.agents.routing import route
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.evidence import Evidence, EvidenceQuery
from kgteam.protocols.payloads import Answer, Grade, MissingInfo, QueryResult, Question, RetrySignal
from kgteam.protocols.routes import Route


def env(payload, sender="user"):
    return Envelope(session_id="s", sender=sender, payload=payload)


def test_routes_by_kind_in_route_order_without_duplicates():
    routes = [
        Route(kind="question", to=["contextualizer", "logger"]),
        Route(kind="answer", to=["grader"]),
        Route(kind="question", to=["logger", "generalist"]),
    ]
    assert route(env(Question(text="q")), routes) == ["contextualizer", "logger", "generalist"]
    assert route(env(Answer(confidence=1.0, text="a")), routes) == ["grader"]
    assert route(env(Grade(grader="g", verdict=True)), routes) == []


def test_when_equality_and_bool_is_not_int():
    routes = [Route(kind="grade", to=["rewriter"], when={"verdict": False}),
              Route(kind="grade", to=["answerer"], when={"verdict": True})]
    assert route(env(Grade(grader="g", verdict=False)), routes) == ["rewriter"]
    assert route(env(Grade(grader="g", verdict=True)), routes) == ["answerer"]
    assert route(env(Grade(grader="g", verdict=True)), [Route(kind="grade", to=["x"], when={"verdict": 1})]) == []


def test_when_list_means_one_of():
    routes = [Route(kind="retry_signal", to=["generalist"], when={"phase": ["parsing", "query"]}),
              Route(kind="retry_signal", to=["decision_maker"], when={"phase": "linking"})]
    assert route(env(RetrySignal(phase="query", reason="empty_result")), routes) == ["generalist"]
    assert route(env(RetrySignal(phase="linking", reason="empty_result")), routes) == ["decision_maker"]
    assert route(env(RetrySignal(phase="grading", reason="grader_no")), routes) == []


def test_when_dotted_path_into_nested_models_and_lists():
    answer = Answer(confidence=1.0, text="a", evidence=Evidence(queries=[EvidenceQuery(sparql="SELECT", row_count=0)]))
    assert route(env(answer), [Route(kind="answer", to=["r"], when={"evidence.queries.0.row_count": 0})]) == ["r"]
    assert route(env(answer), [Route(kind="answer", to=["r"], when={"evidence.queries.0.row_count": 3})]) == []
    # a missing path never matches (not even against None)
    assert route(env(answer), [Route(kind="answer", to=["r"], when={"evidence.queries.5.row_count": None})]) == []
    assert route(env(answer), [Route(kind="answer", to=["r"], when={"nope": None})]) == []
    result = QueryResult(sparql="S", rows=[{"x": "1"}])
    assert route(env(result), [Route(kind="query_result", to=["r"], when={"rows.0.x": "1"})]) == ["r"]


def test_all_conditions_and_sender_must_hold():
    routes = [Route(kind="question", to=["generalist"], sender="contextualizer"),
              Route(kind="question", to=["contextualizer"], sender="user")]
    assert route(env(Question(text="q"), sender="user"), routes) == ["contextualizer"]
    assert route(env(Question(text="q"), sender="contextualizer"), routes) == ["generalist"]
    two = [Route(kind="answer", to=["r"], when={"status": "answered", "grounded": True})]
    assert route(env(Answer(confidence=1.0, text="a", grounded=True)), two) == ["r"]
    assert route(env(Answer(confidence=1.0, text="a", grounded=False)), two) == []


def test_wildcard_kind():
    assert route(env(Question(text="q")), [Route(kind="*", to=["audit"])]) == ["audit"]


def test_envelope_conditions_and_operators_with_budget_operands():
    """"deeper while depth < max_depth, else a new branch": the operand names a budget, not a copied number."""
    routes = [Route(kind="missing_info", to=["diver"], when={"envelope.depth": {"lt": "max_depth"}}),
              Route(kind="missing_info", to=["surfacer"], when={"envelope.depth": {"ge": "max_depth"}})]
    budgets = Budgets(max_depth=2)
    shallow = Envelope(session_id="s", sender="diver", payload=MissingInfo(description="x"), depth=1)
    deep = Envelope(session_id="s", sender="diver", payload=MissingInfo(description="x"), depth=2)
    assert route(shallow, routes, budgets) == ["diver"]
    assert route(deep, routes, budgets) == ["surfacer"]
    assert route(deep, routes, Budgets(max_depth=5)) == ["diver"]
    by_attempt = [Route(kind="question", to=["again"], when={"envelope.attempt": {"gt": 0, "le": 2}})]
    assert route(Envelope(session_id="s", sender="user", payload=Question(text="q"), attempt=1), by_attempt) == ["again"]
    assert route(Envelope(session_id="s", sender="user", payload=Question(text="q"), attempt=3), by_attempt) == []
    assert route(env(Question(text="q")), [Route(kind="question", to=["x"], when={"envelope.sender": {"ne": "user"}})]) == []
    assert route(env(RetrySignal(phase="query", reason="empty_result")),
                 [Route(kind="retry_signal", to=["x"], when={"phase": {"not_in": ["parsing", "linking"]}})]) == ["x"]
