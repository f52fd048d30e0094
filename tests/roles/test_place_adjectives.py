"""Adjectives of place link to their place through the KG's labels and aliases and English
morphology, never a list of places: "a German city" is Germany's even where German is also a
language, "the Swiss capital" is the entity one of whose aliases "Swiss" opens."""

from __future__ import annotations

import pytest

from kgteam.roles.semantic.mentions import place_names_for, spot_mentions

TTL = """\
@prefix ex: <http://example.org/places/> .
@prefix schema: <http://schema.org/> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
ex:Country schema:name "country" .
ex:Language schema:name "language" .
ex:City schema:name "city" .
ex:Germany a ex:Country ; schema:name "Germany" ; ex:capital ex:Berlin .
ex:Switzerland a ex:Country ; schema:name "Switzerland" ; skos:altLabel "Swiss Confederation" ; ex:capital ex:Bern .
ex:German a ex:Language ; schema:name "German" .
ex:Berlin a ex:City ; schema:name "Berlin" ; ex:inCountry ex:Germany .
ex:Bern a ex:City ; schema:name "Bern" ; ex:inCountry ex:Switzerland .
ex:BadenBaden a ex:City ; schema:name "Baden-Baden" ; ex:inCountry ex:Germany .
ex:Baden schema:name "Baden" .
ex:Well schema:name "Well" .
ex:Mary schema:name "Mary" .
ex:Germany ex:officialLanguage ex:German .
ex:Switzerland ex:officialLanguage ex:German .
"""


def test_place_names_come_from_english_morphology():
    assert {"germany"} <= place_names_for("German")
    assert "sweden" in place_names_for("Swedish") and "italy" in place_names_for("Italian")
    assert "china" in place_names_for("Chinese") and "iceland" in place_names_for("Icelandic")
    assert "lunmark" in place_names_for("Lunmarkish")
    assert "switzerland" not in place_names_for("Swiss")  # irregular: only an alias can say it


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.loading.builder import build_kg

    home = tmp_path_factory.mktemp("places_home")
    src = home / "places.ttl"
    src.write_text(TTL, encoding="utf-8")
    build_kg([src], "places", home=home, progress=False)
    tools = KGTools.from_kg(open_kg("places", home=home))
    yield tools.toolbox()
    tools.close()


async def _linked(question, tools):
    return {m.text: m.exact_iris() for m in await spot_mentions(question, tools)}


async def test_an_adjective_before_a_noun_links_the_place_first(places):
    got = await _linked("Which German city is the capital?", places)
    assert got["German"][0] == "http://example.org/places/Germany"
    assert "http://example.org/places/German" in got["German"]  # the language stays a reading
    assert (await _linked("What is the Swiss capital?", places))["Swiss"] == ["http://example.org/places/Switzerland"]


async def test_a_language_named_alone_stays_the_language(places):
    assert (await _linked("Where do people speak German?", places))["German"] == ["http://example.org/places/German"]


async def test_a_name_inside_a_hyphenated_compound_is_a_mention_unless_the_whole_word_is_a_name(places):
    got = await _linked("Is Bern a German-speaking city?", places)
    assert "http://example.org/places/German" in got["German"]
    assert (await _linked("Is Baden-Baden in Germany?", places))["Baden-Baden"] == ["http://example.org/places/BadenBaden"]
    assert "Baden" not in await _linked("Is Baden-Baden in Germany?", places)
    assert "well" not in await _linked("Is Bern a well-known city?", places)  # lower case: a word, not a name
    assert "Mary" not in await _linked("Is Mary-Kate in Bern?", places)  # two capitalised parts: one name
