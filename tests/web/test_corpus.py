"""A local corpus end to end: built from the hand-written documents, searched by BM25, dense and
hybrid, rebuilt atomically, listed and removed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kgteam.tools.web import CorpusError, build_corpus, corpora_dir, list_corpora, open_corpus, remove_corpus
from kgteam.tools.web.corpus import query_words

DOCS = Path(__file__).resolve().parents[1] / "data" / "web" / "docs"


def test_the_build_records_what_it_made(corpus_home: Path):
    [manifest] = list_corpora(corpus_home)
    assert manifest.name == "notes"
    assert manifest.documents == 8  # md, html, txt, 3 jsonl rows, 2 csv rows with text
    assert manifest.chunks > manifest.documents  # 220-character chunks split the longer ones
    assert (manifest.chunk_chars, manifest.overlap) == (220, 60)
    assert manifest.vectors is not None and manifest.vectors.embedder.startswith("wordllama")
    assert {Path(s.path).name: s.documents for s in manifest.sources}["places.jsonl"] == 3
    folder = corpora_dir(corpus_home) / "notes"
    assert {p.name for p in folder.iterdir()} >= {"manifest.json", "chunks.sqlite", "bm25", "vectors.npy"}


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_each_mode_finds_the_chunk_that_answers(notes, mode):
    docs = notes.search_sync("what does a beekeeper feed a colony short of honey in late winter", 3, mode=mode)
    assert docs[0].title == "beekeeping"
    assert "fondant" in docs[0].snippet


def test_documents_carry_ids_sources_and_chunk_numbers(notes):
    docs = notes.search_sync("Copper Valley Railway Night Heron locomotive Leeds", 5)
    top = docs[0]
    assert top.source == "corpus:notes"
    assert top.title == "Copper Valley Railway" and top.url == "https://example.org/copper-valley-railway"
    assert top.doc_id == "copper_valley.html"
    assert top.id == f"corpus:notes:copper_valley.html#{top.chunk}"
    assert "Night Heron" in top.snippet
    assert [d.score for d in docs] == sorted((d.score for d in docs), reverse=True)
    assert len({d.id for d in docs}) == len(docs)
    chunks = notes.search_sync("Copper Valley Railway", 20, mode="bm25")
    numbers = sorted(d.chunk for d in chunks if d.doc_id == "copper_valley.html")
    assert numbers == list(range(len(numbers))) and len(numbers) >= 2  # the document was cut in several


def test_titles_are_searchable_in_every_chunk_of_their_document(notes):
    """A later chunk of Harbour Lights does not repeat its title, yet a search naming it finds it."""
    docs = notes.search_sync("Harbour Lights ferry Port Tamsin", 3, mode="bm25")
    assert docs[0].title == "Harbour Lights" and "Port Tamsin" in docs[0].snippet and docs[0].chunk > 0


def test_dense_finds_a_paraphrase_with_no_shared_content_word(notes):
    docs = notes.search_sync("rodents", 3, mode="dense")
    assert any("Mouse guards" in d.snippet for d in docs)


def test_hybrid_is_the_default_and_fuses_both_lists(notes):
    assert notes.mode == "hybrid"
    query = "ice festival skaters frozen lake"
    bm25 = [d.id for d in notes.search_sync(query, 10, mode="bm25")]
    hybrid = notes.search_sync(query, 10)
    assert hybrid[0].title == "Lake Orrin"
    assert {d.id for d in hybrid} - set(bm25)  # dense adds chunks BM25 did not return


@pytest.mark.parametrize("query", ['title:"x" AND (y OR', "NOT -+ ~ ^2 * ? [1 TO 5] {}", "what's", "'\"", "é ü"])
def test_queries_with_query_syntax_never_raise(notes, query):
    assert isinstance(notes.search_sync(query, 5), list)


def test_empty_queries_and_k_below_one_return_nothing(notes):
    assert notes.search_sync("   ", 5) == []
    assert notes.search_sync("beekeeping", 0) == []


def test_stop_words_are_dropped_unless_nothing_else_is_left():
    assert query_words("Who is the keeper of the lighthouse?") == ["keeper", "lighthouse"]
    assert query_words("who is it") == ["who", "is", "it"]


def test_async_search_gives_the_same_documents(notes):
    sync = notes.search_sync("glacial lake springs", 4)
    assert asyncio.run(notes.search("glacial lake springs", 4)) == sync


def test_snippets_are_capped(tmp_path: Path):
    (tmp_path / "long.jsonl").write_text(json.dumps({"title": "Long", "text": "word " * 2000}) + "\n")
    build_corpus("long", [tmp_path / "long.jsonl"], home=tmp_path, chunk_chars=1500, overlap=0, embed=False)
    with open_corpus("long", tmp_path) as corpus:
        docs = corpus.search_sync("word", 10)
    assert docs and all(len(d.snippet) <= 1500 for d in docs)


def test_a_corpus_without_vectors_searches_bm25_and_refuses_dense(tmp_path: Path):
    build_corpus("plain", [DOCS / "beekeeping.txt"], home=tmp_path, embed=False)
    with open_corpus("plain", tmp_path) as corpus:
        assert corpus.mode == "bm25"
        assert corpus.search_sync("fondant", 1)[0].title == "beekeeping"
        with pytest.raises(CorpusError, match="no usable dense index .*built without embeddings"):
            corpus.search_sync("fondant", 1, mode="dense")
    with pytest.raises(CorpusError, match="built without embeddings"):
        open_corpus("plain", tmp_path, mode="dense")


def test_a_failed_rebuild_keeps_the_old_corpus_and_leaves_no_work_folder(tmp_path: Path):
    build_corpus("c", [DOCS / "beekeeping.txt"], home=tmp_path, embed=False)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\nnot json\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.jsonl:2: not JSON"):
        build_corpus("c", [DOCS / "harbour_lights.md", bad], home=tmp_path, embed=False)
    assert [p.name for p in corpora_dir(tmp_path).iterdir() if not p.name.startswith(".lock")] == ["c"]
    with open_corpus("c", tmp_path) as corpus:
        assert corpus.manifest.documents == 1 and corpus.search_sync("fondant", 1)[0].title == "beekeeping"


def test_a_rebuild_replaces_the_corpus(tmp_path: Path):
    build_corpus("c", [DOCS / "beekeeping.txt"], home=tmp_path, embed=False)
    build_corpus("c", [DOCS / "harbour_lights.md"], home=tmp_path, embed=False)
    with open_corpus("c", tmp_path) as corpus:
        assert corpus.search_sync("fondant", 5) == []
        assert corpus.search_sync("lighthouse", 1)[0].title == "Harbour Lights"


@pytest.mark.parametrize(("files", "kwargs", "message"), [
    ([], {}, "at least one file"),
    (["missing.txt"], {}, "missing.txt: no such file"),
    ([DOCS / "beekeeping.txt", "notes.pdf"], {}, r"unknown file type '\.pdf'"),
    ([DOCS / "beekeeping.txt"], {"chunk_chars": 20}, "chunk size must be between"),
    ([DOCS / "beekeeping.txt"], {"overlap": 900}, "overlap must be between"),
])
def test_bad_builds_are_refused_before_anything_is_written(tmp_path: Path, monkeypatch, files, kwargs, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.pdf").write_bytes(b"%PDF-1.4")
    with pytest.raises(CorpusError, match=message):
        build_corpus("c", files, home=tmp_path, embed=False, **kwargs)
    assert list_corpora(tmp_path) == []
    assert [p.name for p in corpora_dir(tmp_path).glob("*") if not p.name.startswith(".lock")] == []


def test_a_file_without_text_is_refused(tmp_path: Path):
    empty = tmp_path / "empty.md"
    empty.write_text("   \n", encoding="utf-8")
    with pytest.raises(CorpusError, match="empty.md: holds no text"):
        build_corpus("c", [empty], home=tmp_path, embed=False)


@pytest.mark.parametrize("name", ["", "../x", "a/b", ".hidden", "x+y"])
def test_bad_names_are_refused(tmp_path: Path, name):
    with pytest.raises(CorpusError, match="invalid corpus name"):
        build_corpus(name, [DOCS / "beekeeping.txt"], home=tmp_path, embed=False)


def test_missing_corpus_errors_list_the_ones_there_are(tmp_path: Path):
    with pytest.raises(CorpusError, match=r"no corpus 'nope' .*create one with `kgteam corpus add"):
        open_corpus("nope", tmp_path)
    build_corpus("real", [DOCS / "beekeeping.txt"], home=tmp_path, embed=False)
    with pytest.raises(CorpusError, match="corpora there: real"):
        open_corpus("nope", tmp_path)


def test_remove_deletes_the_folder(tmp_path: Path):
    build_corpus("gone", [DOCS / "beekeeping.txt"], home=tmp_path, embed=False)
    remove_corpus("gone", tmp_path)
    assert list_corpora(tmp_path) == [] and not (corpora_dir(tmp_path) / "gone").exists()
    with pytest.raises(CorpusError, match="no corpus 'gone'"):
        remove_corpus("gone", tmp_path)


def test_another_embedder_is_refused(corpus_home: Path):
    import numpy as np

    class Other:
        name, dim = "other:model", 8

        def embed(self, texts):
            return np.ones((len(texts), 8), dtype=np.float32)

    with pytest.raises(CorpusError, match="embedded with wordllama.*not other:model"):
        open_corpus("notes", corpus_home, embedder=Other())


def test_fusion_keeps_a_bm25_standout_first_and_adds_dense_only_rows():
    from kgteam.tools.web.corpus import fuse_scores

    lexical = [(7, 41.6), (3, 18.7), (4, 18.0)]  # row 7 matches the film's name far better
    dense = [(9, 0.63), (3, 0.52), (4, 0.47), (5, 0.30)]
    fused = fuse_scores(lexical, dense)
    assert [row for row, _ in fused] == [7, 3, 4, 9, 5]
    assert fused[0][1] == 1.0 and round(fused[1][1], 3) == round(18.7 / 41.6 + 0.52, 3)
    assert fuse_scores([], [(1, 0.4), (2, -0.1)]) == [(1, 0.4), (2, 0.0)]  # a negative cosine adds nothing
    assert fuse_scores([(1, 2.0), (2, 2.0)], []) == [(1, 1.0), (2, 1.0)]  # ties keep BM25's order
