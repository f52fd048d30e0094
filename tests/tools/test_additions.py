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


SENTENCE = "Tracker was directed by Ian Sharp for Acme Pictures."


@pytest.mark.parametrize("bad,why", [
    # the studio read from the same sentence as the known director (the README's RKO line, issue 40)
    ({"subject": f"{E}Tracker", "predicate": f"{R}directed_by", "object_label": "Acme Pictures",
      "sentence": SENTENCE}, "the same sentence gives Ian Sharp"),
    ({"subject_label": "Acme Pictures", "predicate": f"{R}directed_by", "object": f"{E}Ian%20Sharp",
      "sentence": SENTENCE}, "the same sentence gives Tracker"),
    ({"subject": f"{E}Ian%20Sharp", "predicate": f"{R}directed_by", "object": f"{E}Tracker"},
     "Ian Sharp is not the kind of thing"),  # a person as a film: outside the relation's domain
    ({"subject_label": "New Film", "predicate": f"{R}directed_by", "object_label": "New Person"},
     "neither end is in the KG"),
])
def test_a_triple_outside_the_relations_domain_or_range_is_refused_unless_forced(home, tmp_path, bad, why):
    known = {"subject": f"{E}Tracker", "predicate": f"{R}directed_by", "object": f"{E}Ian%20Sharp",
             "sentence": SENTENCE}
    fine = {"subject": f"{E}River%20Queen", "predicate": f"{R}starred_actors", "object_label": "Cliff Curtis"}
    path = _write(tmp_path / "mixed.jsonl", [known, fine, bad])
    before = _facts(home)
    report = add_reviewed_triples("small", path, home=home)
    assert not report.written and report.added == 0 and _facts(home) == before  # nothing written
    assert [p.number for p in report.refused] == [3] and why in report.refused[0].refused
    assert report.planned[0].already and not report.planned[1].refused
    forced = add_reviewed_triples("small", path, home=home, force=True)
    assert forced.written and forced.added >= 2


def test_names_listed_together_are_values_of_one_end(home, tmp_path):
    sentence = "Cast of River Queen: Temuera Morrison, Cliff Curtis and Kiefer Sutherland."
    rows = [{"subject": f"{E}River%20Queen", "predicate": f"{R}starred_actors", "object_label": name,
             "sentence": sentence} for name in ("Temuera Morrison", "Cliff Curtis", "Kiefer Sutherland")]
    report = add_reviewed_triples("small", _write(tmp_path / "cast.jsonl", rows), home=home)
    assert report.written and not report.refused and report.added == 3


def test_kg_add_shows_each_triple_and_refuses_a_misfit_without_force(home, tmp_path):
    from typer.testing import CliRunner

    from kgteam.cli.app import app

    path = _write(tmp_path / "new.jsonl", [
        {"subject": f"{E}Tracker", "subject_label": "Tracker", "predicate": f"{R}directed_by",
         "predicate_label": "directed by", "object": f"{E}Ian%20Sharp", "object_label": "Ian Sharp", "sentence": SENTENCE},
        {"subject": f"{E}Tracker", "subject_label": "Tracker", "predicate": f"{R}directed_by",
         "predicate_label": "directed by", "object_label": "Acme Pictures", "sentence": SENTENCE}])
    result = CliRunner().invoke(app, ["kg", "add", "small", str(path), "--home", str(home)], env={"COLUMNS": "200"})
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "already in the KG  Tracker --directed by--> Ian Sharp" in result.output
    assert "refused  Tracker --directed by--> Acme Pictures (new)" in result.output and "--force" in result.output
    forced = CliRunner().invoke(app, ["kg", "add", "small", str(path), "--home", str(home), "--force"],
                                env={"COLUMNS": "200"})
    assert forced.exit_code == 0 and "added 1 triple(s)" in forced.output, forced.output
