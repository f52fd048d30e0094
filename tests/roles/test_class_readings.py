"""Questions about the members of a class, with or without a named entity, answered model-free on
small KGs shaped like Wikidata and DBpedia extracts (tests/data/kgs/wikilite, dbplite): the class
comes from the KG's own typing ("instance of", subclasses included), the ordering attribute from a
gradable adjective's dimensions or the noun said, a described topic ("the country with the largest
population") is read first, and schema nodes or redirects never answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgteam import Team
from kgteam.tools.loading.builder import build_kg

KGS = Path(__file__).resolve().parents[1] / "data" / "kgs"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("class_readings")
    build_kg([KGS / "wikilite" / "wikilite.ttl"], "wikilite", home=home, progress=False)
    build_kg([KGS / "dbplite" / "dbplite.ttl"], "dbplite", home=home, progress=False)
    return home


@pytest.fixture(scope="module")
def wiki(home: Path):
    with Team.default(kg="wikilite", model="none", home=home) as team:
        yield team


@pytest.fixture(scope="module")
def dbp(home: Path):
    with Team.default(kg="dbplite", model="none", home=home) as team:
        yield team


def _said(answer) -> list[str]:
    return sorted(v.label for v in answer.values)


def test_a_relation_is_shown_by_its_name_never_its_p_id(wiki) -> None:
    a = wiki.ask("What is the capital of Norvania?")
    assert a.status == "answered" and _said(a) == ["Oslen"]
    assert [m.label for m in a.evidence.matches] == ["capital"]


def test_count_of_a_class_with_no_entity_counts_its_subclasses_too(wiki) -> None:
    a = wiki.ask("How many volcanoes are there?")
    assert a.status == "answered" and a.text == "3"


def test_superlative_over_a_class_chooses_the_attribute_the_adjective_measures(wiki, dbp) -> None:
    a = wiki.ask("Which island is the largest?")
    assert _said(a) == ["Lofsund"] and a.evidence.matches[-1].label == "area"
    a = dbp.ask("Which lighthouse is the tallest?")
    assert _said(a) == ["Gull Rock Light"] and a.evidence.matches[-1].label == "height"


def test_a_named_entity_narrows_the_class_by_the_link_most_members_have(wiki, dbp) -> None:
    a = wiki.ask("How many cities are in Norvania?")
    assert a.status == "answered" and a.text == "3"  # not the one city that is its capital
    a = dbp.ask("List the lighthouses in Skelby.")
    assert _said(a) == ["Gull Rock Light", "Skelby Point Light"]


def test_most_of_a_class_counts_the_linked_members(dbp) -> None:
    a = dbp.ask("Which town has the most lighthouses?")
    assert _said(a) == ["Skelby"]


def test_a_described_topic_is_read_first_and_its_reading_shown(wiki) -> None:
    a = wiki.ask("What is the capital of the country with the largest population?")
    assert _said(a) == ["Oslen"]
    assert a.signals is not None and a.signals.described
    assert "the country with the largest population = Norvania" in (a.reading or "")
    assert a.raw_confidence is not None and a.raw_confidence < 1.0  # the phrase's own doubt is carried in


def test_a_measure_no_word_names_is_inferred_and_said_so(wiki) -> None:
    from rich.console import Console

    from kgteam.cli.render import answer_renderable

    a = wiki.ask("How big is Lofsund?")
    assert a.status == "answered" and a.text == "3500"
    assert a.signals is not None and a.signals.inferred and a.grounded  # the KG's triple, an inferred relation
    console = Console(record=True, width=200)
    console.print(answer_renderable(a))
    assert "relation inferred, not named by the question" in console.export_text()
    a = wiki.ask("How high is Kalvtind?")  # "high" is the property's own alias (height): named, not inferred
    assert a.text == "410" and a.signals is not None and not a.signals.inferred


def test_not_and_no_over_a_class(wiki) -> None:
    a = wiki.ask("Which islands are not in Norvania?")
    assert _said(a) == ["Hiuma", "Saarema"]


def test_numbers_as_people_write_them(wiki, dbp) -> None:
    a = wiki.ask("Which cities have more than 100k inhabitants?")
    assert _said(a) == ["Bergvik", "Oslen", "Tallar"]
    a = dbp.ask("Which towns have more than 10 thousand inhabitants?")
    assert _said(a) == ["Skelby"]


def test_a_redirect_names_its_target_and_a_disambiguation_suffix_is_a_hint(dbp) -> None:
    a = dbp.ask("Where is Old Gull Light?")
    assert _said(a) == ["Skelby"]
    a = dbp.ask("How tall is Vorne Light?")
    assert a.text == "12"


def test_the_schema_never_answers(dbp) -> None:
    a = dbp.ask("Which place is the tallest?")  # dbo:Place is a class of the ontology in the data
    assert _said(a) == ["Gull Rock Light"]
    a = dbp.ask("What is Vorne?")  # a town, and a disambiguation page of that title
    assert all("disambiguation" not in (v.iri or "") for v in [*a.values, *a.guess])


def test_a_relation_a_kg_calls_type_stays_a_relation(tmp_path) -> None:
    ttl = tmp_path / "beers.ttl"
    ttl.write_text("""@prefix ex: <http://example.org/beer/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:type rdfs:label "type" .
ex:b1 rdfs:label "Hoppy Hound" ; ex:type ex:IPA ; ex:brewedIn ex:Leeds .
ex:b2 rdfs:label "Dark Star" ; ex:type ex:Stout ; ex:brewedIn ex:York .
ex:IPA rdfs:label "India pale ale" . ex:Stout rdfs:label "stout" .
ex:Leeds rdfs:label "Leeds" . ex:York rdfs:label "York" .
""", encoding="utf-8")
    build_kg([ttl], "beers", home=tmp_path, progress=False)
    with Team.default(kg="beers", model="none", home=tmp_path) as team:
        a = team.ask("What type is Hoppy Hound?")
    assert _said(a) == ["India pale ale"]
