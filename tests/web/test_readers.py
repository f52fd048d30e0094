"""Corpus files: what text, title and url each format yields, and errors that point at the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgteam.tools.web.errors import CorpusError
from kgteam.tools.web.readers import CsvColumns, html_text, read_documents

DOCS = Path(__file__).resolve().parents[1] / "data" / "web" / "docs"


def test_markdown_takes_its_first_heading_as_title_and_drops_the_syntax():
    [doc] = read_documents(DOCS / "harbour_lights.md")
    assert doc.title == "Harbour Lights"
    assert doc.doc_id == "harbour_lights.md"
    assert "built in 1887 by the engineer Mirela Oskarsdottir. Its lamp" in " ".join(doc.text.split())
    for syntax in ("**", "](", "# ", "> ", "- The light"):
        assert syntax not in doc.text
    assert "The light flashes green every six seconds." in doc.text


def test_html_keeps_visible_text_only():
    [doc] = read_documents(DOCS / "copper_valley.html")
    assert doc.title == "Copper Valley Railway"
    assert doc.url == "https://example.org/copper-valley-railway"
    assert "It opened in 1902 & closed in 1968." in doc.text  # entities decoded, lines joined
    assert "Night Heron" in doc.text and "Length: 48 kilometres" in doc.text
    for hidden in ("zyxwv", "color: red", "Enable JavaScript", "qwerty", "Just a"):
        assert hidden not in doc.text
    assert "\n\n" in doc.text  # block elements become paragraphs


def test_html_without_title_uses_the_first_h1_and_survives_bad_nesting():
    title, url, text = html_text("<body><div><h1>Only <i>heading</i></h1><p>Body <b>text</p></div>"
                                 "<script>x()</script><p>after</p>")
    assert title == "Only heading"
    assert url is None
    assert text.split("\n\n") == ["Only heading", "Body text", "after"]


def test_plain_text_is_one_document_named_after_its_file():
    [doc] = read_documents(DOCS / "beekeeping.txt")
    assert (doc.doc_id, doc.title, doc.url) == ("beekeeping.txt", "beekeeping", None)
    assert "fondant" in doc.text


def test_jsonl_rows_with_id_url_or_neither():
    docs = list(read_documents(DOCS / "places.jsonl"))
    assert [d.doc_id for d in docs] == ["lake-orrin", "https://example.org/bellmoor-abbey", "places.jsonl:3"]
    assert docs[2].title == "Saltmarsh Sparrow Survey" and docs[2].url is None


@pytest.mark.parametrize(("line", "message"), [
    ('{"title": "x"}', r"bad\.jsonl:2: 'text' is missing or empty"),
    ('{"text": 5}', r"bad\.jsonl:2: 'text' must be a string, not int"),
    ("[1, 2]", r"bad\.jsonl:2: each line must be a JSON object"),
    ('{"text": "a", "title": ', r"bad\.jsonl:2: not JSON"),
])
def test_a_bad_jsonl_line_is_named(tmp_path: Path, line: str, message: str):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "fine"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=message):
        list(read_documents(path))


def test_csv_with_named_columns_skips_rows_without_text():
    docs = list(read_documents(DOCS / "recipes.csv", csv_columns=CsvColumns(text="body", title="dish", url="link")))
    assert [d.title for d in docs] == ["Nettle soup", "Barley bread"]
    assert docs[0].url == docs[0].doc_id == "https://example.org/nettle-soup"


def test_csv_default_columns_and_a_missing_column(tmp_path: Path):
    path = tmp_path / "t.csv"
    path.write_text("Title,Text,URL\nA,alpha text,https://a\n", encoding="utf-8")
    [doc] = read_documents(path)  # text/title/url found case-insensitively
    assert (doc.title, doc.text, doc.url) == ("A", "alpha text", "https://a")
    with pytest.raises(CorpusError, match=r"no column 'plot' \(--text-column\); the columns are Title, Text, URL"):
        list(read_documents(path, csv_columns=CsvColumns(text="plot")))
    with pytest.raises(CorpusError, match=r"no column 'name' \(--title-column\)"):
        list(read_documents(path, csv_columns=CsvColumns(title="name")))


def test_unknown_suffix_non_utf8_and_folders_are_refused(tmp_path: Path):
    with pytest.raises(CorpusError, match=r"unknown file type '\.pdf'"):
        list(read_documents(tmp_path / "x.pdf"))
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9 au lait".encode("latin-1"))
    with pytest.raises(CorpusError, match=r"latin\.txt: not UTF-8 text \(byte 3"):
        list(read_documents(latin))
    folder = tmp_path / "dir.txt"
    folder.mkdir()
    with pytest.raises(CorpusError, match="is a folder"):
        list(read_documents(folder))


def test_a_markdown_heading_stays_its_own_paragraph():
    from kgteam.tools.web.readers import markdown_text

    title, text = markdown_text("# River Queen\n\nRiver Queen is a film.\n")
    assert title == "River Queen"
    assert text.split("\n\n")[0].strip() == "River Queen."  # not run into the first sentence


def test_markdown_headings_are_sentences_of_their_own_in_chunks_and_sentences():
    from kgteam.roles.adaptive.reading import sentences
    from kgteam.tools.web.chunking import chunk_text
    from kgteam.tools.web.readers import markdown_text

    title, text = markdown_text("# Lyon\n\nLyon was founded in 43 BC by the Romans.\n\n## Food\n\n"
                                "It is known for bouchons.\n\n## Why?\n\nBecause.")
    assert title == "Lyon"
    [chunk] = chunk_text(text, 800, 0)
    flat = " ".join(chunk.split())
    assert "Lyon. Lyon was founded" in flat and "Romans. Food. It is known" in flat
    assert "Why? Because." in flat  # a heading that ends a sentence already gets no second stop
    assert sentences(flat)[:2] == ["Lyon.", "Lyon was founded in 43 BC by the Romans."]


def test_a_number_that_wraps_to_the_start_of_a_line_is_text_not_a_list_marker():
    from kgteam.tools.web.readers import markdown_text

    _, text = markdown_text("# Light\n\nIt was first lit in\n1856. Its keeper was Oren Salt.\n\nSteps:\n\n1. climb\n2. look")
    assert "first lit in 1856. Its keeper" in " ".join(text.split())
    assert text.split("\n\n")[-2:] == ["Steps:", "climb\nlook"]  # a real list keeps its paragraph break
