"""Chunks: bounded, cut at sentence and paragraph boundaries, overlapping by whole sentences."""

from __future__ import annotations

import re

import pytest

from kgteam.tools.web.chunking import check_sizes, chunk_text

SENTENCES = [f"Sentence number {i} tells a small fact about item {i}." for i in range(60)]


def test_chunks_stay_within_the_size_and_cover_every_sentence():
    text = " ".join(SENTENCES)
    chunks = chunk_text(text, 300, 80)
    assert len(chunks) > 5
    assert all(len(c) <= 300 for c in chunks)
    for sentence in SENTENCES:
        assert any(sentence in c for c in chunks), sentence


def test_consecutive_chunks_share_whole_sentences_up_to_the_overlap():
    chunks = chunk_text(" ".join(SENTENCES), 300, 80)
    for before, after in zip(chunks, chunks[1:], strict=False):
        first = re.match(r".*?\.", after).group(0)  # the first sentence of the next chunk
        assert before.endswith(first), (before, after)  # it repeats the end of the previous one
        assert len(first) <= 80


def test_no_overlap_means_no_repeated_sentence():
    chunks = chunk_text(" ".join(SENTENCES), 300, 0)
    joined = " ".join(chunks)
    assert all(joined.count(s) == 1 for s in SENTENCES)


def test_a_paragraph_break_is_preferred_to_filling_a_half_full_chunk():
    first = "The first paragraph has two sentences about fruit. It is about apples, pears and the orchard they grow in."
    assert len(first) > 100  # over half a chunk
    second = "The second paragraph is about the weather. " + " ".join(["It rained again all day long."] * 6)
    chunks = chunk_text(f"{first}\n\n{second}", 200, 0)
    assert chunks[0] == first  # the second paragraph starts a new chunk
    assert chunks[1].startswith("The second paragraph")


def test_short_paragraphs_share_a_chunk_with_their_break_kept():
    chunks = chunk_text("Title line.\n\nA short paragraph.\n\n\nAnother one.", 200, 0)
    assert chunks == ["Title line.\n\nA short paragraph.\n\nAnother one."]


def test_a_sentence_longer_than_a_chunk_is_cut_at_words_and_a_giant_word_hard():
    long_sentence = " ".join(["word"] * 100) + "."
    giant = "x" * 350
    chunks = chunk_text(f"{long_sentence} {giant}", 120, 0)
    assert all(len(c) <= 120 for c in chunks)
    assert "".join(c for c in chunks if c.startswith("x")) == giant
    assert sum(c.count("word") for c in chunks) == 100


def test_empty_text_has_no_chunks():
    assert chunk_text("  \n\n \t ", 200, 20) == []


@pytest.mark.parametrize(("size", "overlap", "message"), [
    (50, 0, "between 100 and 1500"), (5000, 0, "between 100 and 1500"), (400, 250, "half the chunk size"),
    (400, -1, "half the chunk size"),
])
def test_bad_sizes_are_refused(size, overlap, message):
    with pytest.raises(ValueError, match=message):
        check_sizes(size, overlap)
