"""A KG's profile and names read from the KG itself: Wikibase property entities name their direct
claims, "instance of" / "subclass of" type and relate classes, schema nodes and redirects are told
apart from instances. On two small KGs shaped like Wikidata and DBpedia extracts (tests/data/kgs)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pyoxigraph
import pytest

from kgteam.tools.backends.oxigraph_store import OxigraphStore
from kgteam.tools.kg import open_kg
from kgteam.tools.kg_tools import KGTools
from kgteam.tools.loading.builder import build_kg
from kgteam.tools.naming import Naming, check_lang

KGS = Path(__file__).resolve().parents[1] / "data" / "kgs"
WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
DBR = "http://dbpedia.org/resource/"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("profile_home")
    build_kg([KGS / "wikilite" / "wikilite.ttl"], "wikilite", home=home, progress=False)
    build_kg([KGS / "dbplite" / "dbplite.ttl"], "dbplite", home=home, progress=False)
    return home


@pytest.fixture(scope="module")
def wiki(home: Path):
    tools = KGTools.from_kg(open_kg("wikilite", home=home), embedder=None)
    yield tools
    tools.close()


@pytest.fixture(scope="module")
def dbp(home: Path):
    tools = KGTools.from_kg(open_kg("dbplite", home=home), embedder=None)
    yield tools
    tools.close()


def test_a_direct_claim_is_named_by_its_property_entity(wiki: KGTools) -> None:
    names = asyncio.run(wiki.labels_for([WDT + "P36", WDT + "P1082", WD + "Q100"]))
    assert names == {WDT + "P36": "capital", WDT + "P1082": "population", WD + "Q100": "Norvania"}
    found = asyncio.run(wiki.relation_names([WDT + "P36"]))[WDT + "P36"]
    assert "seat of government" in found.names  # the property entity's alias
    assert all(n != "Hauptstadt" for n in found.names)  # another language says nothing about English words


def test_declared_names_are_read_at_question_time_on_a_store_that_was_not_loaded_by_kgteam(
        tmp_path: Path, wiki: KGTools) -> None:
    """An endpoint's store holds no label kgteam wrote: the declaring node is asked then."""
    raw = pyoxigraph.Store(str(tmp_path / "raw"))
    raw.bulk_load(path=str(KGS / "wikilite" / "wikilite.ttl"), format=pyoxigraph.RdfFormat.TURTLE)
    raw.flush()
    del raw
    store = OxigraphStore(tmp_path / "raw")
    tools = KGTools(store, wiki.labels)
    try:
        assert asyncio.run(tools.labels_for([WDT + "P2044"])) == {WDT + "P2044": "elevation above sea level"}
        german = KGTools(store, wiki.labels, naming=Naming(lang="de"))
        assert asyncio.run(german.labels_for([WDT + "P36", WD + "Q100"])) == {
            WDT + "P36": "Hauptstadt", WD + "Q100": "Norwanien"}
    finally:
        store.close()


def test_lang_tags_are_checked() -> None:
    assert check_lang("pt-BR") == "pt-br"
    assert check_lang(None) is None
    with pytest.raises(ValueError, match="not a language tag"):
        check_lang("en; drop")


def test_typing_and_classes_come_from_the_kg(wiki: KGTools) -> None:
    profile = wiki.profile
    typing = asyncio.run(profile.typing())
    assert WDT + "P31" in typing.type_predicates and WDT + "P279" in typing.subclass_predicates
    assert asyncio.run(profile.classes_named("volcanoes")) == [WD + "Q8072"]
    assert asyncio.run(profile.classes_named("Cities")) == [WD + "Q515"]
    assert set(asyncio.run(profile.closure(WD + "Q8072"))) == {WD + "Q8072", WD + "Q212434"}
    assert asyncio.run(profile.class_size(WD + "Q515")) == 5  # capital cities are cities
    assert "http://wikiba.se/ontology#Property" not in asyncio.run(profile.classes())  # the schema's own kind
    attributes = {a.label: a for a in asyncio.run(profile.attributes(WD + "Q23442"))}
    assert attributes["area"].kind == "number" and attributes["area"].coverage == 1.0
    assert attributes["elevation above sea level"].coverage == 0.75


def test_schema_nodes_are_never_instances(wiki: KGTools, dbp: KGTools) -> None:
    found = asyncio.run(wiki.profile.schema_nodes([WD + "P36", "http://www.wikidata.org/prop/qualifier/P1082",
                                                   WD + "Q100", WD + "Q515"]))
    assert found == {WD + "P36", "http://www.wikidata.org/prop/qualifier/P1082"}
    disambiguation = DBR + "Vorne_(disambiguation)"
    found = asyncio.run(dbp.profile.schema_nodes([disambiguation, DBR + "Old_Gull_Light", DBR + "Vorne"]))
    assert found == {disambiguation, DBR + "Old_Gull_Light"}
    assert asyncio.run(dbp.profile.redirect_targets([DBR + "Old_Gull_Light", DBR + "Vorne"])) == {
        DBR + "Old_Gull_Light": DBR + "Gull_Rock_Light"}


def test_a_disambiguated_title_is_found_without_its_suffix(dbp: KGTools) -> None:
    hits = asyncio.run(dbp.search_entities("Vorne Light", k=5))
    assert any(h.iri == DBR + "Vorne_Light_(lighthouse)" and h.exact for h in hits)
