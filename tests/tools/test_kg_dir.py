"""KG folders: kg_home, open_kg, list_kgs, the bundled demo KG and MetaQA gold SPARQL on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from shared_paths import SHARED_DATA

from kgteam.tools.iri import RDFS_LABEL
from kgteam.tools.kg import (
    DEMO_KG_NAME,
    KGNotFoundError,
    KnowledgeGraph,
    demo_kb_path,
    ensure_demo_kg,
    kg_home,
    list_kgs,
    open_kg,
)
from kgteam.tools.loading import build_kg

DATA = Path(__file__).resolve().parents[1] / "data" / "load"
SHARED_METAQA = SHARED_DATA / "metaqa"


@pytest.fixture
def demo_home(demo_kg_home: Path) -> Path:
    """The bundled MetaQA KB installed once for the whole run (tests/conftest.py; read-only here)."""
    return demo_kg_home


def test_kg_home_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("KGTEAM_HOME", str(tmp_path / "h"))
    assert kg_home() == tmp_path / "h"
    monkeypatch.delenv("KGTEAM_HOME")
    assert kg_home() == Path.home() / ".kgteam"


def test_open_kg_by_name_and_by_path(tmp_path):
    home = tmp_path / "home"
    build_kg([DATA / "metaqa_small.txt"], "mini", home=home, progress=False)
    with open_kg("mini", home=home) as kg:
        assert isinstance(kg, KnowledgeGraph)
        assert kg.name == "mini" and kg.path == home / "kgs" / "mini"
        assert kg.manifest["counts"]["facts"] == 10 and kg.base_iri == "http://example.org/metaqa/"
    with open_kg(home / "kgs" / "mini") as kg:
        assert kg.name == "mini"
    with open_kg(str(home / "kgs" / "mini")) as kg:
        assert kg.name == "mini"


def test_missing_kg_error_lists_what_exists_and_how_to_load(tmp_path):
    home = tmp_path / "home"
    with pytest.raises(KGNotFoundError) as info:
        open_kg("nope", home=home)
    assert "no KGs" in str(info.value) and "kgteam load" in str(info.value)
    build_kg([DATA / "metaqa_small.txt"], "mini", home=home, progress=False)
    build_kg([DATA / "wc_small.tsv"], "wc", home=home, progress=False)
    with pytest.raises(KGNotFoundError) as info:
        open_kg("movies", home=home)
    message = str(info.value)
    assert "'movies'" in message and "mini, wc" in message and "kgteam load --demo" in message
    assert isinstance(info.value, FileNotFoundError)  # callers may catch the builtin
    with pytest.raises(KGNotFoundError):
        open_kg(tmp_path / "not-a-kg", home=home)
    with pytest.raises(KGNotFoundError, match="invalid KG name"):
        open_kg("bad name!", home=home)


def test_list_kgs_reads_manifests_and_skips_work_folders(tmp_path):
    home = tmp_path / "home"
    assert list_kgs(home) == []
    build_kg([DATA / "wc_small.tsv"], "wc", home=home, progress=False)
    build_kg([DATA / "metaqa_small.txt"], "mini", home=home, progress=False)
    (home / "kgs" / ".tmp+other+1-x").mkdir()
    (home / "kgs" / "junk").mkdir()
    kgs = list_kgs(home)
    assert [m.name for m in kgs] == ["mini", "wc"]
    assert kgs[0].counts.facts == 10 and kgs[0].path == home / "kgs" / "mini"


def test_bundled_demo_kb_is_small_and_attributed():
    path = demo_kb_path()
    assert path.name.endswith(".xz") and path.stat().st_size < 2_000_000
    attribution = (path.parent / "ATTRIBUTION.md").read_text(encoding="utf-8")
    assert "CC BY 3.0" in attribution and "MetaQA" in attribution and "WikiMovies" in attribution


def test_demo_kg_is_installed_once(demo_home):
    manifest = json.loads((demo_home / "kgs" / DEMO_KG_NAME / "manifest.json").read_text())
    assert manifest["counts"]["facts"] == 128_185
    assert manifest["counts"]["relations"] == 9
    assert manifest["base_iri"] == "http://example.org/metaqa/"
    with ensure_demo_kg(home=demo_home) as kg:  # already there: opened, not rebuilt
        assert kg.manifest["created_at"] == manifest["created_at"]


def _gold(hops: str, n: int) -> list[dict]:
    path = SHARED_METAQA / hops / "dev_consistent.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not available")
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    step = max(1, len(rows) // n)
    return rows[::step][:n]


@pytest.mark.parametrize("hops,n", [("1-hop", 20), ("2-hop", 15), ("3-hop", 15)])
def test_demo_kg_reproduces_metaqa_gold_answers(demo_home, hops, n):
    with open_kg(DEMO_KG_NAME, home=demo_home) as kg:
        for item in _gold(hops, n):
            query = item["sparql"]
            var = query.split("SELECT DISTINCT ", 1)[1].split()[0]
            labelled = query.replace(
                "WHERE {", f"WHERE {{ {var} <{RDFS_LABEL}> ?answer_label . ", 1
            ).replace(f"SELECT DISTINCT {var}", "SELECT DISTINCT ?answer_label", 1)
            res = kg.store.query(labelled, timeout_s=20, max_rows=10_000)
            got = {row["answer_label"].value for row in res.rows}
            assert got == set(item["answers"]), item["question"]


def test_demo_label_search_finds_topic_entities(demo_home):
    with open_kg(DEMO_KG_NAME, home=demo_home) as kg:
        for item in _gold("1-hop", 10):
            hits = kg.labels.search(item["topic_entity"], k=10)
            assert any(h.label == item["topic_entity"] for h in hits), item["topic_entity"]
