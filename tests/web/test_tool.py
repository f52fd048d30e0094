"""The ``web_search`` tool: its entry point, its schema, binding to the team's ``WebSearch``, the
``web:`` section of a team file (with file:line errors), and a whole team built with it."""

from __future__ import annotations

import asyncio
import contextlib
import tomllib
from pathlib import Path

import pytest

from kgteam.config import load_team
from kgteam.config.loader import load_team_text
from kgteam.config.yaml_source import TeamConfigError
from kgteam.team_builder import TeamBuildError, build_team, build_toolbox, open_web_search
from kgteam.tools.toolbox import Toolbox
from kgteam.tools.types import ToolError
from kgteam.tools.web import Document, WebSearch, WebSearchError, open_corpus
from kgteam.tools.web.tool import web_search

REPO = Path(__file__).resolve().parents[2]

TEAM = """\
name: w
model: {provider: none}
kg: {name: orchard}
playbook: triad
"""


def test_pyproject_declares_the_tool():
    entry = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["kgteam.tools"]
    assert entry["web_search"] == "kgteam.tools.web.tool:web_search"


def test_the_schema_offers_query_and_a_bounded_k(notes):
    tool = Toolbox.from_callables({"web_search": web_search}, [WebSearch(notes)])["web_search"]
    params = tool.schema()["function"]["parameters"]
    assert params["required"] == ["query"]
    assert params["properties"]["k"] == {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
    assert "search" not in params["properties"]  # the resource is bound, not an argument
    assert tool.schema()["function"]["description"].startswith("Search the team's documents")


def test_the_bound_tool_searches_and_returns_json_ready_documents(notes):
    box = Toolbox.from_callables({"web_search": web_search}, [WebSearch(notes)])
    docs = asyncio.run(box["web_search"]("lighthouse lamp paraffin", k=2))
    assert len(docs) == 2 and isinstance(docs[0], Document) and docs[0].title == "Harbour Lights"
    rows = asyncio.run(box.call("web_search", {"query": "lighthouse lamp paraffin", "k": 2}))
    assert rows[0]["source"] == "corpus:notes" and set(rows[0]) == set(Document.model_fields)


@pytest.mark.parametrize(("arguments", "message"), [
    ({"query": "x", "k": 0}, "k: Input should be greater than or equal to 1"),
    ({"query": "x", "k": 51}, "k: Input should be less than or equal to 50"),
    ({"k": 3}, "query: Field required"),
    ({"query": "   "}, "web_search needs a non-empty query"),
])
def test_bad_calls_are_tool_errors(notes, arguments, message):
    box = Toolbox.from_callables({"web_search": web_search}, [WebSearch(notes)])
    with pytest.raises(ToolError, match=message):
        asyncio.run(box.call("web_search", arguments))


@pytest.fixture(scope="module")
def team_home(corpus_home: Path) -> Path:
    """The corpus home with the 20-triple orchard KG beside corpus 'notes'."""
    from kgteam.tools.loading import build_kg

    build_kg([REPO / "tests" / "data" / "orchard.ttl"], "orchard", home=corpus_home, progress=False, embed=False)
    return corpus_home


def test_without_a_web_section_the_tool_says_how_to_add_one(team_home: Path):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    with open_kg("orchard", home=team_home) as graph:
        box = build_toolbox(KGTools.from_kg(graph))  # every installed tool; web_search unconfigured
        assert "search_entities" in box
        with pytest.raises(WebSearchError, match="web search is not configured for this team: add a 'web:'"):
            asyncio.run(box["web_search"]("anything"))


def test_a_provider_failure_that_is_not_a_tool_error_becomes_one():
    class Broken:
        name = "broken"

        async def search(self, query, k=10):
            raise RuntimeError("socket on fire")

    with pytest.raises(WebSearchError, match=r"broken: search failed \(RuntimeError: socket on fire\)"):
        asyncio.run(WebSearch(Broken()).search("x"))


# ---------------------------------------------------------------- the team file's web: section


@pytest.mark.parametrize(("web", "provider"), [
    ("web: {provider: corpus, corpus: notes}", "corpus"),
    ("web: {corpus: notes, mode: bm25}", "corpus"),
    ("web: {provider: searxng, url: 'http://127.0.0.1:8888', language: en, timeout_s: 5}", "searxng"),
    ("web: {provider: brave, api_key_env: MY_KEY, max_retries: 0}", "brave"),
])
def test_valid_web_sections(web, provider):
    spec = load_team_text(TEAM + web + "\n", "team.yaml")
    assert spec.web is not None and spec.web.provider == provider


@pytest.mark.parametrize(("web", "message"), [
    ("web:\n  provider: corpus\n", "team.yaml:5: web: web provider 'corpus' needs 'corpus: <name>'"),
    ("web:\n  provider: searxng\n", "team.yaml:5: web: web provider 'searxng' needs 'url'"),
    ("web:\n  provider: searxng\n  url: 127.0.0.1\n", "web.url must start with http:// or https://"),
    ("web:\n  provider: bing\n", "team.yaml:6: web.provider:"),
    ("web:\n  corpus: notes\n  mode: fuzzy\n", "team.yaml:7: web.mode:"),
    ("web:\n  corpus: notes\n  colour: red\n", "team.yaml:7: web.colour:"),
    ("web:\n  corpus: notes\n  url: http://x\n", "web provider 'corpus' does not use url"),
    ("web:\n  provider: brave\n  timeout_s: 0\n", "team.yaml:7: web.timeout_s:"),
])
def test_bad_web_sections_name_file_line_and_field(web, message):
    with pytest.raises(TeamConfigError) as err:
        load_team_text(TEAM + web, "team.yaml")
    assert message in str(err.value)


def test_build_time_errors_name_the_section(corpus_home, monkeypatch):
    missing_corpus = load_team_text(TEAM + "web: {corpus: nope}\n")
    with pytest.raises(TeamBuildError, match="web: no corpus 'nope' .*corpora there: notes"), \
            contextlib.ExitStack() as stack:
        open_web_search(missing_corpus, stack, corpus_home)
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    brave = load_team_text(TEAM + "web: {provider: brave}\n")
    with pytest.raises(TeamBuildError, match="web: brave: environment variable BRAVE_API_KEY .* is not set"), \
            contextlib.ExitStack() as stack:
        open_web_search(brave, stack, corpus_home)
    monkeypatch.setenv("BRAVE_API_KEY", "k")
    with contextlib.ExitStack() as stack:
        assert open_web_search(brave, stack, corpus_home).name == "brave"


def test_a_whole_team_gets_web_search_from_its_file(team_home: Path, tmp_path: Path):
    """Team file → build_team → the runner's toolbox searches the corpus the file names."""
    path = tmp_path / "team.yaml"
    path.write_text(TEAM + "web:\n  provider: corpus\n  corpus: notes\n  mode: bm25\n", encoding="utf-8")
    with contextlib.ExitStack() as stack:
        runner = build_team(load_team(path), stack=stack, home=team_home)
        docs = asyncio.run(runner.tools["web_search"]("Bellmoor Abbey bell recast", k=3))
    assert docs[0].title == "Bellmoor Abbey" and "1701" in docs[0].snippet


def test_the_lead_s_python_call(corpus_home: Path):
    """The documented way to search a corpus from a script or benchmark."""
    with open_corpus("notes", home=corpus_home) as corpus:
        hits = corpus.search_sync("saltmarsh sparrow survey coordinator", k=5)
        assert hits[0].title == "Saltmarsh Sparrow Survey" and "Ines Caldeira" in hits[0].snippet
        assert asyncio.run(corpus.search("saltmarsh sparrow survey coordinator", 5)) == hits
