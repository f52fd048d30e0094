"""KERAG end to end through the runtime, on the hand-written atelier KG (its own predicate names)."""

from __future__ import annotations

import json

import pytest

from kgteam.llm.no_model import NoModel
from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.payloads import RetrievalPlan, Subgraph
from kgteam.roles.base import ListTrace
from kgteam.team_builder import playbook_runner
from kgteam.tools.kg_tools import KGTools

EX = "http://example.org/atelier/"


@pytest.fixture(scope="module")
def atelier(atelier_home) -> KGTools:
    from kgteam.tools.kg import open_kg

    tools = KGTools.from_kg(open_kg("atelier", home=atelier_home))
    yield tools
    tools.close()


def _runner(model, tools, trace=None, **kwargs):
    return playbook_runner("kerag", model, tools, trace=trace, **kwargs)


async def test_two_topic_entities_are_joined_and_every_answer_has_both_facts(atelier):
    trace = ListTrace()
    answer = await _runner(NoModel(), atelier, trace).ask(
        "Which maker has a bench at Lantern Street Bindery and is a native of Velmora?")
    assert answer.status == "answered", answer.text
    assert {v.iri for v in answer.values} == {EX + "TobiahFenn", EX + "LenaQuist"}  # Ilse Marrow is from Caldry
    assert answer.grounded
    cited = {(t.subject, t.predicate, t.object) for t in answer.evidence.triples[:4]}
    assert (EX + "TobiahFenn", EX + "benchAt", EX + "LanternStreetBindery") in cited
    assert (EX + "TobiahFenn", EX + "nativeOf", EX + "Velmora") in cited
    _assert_citations_are_the_evidence(answer)
    # KERAG's own join, or (the question names the class "maker") the query graph's intersection
    assert any(line.startswith(("both paths lead to", "intersection:")) for line in answer.evidence.reasoning)


def _assert_citations_are_the_evidence(answer):
    """Every "t<n> (s, p, o)" of the reasoning is the n-th evidence triple, and every step cites one."""
    import re

    cited = [(int(n), text) for line in answer.evidence.reasoning
             for n, text in re.findall(r"t(\d+) (\([^)]*\))", line)]
    assert cited
    assert all(answer.evidence.triples[n].readable() == text for n, text in cited)
    assert not any("no triple fetched" in line for line in answer.evidence.reasoning)


async def test_a_join_through_a_two_hop_path_cites_both_hops(atelier):
    answer = await _runner(NoModel(), atelier).ask(
        "Which book was crafted by an apprentice of Ilse Marrow and issued by Harrow and Quill Press?")
    assert answer.status == "answered", answer.text
    assert [v.iri for v in answer.values] == [EX + "SaltLedger"] and answer.grounded
    _assert_citations_are_the_evidence(answer)
    facts = {(t.subject, t.predicate, t.object) for t in answer.evidence.triples}
    assert {(EX + "TobiahFenn", EX + "apprenticeOf", EX + "IlseMarrow"),
            (EX + "SaltLedger", EX + "craftedBy", EX + "TobiahFenn"),
            (EX + "SaltLedger", EX + "issuedBy", EX + "HarrowQuill")} <= facts


async def test_either_or_unites_the_answers_of_two_entities(atelier):
    answer = await _runner(NoModel(), atelier).ask(
        "Which maker was honoured with the Fenwick Medal or with the Golden Awl Prize?")
    assert answer.status == "answered", answer.text
    assert {v.iri for v in answer.values} == {EX + "OdileStrand", EX + "TeodorVance", EX + "IlseMarrow"}
    assert answer.grounded  # each answer is reached by one path or the other


async def test_a_two_hop_question_grows_the_plan_one_hop_per_turn(atelier):
    trace = ListTrace()
    runner = _runner(NoModel(), atelier, trace)
    answer = await runner.ask("Who is the apprentice of the founder of Greywater Pottery?")
    assert answer.status == "answered", answer.text
    assert [v.iri for v in answer.values] == [EX + "CasparWren"]
    filters = [e for e in trace.events if e.get("event") == "plan_filter"]
    assert [e["hop"] for e in filters] == [1, 2, 3]  # three hops planned, the 2-hop path kept and chosen
    assert filters[-1]["sufficient"] is True
    assert [s.predicate for s in answer.evidence.matches] == [EX + "startedBy", EX + "apprenticeOf"]


async def test_the_triple_budget_bounds_the_subgraph(atelier):
    trace = ListTrace()
    runner = _runner(NoModel(), atelier, trace, settings={"retriever": {"triple_budget": 3}})
    await runner.ask("Which books were issued by Harrow and Quill Press?")
    retrieved = [e for e in trace.events if e.get("event") == "retrieved"]
    assert retrieved and retrieved[0]["triples"] <= 3 and retrieved[0]["truncated"] is True


async def test_a_triple_already_fetched_costs_nothing_again(atelier):
    """The 2-hop walk fills a budget of 2; the 1-hop path it starts with still gets its triple."""
    from kgteam.roles.kerag.retrieval import retrieve
    from kgteam.roles.semantic import SemanticLayer
    from kgteam.roles.semantic.path_planning import Limits, expand, filter_hop
    from kgteam.roles.semantic.topics import find_topics

    tools = atelier.toolbox()
    question = "Which books were crafted by the apprentices of Ilse Marrow?"
    topics = await find_topics(question, tools)
    layer, limits = SemanticLayer(tools), Limits(triple_budget=2)
    kept = []
    for hop in (1, 2):
        keep, _ = await filter_hop(layer, question, topics, kept, await expand(tools, topics, kept, hop, limits), limits)
        kept += keep
    graph = await retrieve(layer, question, topics, kept, limits)
    assert len(graph.triples) == 2
    best = graph.readings[0]
    assert [graph.paths[i].explain() for i in best.paths] and len(best.triple_ids) == 2
    one_hop = next(p for p in graph.paths if [s.predicate for s in p.steps] == [EX + "apprenticeOf"])
    assert one_hop.triple_ids  # (Tobiah Fenn, apprentice of, Ilse Marrow) is already in: it costs nothing


async def test_no_entity_means_i_dont_know(atelier):
    answer = await _runner(NoModel(), atelier).ask("Which quasar emits the most gamma rays?")
    assert answer.status == "unknown" and answer.text.startswith("I don't know")
    assert "no entity" in answer.text and not answer.values


def _scripted() -> ScriptedModel:
    def vote(messages):
        user = messages[-1]["content"]
        ids = [line.split(":")[0] for line in user.splitlines() if line.startswith("o")]
        return json.dumps({"keep": ids[:2], "sufficient": False})

    return (ScriptedModel()
            .add("planner", None, json.dumps({"mentions": ["Greywater Pottery"]}))
            .add("schema_filter", None, vote)
            .add("summarizer", None, json.dumps({"chosen": ["o1"], "reason": "the founder's apprentice"})))


async def test_model_calls_are_about_hops_plus_two(atelier):
    model = _scripted()
    trace = ListTrace()
    answer = await _runner(model, atelier, trace, settings={"schema_filter": {"top_n": 2, "swing": 1}}).ask(
        "Who is the apprentice of the founder of Greywater Pottery?")
    assert answer.status == "answered" and [v.iri for v in answer.values] == [EX + "CasparWren"]
    hops = sum(1 for e in trace.events if e.get("event") == "plan_filter")
    assert hops == 3 and 1 <= len(model.calls_for("schema_filter")) <= hops
    assert len(model.calls_for("planner")) == 1 and len(model.calls_for("summarizer")) <= 1
    assert len(model.calls) <= hops + 2
    assert answer.cost.llm_calls == len(model.calls)
    assert not answer.fallbacks  # every model output was valid


async def test_a_model_vote_swaps_paths_at_the_cut(atelier):
    """With one path kept per hop, the model's pick among the two nearest the cut is what is kept."""
    def vote(messages):
        user = messages[-1]["content"]
        lines = [line for line in user.splitlines() if line.startswith("o")]
        second = lines[1].split(":")[0] if len(lines) > 1 else lines[0].split(":")[0]
        return json.dumps({"keep": [second], "sufficient": False})

    model = ScriptedModel().add("planner", None, json.dumps({"mentions": []})).add("schema_filter", None, vote) \
        .add("summarizer", None, json.dumps({"chosen": ["o1"]}))
    trace = ListTrace()
    await _runner(model, atelier, trace, settings={"schema_filter": {"top_n": 1, "swing": 1, "max_hops": 1}}).ask(
        "Which books were issued by Harrow and Quill Press?")
    (filtered,) = [e for e in trace.events if e.get("event") == "plan_filter"]
    (voted,) = [e for e in trace.events if e.get("event") == "filter_vote"]
    assert filtered["kept"] == voted["picked"] and filtered["kept"] != ["^issued by"]


async def test_the_models_sufficient_is_checked_against_the_words(atelier):
    """The model says hop 1 is enough; the best 1-hop path leaves "apprentice" unexplained, so the
    plan goes on and the 2-hop answer stands."""
    model = (ScriptedModel().add("planner", None, json.dumps({"mentions": []}))
             .add("schema_filter", None, json.dumps({"keep": [], "sufficient": True}))
             .add("summarizer", None, json.dumps({"chosen": ["o1"]})))
    trace = ListTrace()
    answer = await _runner(model, atelier, trace, settings={"schema_filter": {"top_n": 2, "swing": 1}}).ask(
        "Who is the apprentice of the founder of Greywater Pottery?")
    assert [v.iri for v in answer.values] == [EX + "CasparWren"]
    first = next(e for e in trace.events if e.get("event") == "plan_filter")
    assert first["sufficient"] is False and "leaves words unexplained" in first["reason"]


async def test_an_entity_with_no_relations_says_so(atelier):
    answer = await _runner(NoModel(), atelier).ask("What is a craftsperson?")
    assert answer.status == "unknown" and "no relation around the question's entities" in answer.text


async def test_plan_payloads_show_kept_and_dropped_paths(atelier):
    from kgteam.roles.semantic import SemanticLayer
    from kgteam.roles.semantic.path_planning import Limits, expand, filter_hop
    from kgteam.roles.semantic.topics import find_topics

    tools = atelier.toolbox()
    question = "Which books were issued by Harrow and Quill Press?"
    topics = await find_topics(question, tools)
    assert [t.text for t in topics] == ["Harrow and Quill Press"]
    candidates = await expand(tools, topics, [], 1, Limits())
    assert {c.steps[0].predicate for c in candidates} >= {EX + "issuedBy", EX + "headquarteredIn"}
    assert all(c.count for c in candidates)  # schema level: counts, no instances
    keep, drop = await filter_hop(SemanticLayer(tools), question, topics, [], candidates, Limits(top_n=1))
    assert [p.steps[0].predicate for p in keep] == [EX + "issuedBy"] and drop
    plan = RetrievalPlan(topic_entities=[EX + "HarrowQuill"], kept=keep, dropped=[[p.explain() for p in drop]],
                         stage="filtered", hops=1)
    assert "issued by" in plan.summary()
    assert Subgraph(triples=[]).summary() == "0 triples over 0 paths"
