"""Shared fixtures for web search: the hand-written documents, one corpus built from them for the
whole session (BM25 + the embedded WordLlama), and the ``web_search`` entry point."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_paths import SHARED_DATA

from kgteam.config import registry

DATA = Path(__file__).resolve().parents[1] / "data" / "web"
DOCS = DATA / "docs"
RECORDED = DATA / "recorded"
MOVIEPLOTS_CSV = SHARED_DATA / "movieplots" / "wiki_movie_plots_1901_1935.csv"


@pytest.fixture(scope="session")
def doc_files() -> list[Path]:
    return sorted(DOCS.iterdir())


@pytest.fixture(scope="session")
def corpus_home(tmp_path_factory: pytest.TempPathFactory, doc_files: list[Path]) -> Path:
    """A kgteam home with corpus 'notes' (all of tests/data/web/docs, small chunks so documents split)."""
    from kgteam.tools.web import build_corpus
    from kgteam.tools.web.readers import CsvColumns

    home = tmp_path_factory.mktemp("web-home")
    build_corpus("notes", doc_files, home=home, chunk_chars=220, overlap=60,
                 csv_columns=CsvColumns(text="body", title="dish", url="link"))
    return home


@pytest.fixture
def notes(corpus_home: Path):
    from kgteam.tools.web import open_corpus

    with open_corpus("notes", corpus_home) as corpus:
        yield corpus


@pytest.fixture(autouse=True)
def web_search_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """``web_search`` as an installed tool even where kgteam's metadata predates it (an editable
    install made before the entry point was added); pyproject.toml declares it (test_tool.py)."""
    table = registry.entry_table("tools")
    if "web_search" not in table:
        monkeypatch.setitem(table, "web_search",
                            registry.Entry("tools", "web_search", "kgteam.tools.web.tool:web_search", "kgteam"))
