"""``kgteam kg add``: reviewed triples reach the KG; a bad file changes nothing."""

from __future__ import annotations

import json

import pytest

from kgteam.tools.kg import open_kg
from kgteam.tools.loading.additions import add_reviewed_triples
from kgteam.tools.loading.builder import build_kg
from kgteam.tools.loading.errors import LoadError

KB = "Tracker|directed_by|Ian Sharp\nTracker|starred_actors|Temuera Morrison\nRiver Queen|directed_by|Vincent Ward\n"
E = "http://example.org/metaqa/e/"
R = "http://example.org/metaqa/r/"


@pytest.fixture()
def home(tmp_path):
    src = tmp_path / "kb.txt"
    src.write_text(KB, encoding="utf-8")
    build_kg([src], "small", home=tmp_path, format="metaqa", progress=False)
    return tmp_path


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _facts(home):
    with open_kg("small", home=home) as kg:
        res = kg.store.query(f"SELECT ?s ?o WHERE {{ ?s <{R}starred_actors> ?o }}", timeout_s=10, max_rows=100)
        return sorted((r["s"].value, r["o"].value) for r in res.rows)


def test_a_reviewed_file_adds_facts_and_new_named_entities(home, tmp_path):
    rows = [{"subject": f"{E}River%20Queen", "subject_label": "River Queen", "predicate": f"{R}starred_actors",
             "object": None, "object_label": "Kiefer Sutherland"},
            {"subject": f"{E}Tracker", "predicate": f"{R}starred_actors", "object_label": "Temuera Morrison"}]
    report = add_reviewed_triples("small", _write(tmp_path / "ok.jsonl", rows), home=home)
    assert report.added == 1 and report.already == 1  # Temuera Morrison is the KG's own entity
    assert len(report.new_entities) == 1 and "Kiefer" in report.new_entities[0]
    assert (f"{E}River%20Queen", report.new_entities[0]) in _facts(home)
    with open_kg("small", home=home) as kg:  # the new name is searchable, and the manifest counts it
        assert kg.labels.search("Kiefer Sutherland", k=3)[0].iri == report.new_entities[0]
        assert kg.manifest["sources"][-1]["format"] == "reviewed-jsonl"
    assert report.kept_as is not None and report.kept_as.exists()


@pytest.mark.parametrize("bad,message", [
    ({"subject": f"{E}Tracker", "predicate": f"{R}invented_relation", "object_label": "X"}, "not a relation of this KG"),
    ({"subject": f"{E}Nowhere", "predicate": f"{R}directed_by", "object_label": "X"}, "is not in the KG"),
    ({"subject": f"{E}Tracker", "predicate": f"{R}directed_by"}, "needs 'object'"),
])
def test_one_bad_line_changes_nothing(home, tmp_path, bad, message):
    good = {"subject": f"{E}River%20Queen", "predicate": f"{R}starred_actors", "object_label": "Cliff Curtis"}
    before = _facts(home)
    with pytest.raises(LoadError) as info:
        add_reviewed_triples("small", _write(tmp_path / "bad.jsonl", [good, bad]), home=home)
    assert message in str(info.value) and "bad.jsonl:2" in str(info.value)
    assert _facts(home) == before


def test_not_json_is_a_file_line_error(home, tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text("{oops\n", encoding="utf-8")
    with pytest.raises(LoadError, match="x.jsonl:1: not a JSON object"):
        add_reviewed_triples("small", path, home=home)


def test_a_name_in_other_case_is_the_kgs_entity_and_a_line_twice_counts_once(home, tmp_path):
    row = {"subject": f"{E}River%20Queen", "predicate": f"{R}starred_actors", "object_label": "temuera  MORRISON"}
    report = add_reviewed_triples("small", _write(tmp_path / "case.jsonl", [row, row]), home=home)
    assert report.new_entities == [] and report.added == 1
    assert (f"{E}River%20Queen", f"{E}Temuera%20Morrison") in _facts(home)
    with open_kg("small", home=home) as kg:
        assert kg.manifest["counts"]["facts"] == 4  # three loaded, one added (not two)
