"""The shared movie-plot CSV (../shared/data, internal use: never copied into the repository) as
a corpus: the conversion script's records, and a corpus of its first 200 films that finds a
film's plot from a question. Skipped where the shared data is absent."""

from __future__ import annotations

import csv
import json
import runpy
from pathlib import Path

import pytest
from shared_paths import SHARED_DATA

REPO = Path(__file__).resolve().parents[2]
CSV = SHARED_DATA / "movieplots" / "wiki_movie_plots_1901_1935.csv"
pytestmark = pytest.mark.skipif(not CSV.is_file(), reason=f"shared movie-plot data not found at {CSV}")


@pytest.fixture(scope="module")
def script():
    return runpy.run_path(str(REPO / "benchmarks" / "movieplots_corpus.py"))


def test_a_record_has_a_header_line_then_the_plot(script):
    row = {"Release Year": "1914", "Title": "Gentlemen of Nerve", "Director": "Charlie Chaplin",
           "Cast": "Charlie Chaplin, Mabel Normand", "Genre": "comedy", "Wiki Page": "https://en.wikipedia.org/x",
           "Plot": "Mabel and her beau go to an auto race.[1] They meet Charlie.[citation needed]"}
    assert script["document"](row) == {
        "title": "Gentlemen of Nerve", "url": "https://en.wikipedia.org/x",
        "text": "Gentlemen of Nerve (1914 film). Directed by Charlie Chaplin. Cast: Charlie Chaplin, Mabel Normand. "
                "Genre: comedy.\n\nMabel and her beau go to an auto race. They meet Charlie."}
    unknown = {**row, "Director": "Unknown", "Cast": "", "Genre": "unknown", "Wiki Page": ""}
    record = script["document"](unknown)
    assert record["text"].startswith("Gentlemen of Nerve (1914 film).\n\n") and "url" not in record
    assert script["document"]({**row, "Plot": " "}) is None


def test_the_script_writes_every_film_outside_the_repository(script, tmp_path: Path):
    out = tmp_path / "movieplots.jsonl"
    assert script["main"](["--out", str(out)]) == 0
    with CSV.open(encoding="utf-8", newline="") as fh:
        rows = sum(1 for r in csv.DictReader(fh) if r["Plot"].strip())
    assert sum(1 for _ in out.open(encoding="utf-8")) == rows
    assert script["main"](["--out", str(REPO / "movieplots.jsonl")]) == 2  # refused: inside the repository
    assert not (REPO / "movieplots.jsonl").exists()


def test_a_corpus_of_the_plots_finds_a_film_from_a_question(script, tmp_path: Path):
    from kgteam.tools.web import build_corpus, open_corpus

    records = list(script["documents"](CSV))[:200]
    path = tmp_path / "plots.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    build_corpus("plots", [path], home=tmp_path)
    with open_corpus("plots", tmp_path) as corpus:
        docs = corpus.search_sync("What does the bartender spray in Carrie Nation's face?", 10)
    top = docs[0]
    assert top.title == "Kansas Saloon Smashers" and "seltzer water" in top.snippet
    assert top.url == "https://en.wikipedia.org/wiki/Kansas_Saloon_Smashers"
