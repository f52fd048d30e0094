"""KERAG beyond chains, model-free, on the isles KG (camelCase predicates, no relation labels):
the summarizer answers counts, superlatives, yes/no and two-entity joins through the query graph,
and leaves chain questions exactly as the retrieved readings answer them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgteam.llm.no_model import NoModel
from kgteam.roles.base import ListTrace
from kgteam.team_builder import playbook_runner
from kgteam.tools.kg_tools import KGTools

IS = "http://example.org/isles/"


@pytest.fixture(scope="module")
def isles(isles_home: Path) -> KGTools:
    from kgteam.tools.kg import open_kg

    tools = KGTools.from_kg(open_kg("isles", home=isles_home))
    yield tools
    tools.close()


async def _ask(tools: KGTools, question: str, *, shapes: bool = True, trace: ListTrace | None = None):
    runner = playbook_runner("kerag", NoModel(), tools, trace=trace,
                             settings={"summarizer": {"shapes": shapes}})
    return await runner.ask(question)


async def test_a_count_is_a_number_citing_the_counted_set(isles):
    a = await _ask(isles, "How many regions does the Grisk flow through?")
    assert (a.status, a.text) == ("answered", "3")
    assert a.confidence is not None and a.confidence >= 0.5 and a.grounded
    assert {t.object_label for t in a.evidence.triples} == {"Ostrand", "Lunmark", "Quillsey"}
    assert "COUNT(DISTINCT" in a.evidence.queries[0].sparql


async def test_a_superlative_orders_by_the_named_literal_and_keeps_ties(isles):
    a = await _ask(isles, "What is the highest mountain in Ostrand?")
    assert a.status == "answered"
    assert {v.iri for v in a.values} == {IS + "Mount_Sel", IS + "Brae_Pike"}  # both 2950 m


async def test_yes_and_no_come_from_an_ask_query(isles):
    yes = await _ask(isles, "Does the Grisk flow into the Vell Sound?")
    no = await _ask(isles, "Does the Ammel flow into the Vell Sound?")
    assert (yes.status, yes.text, no.status, no.text) == ("answered", "Yes", "answered", "No")
    assert yes.evidence.queries[0].sparql.startswith("ASK")


async def test_two_entities_are_intersected(isles):
    a = await _ask(isles, "Which languages are official in both Havenmoor and Quillsey?")
    assert a.status == "answered" and [v.label for v in a.values] == ["Merrow"]  # not either side's other language


async def test_shapes_off_leaves_the_chain_readings_and_a_chain_question_is_unchanged(isles):
    off = await _ask(isles, "How many regions does the Grisk flow through?", shapes=False)
    assert off.text != "3"  # without the query graph the retrieved chain readings cannot count
    trace = ListTrace()
    on = await _ask(isles, "What is the capital of Quillsey?", trace=trace)
    plain = await _ask(isles, "What is the capital of Quillsey?", shapes=False)
    assert on.status == "answered" and [v.iri for v in on.values] == [IS + "Fennick"]
    assert on.model_dump(include={"text", "values", "confidence", "grounded", "evidence"}) == \
        plain.model_dump(include={"text", "values", "confidence", "grounded", "evidence"})
    assert not any(e.get("shape") for e in trace.events if e.get("event") == "summary")


async def test_a_chain_whose_kind_is_a_kg_class_ends_in_that_class(isles):
    a = await _ask(isles, "Which river flows through Corlis?")
    labels = [v.label for v in a.values]
    assert a.status == "answered" and "Ammel" in labels and "Havenmoor" not in labels  # rivers, not its region
