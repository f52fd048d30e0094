"""IRI minting for name-based input: deterministic, valid for N-Triples and SPARQL, reversible."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from kgteam.tools.iri import (
    check_base_iri,
    default_base_iri,
    humanise,
    local_name,
    mint_entity_iri,
    mint_relation_iri,
    name_from_iri,
)
from kgteam.tools.loading.labels import iri_label, name_label, relation_name_label

BASE = "http://example.org/metaqa/"
ODD_NAMES = [
    'The "Quoted" One',
    "a > b < c",
    "Amélie",
    "東京物語",
    "AC/DC",
    "50% #1 {x} | y ^ `z` \\ w",
    "  spaced  ",
    "emoji 🎬",
    "new\nline",
]


def test_metaqa_iris_match_the_published_gold_form():
    assert mint_entity_iri(BASE, "Temuera Morrison") == "http://example.org/metaqa/e/Temuera%20Morrison"
    assert mint_entity_iri(BASE, "Peter Franzén") == "http://example.org/metaqa/e/Peter%20Franz%C3%A9n"
    assert mint_relation_iri(BASE, "starred_actors") == "http://example.org/metaqa/r/starred_actors"


@pytest.mark.parametrize("name", ODD_NAMES)
def test_odd_names_give_valid_iris_that_round_trip(name):
    iri = mint_entity_iri(BASE, name)
    assert iri == mint_entity_iri(BASE, name)  # deterministic
    assert not any(ch in iri for ch in ' <>"{}|^`\\\n')
    ox.NamedNode(iri)  # valid IRI
    # usable verbatim in N-Triples and in SPARQL
    nt = f"<{iri}> <{mint_relation_iri(BASE, name)}> <{iri}> .\n".encode()
    assert len(list(ox.parse(nt, ox.RdfFormat.N_TRIPLES))) == 1
    store = ox.Store()
    store.load(nt, ox.RdfFormat.N_TRIPLES)
    rows = list(store.query(f"SELECT ?o WHERE {{ <{iri}> ?p ?o }}"))
    assert rows[0]["o"].value == iri
    assert name_from_iri(BASE, iri) == name
    assert name_from_iri(BASE, mint_relation_iri(BASE, name)) == name


def test_distinct_names_give_distinct_iris():
    iris = {mint_entity_iri(BASE, n) for n in ODD_NAMES + ["a%20b", "a b", "a+b"]}
    assert len(iris) == len(ODD_NAMES) + 3


def test_base_iri_check():
    assert check_base_iri("http://example.org/x/") == "http://example.org/x/"
    assert check_base_iri("urn:kg:x#") == "urn:kg:x#"
    for bad in ["http://example.org/x", "not an iri/", "http://ex.org/a b/", "http://ex.org/<x>/", "/rel/"]:
        with pytest.raises(ValueError):
            check_base_iri(bad)
    assert default_base_iri("fb15k237") == "http://example.org/fb15k237/"


def test_labels_from_names_and_local_names():
    assert name_label("Esseid_BELKALEM") == "Esseid BELKALEM"
    assert name_label("Blade Runner") == "Blade Runner"
    assert relation_name_label("directed_by") == "directed by"
    assert relation_name_label("/music/artist/origin") == "music artist origin"
    assert iri_label("http://dbpedia.org/ontology/birthPlace", predicate=True) == "birth place"
    assert iri_label("http://example.org/kg/Ridley_Scott", predicate=False) == "Ridley Scott"
    assert iri_label("http://example.org/e/Peter%20Franz%C3%A9n", predicate=False) == "Peter Franzén"
    assert iri_label("http://example.org/onto#hasPart", predicate=True) == "has part"
    assert local_name("urn:isbn:123") == "123"
    assert humanise("McDonald_Farm") == "McDonald Farm"
    assert humanise("ISBN", split_camel=True) == "ISBN"


def test_names_encode_as_quote_does_word_by_word_and_after_the_word_cache_is_full(monkeypatch):
    """Names are percent-encoded through a cache of words; the result is always ``quote``'s,
    also for empty words (double spaces), lone spaces, non-ASCII and once the cache was emptied."""
    import random
    from urllib.parse import quote

    import kgteam.tools.iri as iri

    monkeypatch.setattr(iri, "_ENCODED_WORDS", {})
    monkeypatch.setattr(iri, "_ENCODED_WORDS_MAX", 8)
    rng = random.Random(7)
    alphabet = ["a", "B", "7", " ", "  ", "é", "東", "/", "%", "_", "~", "[c3]", "\t", "🎬"]
    long_word = "w/" * 40
    names = ODD_NAMES + ["", " ", "a  b", " x ", "x%20y", "~._-", f"{long_word} x", long_word]
    names += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))) for _ in range(500)]
    for name in names + names:  # the second pass meets cached words
        assert iri.percent_encode(name) == quote(name, safe=""), name
        assert mint_entity_iri(BASE, name) == BASE + "e/" + quote(name, safe="")
    assert 0 < len(iri._ENCODED_WORDS) <= 8  # bounded
    assert long_word not in iri._ENCODED_WORDS  # long words are not kept
