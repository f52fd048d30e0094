"""Behaviour of the embedded label index on a small real tantivy index."""

from __future__ import annotations

import pytest

from kgteam.tools.backends.base import LabelDoc, LabelIndex
from kgteam.tools.backends.tantivy_index import TantivyLabelIndex, TantivyLabelIndexWriter
from kgteam.tools.text_normalize import label_grams, normalize_label

E = "http://example.org/t/e/"
R = "http://example.org/t/r/"

DOCS = [
    LabelDoc(E + "tom_hanks", "entity", ["Tom Hanks"], ["Thomas Jeffrey Hanks"]),
    LabelDoc(E + "tom_hanks_jr", "entity", ["Tom Hanks Jr"]),
    LabelDoc(E + "tom_banks", "entity", ["Tom Banks"]),
    LabelDoc(E + "franzen", "entity", ["Peter Franzén"]),
    LabelDoc(E + "oceans", "entity", ["Ocean's Eleven"]),
    LabelDoc(E + "up", "entity", ["Up"]),
    LabelDoc(E + "upside", "entity", ["Upside Down"]),
    LabelDoc(E + "spielberg", "entity", ["Steven Spielberg"], ["Steven Allan Spielberg"]),
    LabelDoc(E + "tigres", "entity", ["Tigres_UANL"]),
    LabelDoc(E + "mecklenburg", "entity", ["frederica_of_mecklenburg-strelitz"]),
    LabelDoc(E + "zoe", "entity", ["Zoë Saldaña"]),
    LabelDoc(E + "directed_by_movie", "entity", ["Directed By"]),  # same text as a relation label
    LabelDoc(E + "nolabel", "entity", []),
    LabelDoc(E + "dollar", "entity", ["$"]),  # a real MetaQA movie title
    LabelDoc(R + "directed_by", "relation", ["directed by"], ["director"]),
    LabelDoc(R + "starred_actors", "relation", ["starred actors"], ["actor", "cast member"]),
    LabelDoc(R + "release_year", "relation", ["release year"]),
]
# Twenty near-duplicates so k-bounds and candidate limits are exercised.
DOCS += [LabelDoc(f"{E}tom_{i}", "entity", [f"Tom Hankz{chr(97 + i)}"]) for i in range(20)]


@pytest.fixture(scope="module")
def index_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("labels")
    writer = TantivyLabelIndexWriter(path)
    for doc in DOCS:
        writer.add(doc)
    writer.commit()
    return path


@pytest.fixture(scope="module")
def index(index_path):
    ix = TantivyLabelIndex(index_path)
    yield ix
    ix.close()


def iris(hits):
    return [h.iri for h in hits]


def test_implements_protocol(index):
    assert isinstance(index, LabelIndex)


def test_normalisation():
    assert normalize_label("Peter_Franzén!") == "peter franzen"
    assert normalize_label("  ZOË   saldaña ") == "zoe saldana"
    assert normalize_label("Ocean's Eleven") == "oceans eleven"
    assert normalize_label("Tom & Jerry") == "tom and jerry"
    assert normalize_label("Straße") == "strasse"
    assert normalize_label("Søren Kierkegaard") == "soren kierkegaard"
    assert normalize_label("?!") == "?!"  # symbol-only names stay findable
    assert normalize_label(" _ ") == ""
    assert label_grams("up") == ["_up", "up_"]


def _normalize_by_the_definition(text: str) -> str:
    """normalize_label as its docstring defines it, by regular expressions only (no ASCII shortcut)."""
    import re
    import unicodedata

    if not text:
        return ""
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)).casefold()
    folded = re.sub(r"['\u2019\u2018`\u00b4]", "", folded.replace("&", " and "))
    words = re.sub(r"[\W_]+", " ", folded).strip()
    return words or " ".join(folded.replace("_", " ").split())


def test_ascii_labels_normalise_as_the_regular_expressions_define():
    """ASCII text takes a shortcut (a translation table); it must give what the patterns give,
    for every ASCII character, control characters and symbol-only texts included."""
    import random

    rng = random.Random(3)
    chars = [chr(c) for c in range(128)]
    texts = ["Ocean's Eleven", "Tom & Jerry", "AC/DC", "  a__b  ", "$", "?!", "\x1c\x1d", "R&B", "`'`", "x\ty\nz"]
    texts += ["".join(rng.choice(chars) for _ in range(rng.randint(1, 14))) for _ in range(5000)]
    for text in texts:
        assert normalize_label(text) == _normalize_by_the_definition(text), repr(text)


def test_the_words_field_holds_each_word_once_in_order():
    from kgteam.tools.backends.tantivy_index import _distinct_words

    assert _distinct_words("new york new york") == "new york"
    assert _distinct_words("the the") == "the"
    assert _distinct_words("tom hanks") == "tom hanks"
    assert _distinct_words("x") == "x"


def test_exact_match_first(index):
    hits = index.search("Tom Hanks", 10)
    assert hits[0].iri == E + "tom_hanks"
    assert hits[0].exact is True and hits[0].score == 100.0
    assert all(not h.exact for h in hits[1:])
    assert E + "tom_hanks_jr" in iris(hits)
    # The exact match stays first even when a longer label shares all the words.
    assert iris(index.search("tom hanks jr", 3))[0] == E + "tom_hanks_jr"


def test_exact_short_label_beats_longer_prefix_match(index):
    hits = index.search("up", 5)
    assert hits[0].iri == E + "up" and hits[0].exact


@pytest.mark.parametrize(
    ("query", "gold"),
    [
        ("Tom Hamks", E + "tom_hanks"),  # substitution
        ("Stevn Spielberg", E + "spielberg"),  # deletion
        ("Steven Spielbergg", E + "spielberg"),  # insertion
        ("Steven Spileberg", E + "spielberg"),  # transposition
        ("Petre Franzen", E + "franzen"),
        ("Tigres UANLL", E + "tigres"),
    ],
)
def test_one_edit(index, query, gold):
    hits = index.search(query, 10)
    assert hits[0].iri == gold
    assert not hits[0].exact


@pytest.mark.parametrize(
    ("query", "gold"),
    [
        ("Stevem Spilberg", E + "spielberg"),
        ("Pter Franzenn", E + "franzen"),
        ("frederica of mecklenbrug strelit", E + "mecklenburg"),
    ],
)
def test_two_edits(index, query, gold):
    assert gold in iris(index.search(query, 10))


@pytest.mark.parametrize(
    ("query", "gold"),
    [
        ("peter franzen", E + "franzen"),
        ("PETER FRANZÉN", E + "franzen"),
        ("zoe saldana", E + "zoe"),
        ("Oceans Eleven", E + "oceans"),
        ("ocean's eleven!", E + "oceans"),
        ("tigres uanl", E + "tigres"),
        ("Frederica of Mecklenburg Strelitz", E + "mecklenburg"),
    ],
)
def test_accents_case_punctuation_underscores(index, query, gold):
    hit = index.search(query, 3)[0]
    assert hit.iri == gold and hit.exact


def test_alias_match_reports_matched_label(index):
    hit = index.search("Thomas Jeffrey Hanks", 3)[0]
    assert hit.iri == E + "tom_hanks"
    assert hit.label == "Tom Hanks"
    assert hit.matched == "Thomas Jeffrey Hanks"
    assert hit.exact
    # The primary label is reported as matched when it is the better match.
    hit = index.search("Tom Hanks", 1)[0]
    assert hit.matched == "Tom Hanks"


def test_reordered_words(index):
    assert index.search("spielberg steven", 1)[0].iri == E + "spielberg"


def test_relations_are_separate(index):
    rel = index.search("directed by", 5, kind="relation")
    assert rel[0].iri == R + "directed_by" and rel[0].kind == "relation"
    assert all(h.iri.startswith(R) for h in rel)
    ent = index.search("directed by", 5)
    assert ent[0].iri == E + "directed_by_movie" and ent[0].kind == "entity"
    assert all(h.iri.startswith(E) for h in ent)
    assert index.search("cast member", 1, kind="relation")[0].iri == R + "starred_actors"
    assert index.search("relese year", 1, kind="relation")[0].iri == R + "release_year"


def test_unknown_kind_rejected(index):
    with pytest.raises(ValueError):
        index.search("x", 3, kind="class")  # type: ignore[arg-type]


@pytest.mark.parametrize("k", [1, 3, 10])
def test_k_bound(index, k):
    hits = index.search("Tom Hank", k)
    assert len(hits) == k
    assert len(set(iris(hits))) == k  # one hit per IRI, even with aliases


def test_k_zero(index):
    assert index.search("Tom Hanks", 0) == []


@pytest.mark.parametrize("query", ["", "   ", "\t\n", "___", " _ _ "])
def test_empty_query_gives_empty_list(index, query):
    assert index.search(query, 10) == []
    assert index.search(query, 10, kind="relation") == []


def test_symbol_only_label(index):
    hit = index.search("$", 3)[0]
    assert hit.iri == E + "dollar" and hit.exact
    assert all(not h.exact for h in index.search("?!.", 5))  # no crash, nothing exact


def test_no_match_gives_few_or_no_hits(index):
    assert all(h.score < 60 for h in index.search("qqqqxxxxzzzz", 5))


def test_deterministic_order(index):
    first = index.search("Tom Hank", 10)
    for _ in range(3):
        assert index.search("Tom Hank", 10) == first
    # Ties are broken by shorter label, then IRI.
    tied = [h for h in first if h.score == first[1].score]
    keys = [(len(h.label), h.iri) for h in tied]
    assert keys == sorted(keys)


def test_label_of(index):
    got = index.label_of([E + "tom_hanks", R + "directed_by", E + "zoe", "http://nope/x", E + "tom_hanks"])
    assert got == {E + "tom_hanks": "Tom Hanks", R + "directed_by": "directed by", E + "zoe": "Zoë Saldaña"}
    assert index.label_of([]) == {}


def test_doc_without_labels_is_skipped(index):
    assert E + "nolabel" not in index.label_of([E + "nolabel"])


def test_reopen_from_disk(index_path):
    again = TantivyLabelIndex(index_path)
    try:
        assert again.search("Steven Spielberg", 1)[0].iri == E + "spielberg"
        assert again.counts == {"entity": len([d for d in DOCS if d.kind == "entity"]) - 1, "relation": 3}
    finally:
        again.close()


def test_missing_index_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        TantivyLabelIndex(tmp_path / "absent")


def test_writer_overwrite_and_append(tmp_path):
    path = tmp_path / "ix"
    with TantivyLabelIndexWriter(path) as w:
        w.add(LabelDoc(E + "a", "entity", ["Alpha"]))
    with TantivyLabelIndexWriter(path) as w:  # appends
        w.add(LabelDoc(E + "b", "entity", ["Beta"]))
    ix = TantivyLabelIndex(path)
    assert iris(ix.search("alpha", 1)) == [E + "a"] and iris(ix.search("beta", 1)) == [E + "b"]
    assert len(ix) == 2
    ix.close()
    with TantivyLabelIndexWriter(path, overwrite=True) as w:
        w.add(LabelDoc(E + "c", "entity", ["Gamma"]))
    ix = TantivyLabelIndex(path)
    assert ix.search("alpha", 5) == [] or ix.search("alpha", 5)[0].iri != E + "a"
    assert len(ix) == 1
    ix.close()


def test_writer_rejects_add_after_commit(tmp_path):
    w = TantivyLabelIndexWriter(tmp_path / "ix")
    w.commit()
    with pytest.raises(RuntimeError):
        w.add(LabelDoc(E + "a", "entity", ["Alpha"]))
    # An empty index opens and answers nothing.
    ix = TantivyLabelIndex(tmp_path / "ix")
    assert ix.search("alpha", 3) == []
    ix.close()


# ---------------------------------------------------------------- names only (search_names)

@pytest.mark.parametrize(
    ("query", "gold"),
    [
        ("Tom Hanks", E + "tom_hanks"),  # exact
        ("PETER FRANZÉN", E + "franzen"),  # exact after normalising
        ("Thomas Jeffrey Hanks", E + "tom_hanks"),  # an alias
        ("Tom Hamks", E + "tom_hanks"),  # one edit
        ("Stevem Spilberg", E + "spielberg"),  # two edits in a long name
    ],
)
def test_search_names_finds_a_name_up_to_a_typo(index, query, gold):
    hits = index.search_names(query, 5)
    assert hits and hits[0].iri == gold
    assert hits[0].exact == (normalize_label(query) in {normalize_label(hits[0].matched)})


@pytest.mark.parametrize("query", [
    "films starring Tom Hanks",  # contains a name, is none: the full search finds Tom Hanks, names do not
    "Hanks Tom",  # reordered words are a word match, not a name
    "Tom",  # a word of a name
    "Tpo",  # short: no typo allowed below four characters
])
def test_search_names_ignores_partial_matches(index, query):
    assert index.search_names(query, 5) == []


def test_search_names_agrees_with_search_where_a_name_matches(index):
    words = index.search("films starring Tom Hanks", 10)
    assert E + "tom_hanks" in iris(words)  # the full search ranks it by shared words
    for query in ("tom hanks", "Tom Hamks", "Steven Spileberg"):
        names = index.search_names(query, 1)
        assert iris(names) == iris(index.search(query, 1))


def test_search_names_bounds(index):
    assert index.search_names("", 5) == [] and index.search_names("Tom Hanks", 0) == []
    assert len(index.search_names("Tom Hankza", 3)) == 3  # the twenty near-duplicates, cut at k
    with pytest.raises(ValueError):
        index.search_names("Tom Hanks", 3, "class")  # type: ignore[arg-type]


def test_a_load_writes_one_segment_per_kind(tmp_path):
    """Fuzzy name checks walk every segment's term dictionary: the writer's defaults (one thread,
    a budget far above this) must leave one segment, however the docs arrive."""
    with TantivyLabelIndexWriter(tmp_path / "idx") as w:
        w.add_many(LabelDoc(iri=f"http://x/e{i}", kind="entity", labels=[f"Person Number {i}"]) for i in range(3000))
        w.add_many(LabelDoc(iri=f"http://x/r{i}", kind="relation", labels=[f"relation {i}"]) for i in range(50))
    idx = TantivyLabelIndex(tmp_path / "idx")
    assert {kind: idx._searchers[kind].num_segments for kind in ("entity", "relation")} == {"entity": 1,
                                                                                            "relation": 1}
    assert [h.iri for h in idx.search_names("Person Numbr 2999", k=1)] == ["http://x/e2999"]


def test_format_two_indexes_the_grams_the_query_asks_for(tmp_path):
    """Format 2 lets tantivy cut the 3-grams; every gram the query side makes must be a term of the
    label's document, or a misspelt name would lose the grams that find it."""
    import tantivy

    from kgteam.tools.backends.tantivy_index import FORMAT_VERSION

    labels = ["Zoë Saldaña", "Up", "Mary-Kate Olsen", "aaaa", "The Lord of the Rings: The Two Towers",
              "Фёдор Достоевский", "東京物語"]
    with TantivyLabelIndexWriter(tmp_path / "ix") as w:
        for i, label in enumerate(labels):
            w.add(LabelDoc(f"{E}l{i}", "entity", [label]))
    ix = TantivyLabelIndex(tmp_path / "ix")
    assert ix.format == FORMAT_VERSION == 2
    searcher = ix._searchers["entity"]
    for i, label in enumerate(labels):
        for gram in label_grams(normalize_label(label)):
            hits = searcher.search(tantivy.Query.term_query(ix._schema, "grams", gram), 10).hits
            found = {searcher.doc(addr).get_first("iri") for _, addr in hits}
            assert f"{E}l{i}" in found, (label, gram)
    # a typo that only the grams and the fuzzy passes can bridge
    assert iris(ix.search("Zoe Saldanna", 1)) == [E + "l0"]
    # the fields only read back hold no terms, and still read back
    for field, value in (("iri", E + "l2"), ("label", "Mary-Kate Olsen"), ("matched", "Up")):
        assert searcher.search(tantivy.Query.term_query(ix._schema, field, value), 10).hits == []
    assert ix.label_of([E + "l2", E + "l1"]) == {E + "l2": "Mary-Kate Olsen", E + "l1": "Up"}
    assert ix.search("up", 1)[0].matched == "Up"
    ix.close()


def test_format_one_index_still_opens_and_is_appended_to_in_its_own_format(tmp_path):
    path = tmp_path / "old"
    with TantivyLabelIndexWriter(path, format=1) as w:
        w.add(LabelDoc(E + "a", "entity", ["Alpha Centauri"]))
    with TantivyLabelIndexWriter(path) as w:  # appends in format 1, not 2
        assert w.format == 1
        w.add(LabelDoc(E + "b", "entity", ["Beta Pictoris"]))
    ix = TantivyLabelIndex(path)
    assert ix.format == 1
    assert iris(ix.search("Alpha Centuari", 1)) == [E + "a"]
    assert iris(ix.search("Beta Pictoris", 1)) == [E + "b"]
    ix.close()


def test_unknown_format_is_a_clear_error(tmp_path):
    path = tmp_path / "future"
    with TantivyLabelIndexWriter(path) as w:
        w.add(LabelDoc(E + "a", "entity", ["Alpha"]))
    meta = path / "labels.json"
    meta.write_text(meta.read_text().replace('"format": 2', '"format": 9'))
    with pytest.raises(ValueError, match="format 9.*load the KG again"):
        TantivyLabelIndex(path)
    with pytest.raises(ValueError, match="format 9"):
        TantivyLabelIndexWriter(path)
