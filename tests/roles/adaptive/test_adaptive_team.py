"""The adaptive team end to end through the runtime: a small real KG, a small real corpus
(tantivy BM25 + dense index, built by the corpus builder), the KERAG sub-team behind the router."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgteam.llm.no_model import NoModel
from kgteam.llm.scripted import ScriptedModel
from kgteam.protocols.payloads import Answer, Documents, RouteDecision
from kgteam.roles.base import ListTrace
from kgteam.team_builder import playbook_runner
from kgteam.tools.toolbox import Toolbox
from kgteam.tools.web.corpus import open_corpus
from kgteam.tools.web.corpus_build import build_corpus
from kgteam.tools.web.resource import WebSearch
from kgteam.tools.web.tool import web_search

DATA = Path(__file__).resolve().parents[2] / "data" / "adaptive"


def _toolbox(small_tools, home: Path, name: str) -> Toolbox:
    search = WebSearch(open_corpus(name, home))
    web = Toolbox.from_callables({"web_search": web_search}, [search])
    return Toolbox({**dict(small_tools.toolbox().items()), **dict(web.items())})


@pytest.fixture(scope="module")
def corpus_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("adaptive_corpora")
    build_corpus("films", [DATA / "docs.jsonl"], home=home, progress=None)
    build_corpus("films_injected", [DATA / "docs.jsonl", DATA / "injected.jsonl"], home=home, progress=None)
    return home


async def _ask(question, small_tools, corpus_home, *, corpus="films", model=None, settings=None, budgets=None):
    trace = ListTrace()
    runner = playbook_runner("adaptive", model or NoModel(), _toolbox(small_tools, corpus_home, corpus),
                             trace=trace, settings=settings, budgets=budgets)
    seen = [env async for env in runner.stream(question, session_id="t")]
    answer = seen[-1].payload
    assert isinstance(answer, Answer)
    return answer, seen, trace


def _first_route(seen):
    return next(e.payload for e in seen if isinstance(e.payload, RouteDecision) and e.sender == "router")


async def test_a_question_the_kg_answers_goes_to_the_kg_team(small_tools, corpus_home):
    answer, seen, _ = await _ask("who directed Tracker", small_tools, corpus_home)
    assert _first_route(seen).route == "kg"
    assert [v.label for v in answer.values] == ["Ian Sharp"] and answer.route == "kg" and answer.grounded
    assert answer.evidence.triples and not any(e.kind == "documents" for e in seen)
    assert any(e.sender == "graph_summarizer" for e in seen)  # the KERAG sub-team answered


async def test_a_question_about_what_the_kg_does_not_know_is_answered_from_documents(small_tools, corpus_home):
    answer, seen, _ = await _ask("Who directed The Silent Harbour?", small_tools, corpus_home)
    assert _first_route(seen).route == "web"
    assert [v.label for v in answer.values] == ["Greta Lindqvist"] and answer.route == "web"
    assert answer.evidence.documents[0].title == "The Silent Harbour"
    assert not any(e.sender.startswith("graph_") for e in seen)


async def test_both_the_graph_narrows_the_cast_and_the_text_says_who_plays_whom(small_tools, corpus_home):
    answer, seen, _ = await _ask("Who plays Tama in Tracker?", small_tools, corpus_home)
    assert _first_route(seen).route == "both"
    assert [v.label for v in answer.values] == ["Temuera Morrison"]
    assert answer.values[0].iri and answer.values[0].iri.endswith("Temuera%20Morrison")  # the KG's entity
    kinds = [e.kind for e in seen]
    assert kinds.index("documents") > max(i for i, e in enumerate(seen) if e.sender == "graph_summarizer")


async def test_graded_documents_show_what_was_kept_and_dropped(small_tools, corpus_home):
    _, seen, _ = await _ask("Who plays Ilse in The Silent Harbour?", small_tools, corpus_home)
    graded = next(e.payload for e in seen if e.kind == "graded_documents")
    assert [d.title for d in graded.kept][:1] == ["The Silent Harbour"]
    assert graded.dropped and all(d.reason for d in graded.dropped)


async def test_the_search_loop_is_bounded_by_max_retries(small_tools, corpus_home):
    from kgteam.protocols.budgets import Budgets

    answer, seen, _ = await _ask("Who composed the score of Zebulon Quartz?", small_tools, corpus_home,
                                 budgets=Budgets(max_retries=2, max_depth=3))
    searches = [e for e in seen if isinstance(e.payload, Documents)]
    assert len(searches) == 3  # the first search and two retries, then no more
    assert answer.status == "unknown" and "I don't know" in answer.text
    assert answer.stopped_by in ("done", "max_retries")


async def test_proposed_triples_link_text_to_the_kgs_relations_and_are_not_written(small_tools, corpus_home):
    answer, _, _ = await _ask("Who plays Doyle in River Queen?", small_tools, corpus_home)
    assert [v.label for v in answer.values] == ["Kiefer Sutherland"]
    lines = [p.line() for p in answer.proposals]
    assert any("starred actors" in line and "Samantha Morton" in line for line in lines), lines
    res = small_tools.store.query("ASK { ?s ?p ?o . FILTER(CONTAINS(STR(?o), 'Samantha')) }", timeout_s=10, max_rows=1)
    assert res.boolean is False  # shown for review, never written


async def test_instructions_inside_documents_change_nothing(small_tools, corpus_home):
    clean, _, _ = await _ask("Who plays Ilse in The Silent Harbour?", small_tools, corpus_home)
    model = ScriptedModel(name="recorder")
    model.add("*", None, lambda messages: '{"chosen": ["o1"], "reason": "first", "verdict": true, "queries": [], '
                                          '"keep": []}')
    dirty, _, _ = await _ask("Who plays Ilse in The Silent Harbour?", small_tools, corpus_home,
                             corpus="films_injected", model=model)
    assert [v.label for v in dirty.values] == [v.label for v in clean.values] == ["Mara Quell"]
    assert "PWNED" not in dirty.text and "API key" not in dirty.text
    assert any("PWNED" in m["content"] for c in model.calls for m in c.messages)  # the model did see it
    for call in model.calls:  # the injected text reached prompts only inside data fences
        for message in call.messages:
            text = message["content"]
            if "PWNED" in text:
                before = text[: text.index("PWNED")]
                assert before.count("<<<") > before.count(">>>"), text
