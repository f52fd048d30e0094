"""Triad's generalist writes query-graph templates; the decision maker fills them from the KG.

On the isles KG (camelCase predicates, no relation labels), a scripted model writes count,
superlative and intersection templates and Triad answers them; an invalid template is repaired
once, then the deterministic reading stands.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kgteam.llm.no_model import NoModel
from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.graph_template import GraphTemplate, structure_problem
from kgteam.roles.base import ListTrace
from kgteam.roles.semantic.shape import read_shape
from kgteam.roles.triad.generalist import Generalist
from kgteam.roles.triad.graph_filling import question_problem
from kgteam.team_builder import playbook_runner
from kgteam.tools.kg_tools import KGTools

COUNT_Q = "How many regions does the Grisk flow through?"
COUNT = {"shape": "count", "entities": ["Grisk"], "relations": ["flows through"], "triples": ["<E0> <R0> ?x"],
         "answer": "?x", "kind": "number", "class_word": "region"}
# no superlative word: the words alone read a chain
TOP_Q = "Which mountain in Havenmoor rises above all others?"
TOP = {"shape": "superlative", "entities": ["Havenmoor"], "relations": ["peak in"], "triples": ["?x <R0> <E0>"],
       "answer": "?x", "order": "max", "order_by": "elevation", "kind": "entity", "class_word": "mountain"}
BOTH_Q = "Which rivers flowing through Quillsey also flow through Lunmark?"
BOTH = {"shape": "intersection", "entities": ["Quillsey", "Lunmark"], "relations": ["flows through", "flows through"],
        "triples": ["?x <R0> <E0>", "?x <R1> <E1>"], "answer": "?x", "kind": "entity", "class_word": "river"}


@pytest.fixture(scope="module")
def isles(isles_home: Path) -> KGTools:
    from kgteam.tools.kg import open_kg

    tools = KGTools.from_kg(open_kg("isles", home=isles_home))
    yield tools
    tools.close()


def _model(template: dict) -> ScriptedModel:
    return ScriptedModel().add("generalist", None, json.dumps(template)).add("*", None, "no idea")


async def _ask(tools: KGTools, model, question: str):
    trace = ListTrace()
    answer = await playbook_runner("triad", model, tools, trace=trace).ask(question)
    fills = [e for e in trace.events if e["event"] == "template_fill"]
    parse = [e for e in trace.events if e["event"] == "decision" and e["role"] == "generalist"]
    return answer, fills, parse


# ------------------------------------------------------------------ the template itself
def test_the_prompt_renders_and_its_examples_are_valid_templates():
    [system, user] = Generalist().prompt("generalist_parse").render(
        question="<<<question\nhow many lakes\nquestion>>>", notes="The question's words ask for the shape: count.",
        max_hops=3)
    assert "<E0>" in system["content"] and "how many lakes" in user["content"]
    assert "shape: count" in user["content"] and "at most 3" in user["content"]
    examples = [json.loads(line) for line in user["content"].splitlines() if line.startswith("{")]
    assert {e["shape"] for e in examples} >= {"chain", "count", "superlative", "ask", "intersection"}
    for e in examples:
        assert structure_problem(GraphTemplate.model_validate(e)) is None, e


@pytest.mark.parametrize(("change", "words"), [
    ({"triples": ["<http://example.org/x> <R0> ?x"]}, "placeholders"),
    ({"relations": ["flows through", "unused"]}, "exactly one triple"),
    ({"kind": "entity"}, "count has kind number"),
    ({"shape": "ask", "kind": "boolean"}, "two entities"),
    ({"answer": "?y"}, "must occur"),
    ({"triples": ["<E0> <R0> ?x", "?y <R1> ?z"], "relations": ["a", "b"]}, "connected"),
])
def test_structure_problems_are_named_for_the_repair(change, words):
    assert structure_problem(GraphTemplate.model_validate(COUNT)) is None
    assert words in (structure_problem(GraphTemplate.model_validate({**COUNT, **change})) or "")


def test_the_question_must_hold_the_names_and_its_shape_words_bind_the_model():
    seen = read_shape(COUNT_Q)
    assert question_problem(GraphTemplate.model_validate(COUNT), COUNT_Q, ["Grisk"], seen) is None
    chain = {**COUNT, "shape": "chain", "kind": "entity"}
    assert "count, not a chain" in question_problem(GraphTemplate.model_validate(chain), COUNT_Q, ["Grisk"], seen)
    other = {**COUNT, "entities": ["Ammel"]}
    assert "does not occur" in question_problem(GraphTemplate.model_validate(other), COUNT_Q, ["Grisk"], seen)
    # words that show no shape leave it to the model
    assert question_problem(GraphTemplate.model_validate(TOP), TOP_Q, ["Havenmoor"], read_shape(TOP_Q)) is None


# ------------------------------------------------------------------ filled from the KG, end to end
async def test_a_count_template_is_filled_and_counted(isles):
    answer, fills, parse = await _ask(isles, _model(COUNT), COUNT_Q)
    assert (answer.status, answer.text) == ("answered", "3")
    assert parse[0]["source"] == "llm" and fills[0]["filled"] and fills[0]["shape"] == "count"
    assert answer.cost.llm_calls <= 8


async def test_a_superlative_template_answers_what_the_words_alone_do_not(isles):
    floor, _, _ = await _ask(isles, NoModel(), TOP_Q)
    answer, fills, _ = await _ask(isles, _model(TOP), TOP_Q)
    assert answer.status == "answered" and [v.label for v in answer.values] == ["Mount Orrin"]
    assert fills[0]["filled"] and "elevation" in fills[0]["reading"]
    assert [v.label for v in floor.values] != ["Mount Orrin"]  # without the template: no ordering
    assert re.search(r"ORDER BY|MAX\(", answer.evidence.queries[0].sparql)
    # the advisor answers from the reading that ran: its ordered set is the evidence, its confidence stated
    assert any(t.predicate.endswith("elevationM") for t in answer.evidence.triples)
    assert answer.confidence == pytest.approx(fills[0]["confidence"])
    assert answer.cost.llm_calls <= 8


async def test_an_intersection_template_joins_the_two_entities(isles):
    answer, fills, _ = await _ask(isles, _model(BOTH), BOTH_Q)
    assert answer.status == "answered" and [v.label for v in answer.values] == ["Grisk"]
    assert fills[0]["filled"] and fills[0]["shape"] == "intersection"
    assert answer.cost.llm_calls <= 8


async def test_an_invalid_template_falls_back_to_the_deterministic_reading(isles):
    floor, _, _ = await _ask(isles, NoModel(), COUNT_Q)
    chain = {**COUNT, "shape": "chain", "kind": "entity"}  # "how many" cannot become a list
    answer, fills, parse = await _ask(isles, _model(chain), COUNT_Q)
    assert parse[0]["source"] == "fallback" and parse[0]["attempts"] == 2
    assert "count, not a chain" in parse[0]["errors"][0]
    assert not fills
    assert (answer.status, answer.text) == (floor.status, floor.text) == ("answered", "3")


async def test_a_yes_no_template_is_filled_from_either_entity(isles):
    ask = {"shape": "ask", "entities": ["Ammel", "Ostrand"], "relations": ["flows through"],
           "triples": ["<E0> <R0> <E1>"], "kind": "boolean"}
    no, fills, _ = await _ask(isles, _model(ask), "Does the Ammel flow through Ostrand?")
    yes, _, _ = await _ask(isles, _model({**ask, "entities": ["Ammel", "Havenmoor"]}),
                           "Does the Ammel flow through Havenmoor?")
    assert fills[0]["filled"] and fills[0]["shape"] == "ask"
    assert (no.status, no.text, yes.status, yes.text) == ("answered", "No", "answered", "Yes")
