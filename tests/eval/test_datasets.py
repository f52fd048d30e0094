from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from kgteam.eval.datasets import (
    DatasetError,
    DatasetItem,
    GoldAnswer,
    load_dataset,
    read_jsonl,
    sample,
    slice_by,
    write_jsonl,
)


def test_metaqa_vanilla_reader(data_dir):
    items = load_dataset("metaqa:1-hop", data_dir)
    assert len(items) == 9992
    first = items[0]
    assert first.id == "metaqa-1hop-dev-00000"
    assert first.question == "what movies did Temuera Morrison act in"
    assert [a.label for a in first.answers] == ["Once Were Warriors", "Tracker", "River Queen"]
    assert first.topic_entity.label == "Temuera Morrison"
    assert first.topic_entity.iri == "http://example.org/metaqa/e/" + quote("Temuera Morrison", safe="")
    assert first.tags == {"dataset": "metaqa", "hops": 1, "qtype": "actor_to_movie"}
    assert len({it.id for it in items}) == len(items)


def test_metaqa_three_hop_qtypes(data_dir):
    items = load_dataset("metaqa:3-hop", data_dir)
    assert items[1].tags["qtype"] == "movie_to_director_to_movie_to_actor"
    assert items[1].hops == 3
    assert {a.label for a in items[1].answers} == {"Bill Paxton", "Don Cheadle", "Joaquin Phoenix"}


def test_metaqa_consistent_reader_shares_ids_with_vanilla(data_dir):
    consistent = load_dataset("metaqa-consistent:2-hop", data_dir)
    vanilla = {it.id: it for it in load_dataset("metaqa:2-hop", data_dir)}
    assert len(consistent) == 11723
    for item in consistent[:200]:
        assert item.id in vanilla
        assert vanilla[item.id].question == item.question
        assert item.gold_query and "SELECT" in item.gold_query
    assert consistent[0].answers[0].iri == "http://example.org/metaqa/e/Greek"
    assert consistent[0].tags["qtype"] == "director_to_movie_to_language"


def test_wc2014_reader(data_dir, need):
    need(data_dir / "wc2014" / "WC-P1.txt")
    p1 = load_dataset("wc2014:P1", data_dir)
    assert len(p1) == 6482
    assert p1[0].question == "which football club does Alan_PULIDO play for ?"
    assert [a.label for a in p1[0].answers] == ["Tigres_UANL"]
    assert p1[0].gold_paths[0].relations == ["plays_in_club"]
    assert p1[0].hops == 1
    p2 = load_dataset("wc2014:P2", data_dir)
    item = p2[1]  # "name a soccer club that has a player from Mexico ?" with a 12-club answer set
    assert len(item.answers) == 12 and "Tigres_UANL" in {a.label for a in item.answers}
    path = item.gold_paths[0]
    assert path.relations == ["plays_for_country_inverse", "plays_in_club"]
    assert path.directions == ["in", "out"]
    assert path.relation_iris[0].endswith("/r/plays_for_country")
    c = load_dataset("wc2014:C", data_dir)
    assert len(c[0].gold_paths) == 2 and len(c[0].topic_entities) == 2
    assert c[0].tags["qtype"] == "conjunction"


def test_pathquestion_reader(data_dir, need):
    need(data_dir / "pathquestion" / "PQ-3H.txt")
    items = load_dataset("pq:3H", data_dir)
    assert len(items) == 5198
    first = items[0]
    assert first.topic_entity.label == "sylvia_brett"
    assert first.gold_paths[0].relations == ["spouse", "parents", "place_of_birth"]
    assert [a.label for a in first.answers] == ["burnham-on-sea"]
    assert first.hops == 3 and first.tags["qtype"] == "spouse/parents/place_of_birth"
    assert len(load_dataset("pq:2H", data_dir)) == 1908


def test_qald9_reader_languages_and_answer_kinds(data_dir):
    test_en = load_dataset("qald9:test:en", data_dir)
    assert len(test_en) == 150
    by_id = {it.id: it for it in test_en}
    assert by_id["qald9-test-99"].question == "What is the time zone of Salt Lake City?"
    assert by_id["qald9-test-99"].answers == [
        GoldAnswer(label="Mountain Time Zone", iri="http://dbpedia.org/resource/Mountain_Time_Zone")]
    assert by_id["qald9-test-6"].answers[0].label == "true"  # boolean question
    assert by_id["qald9-test-73"].answers[0].label == "8" and by_id["qald9-test-73"].tags["answer_type"] == "number"
    assert "dbpedia.org" in by_id["qald9-test-99"].gold_query
    train_de = load_dataset("qald9:train:de", data_dir)
    assert train_de[0].question.startswith("Liste alle Brettspiele")


def test_qald10_reader(data_dir):
    items = load_dataset("qald10:en", data_dir)
    assert len(items) == 394
    first = items[0]
    assert first.answers[0].iri == "http://www.wikidata.org/entity/Q42299" and first.answers[0].label is None
    assert first.tags["answer_type"] == "resource"
    by_id = {it.id: it for it in items}
    assert by_id["qald10-7"].answers[0].label == "true"
    assert by_id["qald10-8"].answers[0].label == "+100"
    assert by_id["qald10-8"].tags["answer_type"] == "number"


def test_lcquad_reader(data_dir):
    items = load_dataset("lcquad1:test", data_dir)
    assert len(items) == 1000
    assert items[0].id == "lcquad1-test-1701" and not items[0].answers
    assert items[0].gold_query.startswith("SELECT DISTINCT ?uri")
    assert all(it.question for it in items)


def test_file_paths_are_sniffed(data_dir):
    assert load_dataset(str(data_dir / "metaqa" / "1-hop" / "qa_dev.txt"))[0].tags["hops"] == 1
    assert load_dataset(str(data_dir / "questions" / "qald_10.json"))[0].answers
    assert load_dataset(str(data_dir / "metaqa" / "3-hop" / "dev_consistent.jsonl"))[0].gold_query


def test_generic_jsonl_round_trip(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(
        '{"id": "q1", "question": "Who directed Heat?", "answers": ["Michael Mann"], "topic_entity": "Heat", "hops": 1}\n'
        '{"question": "Is 2 > 1?", "answers": [true], "tags": {"qtype": "bool"}}\n'
        '{"question": "Population?", "answers": [{"label": "12", "iri": null}], "sparql": "ASK {}"}\n',
        encoding="utf-8")
    items = read_jsonl(path)
    assert items[0].id == "q1" and items[0].topic_entity.label == "Heat" and items[0].hops == 1
    assert items[1].id == "mine-00001" and items[1].answers[0].label == "true"
    assert items[2].gold_query == "ASK {}"
    write_jsonl(items, tmp_path / "again.jsonl")
    again = read_jsonl(tmp_path / "again.jsonl")
    assert [a.model_dump() for a in again] == [b.model_dump() for b in items]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="missing field 'question'"):
        read_jsonl(bad)


def test_seeded_sampling_and_slicing():
    items = [DatasetItem(id=f"q{i}", question="?", tags={"hops": 1 + i % 3}) for i in range(100)]
    a, b = sample(items, 10, seed=7), sample(items, 10, seed=7)
    assert [x.id for x in a] == [x.id for x in b]
    assert [x.id for x in a] != [x.id for x in sample(items, 10, seed=8)]
    assert [x.id for x in a] == sorted((x.id for x in a), key=lambda s: int(s[1:]))  # dataset order kept
    assert len(sample(items, None)) == 100
    assert {x.tags["hops"] for x in slice_by(items, hops=2)} == {2} and len(slice_by(items, hops="2")) == 33


def test_unknown_dataset_lists_known_names(data_dir):
    with pytest.raises(DatasetError, match="known: metaqa"):
        load_dataset("nope:1", data_dir)
    with pytest.raises(DatasetError, match="wc2014 parts"):
        load_dataset("wc2014:P9", data_dir)


def test_generic_jsonl_with_qtype_and_sparql_is_not_taken_for_metaqa(tmp_path):
    from kgteam.eval.datasets import load_dataset

    row = {"question": "Which maker has a bench at X and is a native of Y?", "qtype": "conjunction",
           "sparql": "SELECT ?answer WHERE { ?answer <http://e/p> <http://e/X> }",
           "answers": [{"label": "Ann", "iri": "http://e/Ann"}],
           "topic_entities": [{"label": "X", "iri": "http://e/X"}, {"label": "Y", "iri": "http://e/Y"}]}
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    (item,) = load_dataset(str(path))
    assert [a.iri for a in item.answers] == ["http://e/Ann"] and len(item.topic_entities) == 2
    assert item.tags["qtype"] == "conjunction"


def test_jsonl_answer_kinds_type_the_gold(tmp_path):
    from kgteam.eval.datasets import DatasetError

    xsd = "http://www.w3.org/2001/XMLSchema#"
    path = tmp_path / "shapes.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"id": "n", "question": "How many rivers?", "answers": [6], "kind": "number", "sparql": "SELECT (COUNT(?r) AS ?n) {}"},
        {"id": "y", "question": "When?", "answers": ["1979"], "answer_kind": "date"},
        {"id": "d", "question": "When exactly?", "answers": ["1979-05-25"], "kind": "date"},
        {"id": "b", "question": "Is it?", "answers": ["yes"], "kind": "boolean"},
        {"id": "e", "question": "Which sea does the Alps flow into?", "answers": [], "kind": "empty"},
        {"id": "c", "question": "Claim: x", "answers": ["supported"], "kind": "claim"},
    ]) + "\n", encoding="utf-8")
    items = {it.id: it for it in read_jsonl(path)}
    assert (items["n"].answer_kind, items["n"].answers[0].datatype, items["n"].gold_query) == (
        "number", xsd + "decimal", "SELECT (COUNT(?r) AS ?n) {}")
    assert items["y"].answers[0].datatype == xsd + "gYear"
    assert items["d"].answers[0].datatype == xsd + "date"
    assert (items["b"].answers[0].label, items["b"].answers[0].datatype) == ("true", xsd + "boolean")
    assert (items["e"].answer_kind, items["e"].answers) == ("empty", [])
    assert items["c"].answer_kind is None and items["c"].tags["kind"] == "claim"  # R3's kind tag is untouched
    # a gold that is not of its declared kind is refused with the line
    for bad, why in (({"question": "q", "answers": ["six"], "kind": "number"}, "not a number"),
                     ({"question": "q", "answers": ["x"], "kind": "empty"}, "holds no answer"),
                     ({"question": "q", "answers": ["sometimes"], "kind": "boolean"}, "yes/no"),
                     ({"question": "q", "answers": ["1"], "answer_kind": "colour"}, "not one of")):
        path.write_text(json.dumps(bad) + "\n", encoding="utf-8")
        with pytest.raises(DatasetError, match=why):
            read_jsonl(path)
