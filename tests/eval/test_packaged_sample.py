"""A fresh install has no shared data and no downloads: ``kgteam eval metaqa:1-hop --model none`` then
reads the MetaQA dev sample shipped in the package, and its questions are answerable on the demo KB."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

import kgteam.eval.datasets as datasets
from kgteam.cli.app import app
from kgteam.eval.datasets import load_dataset, metaqa_sample_path
from kgteam.eval.runner import read_run


@pytest.fixture
def no_shared_data(monkeypatch, tmp_path):
    """As on a fresh install: no shared/data beside the checkout, no KGTEAM_DATA_DIR, an empty home."""
    monkeypatch.setattr(datasets, "shared_data_dir", lambda: None)
    monkeypatch.delenv("KGTEAM_DATA_DIR", raising=False)
    monkeypatch.setenv("KGTEAM_HOME", str(tmp_path / "home"))


@pytest.mark.parametrize("hops", [1, 2, 3])
def test_the_sample_is_small_and_every_topic_and_answer_is_in_the_demo_kg(hops, no_shared_data, metaqa_demo):
    _, tools = metaqa_demo
    assert metaqa_sample_path(hops).stat().st_size < 20_000
    items = load_dataset(f"metaqa:{hops}-hop")
    assert len(items) == 50 and all(it.extra["source"] == datasets.PACKAGED_SAMPLE for it in items)
    assert all(it.id.startswith(f"metaqa-{hops}hop-dev-") and it.hops == hops for it in items)
    wanted = {it.topic_entity.iri for it in items} | {a.iri for it in items for a in it.answers}
    assert all(it.answers for it in items) and None not in wanted
    values = " ".join(f"<{iri}>" for iri in sorted(wanted))
    result = asyncio.run(tools.run_sparql(f"SELECT DISTINCT ?x WHERE {{ VALUES ?x {{ {values} }} ?x ?p ?o }}"))
    assert {row["x"].value for row in result.rows} == wanted


def test_a_missing_file_names_datasets_get(no_shared_data, monkeypatch, tmp_path):
    with pytest.raises(datasets.DatasetError, match=r"`kgteam datasets get wc2014` downloads it into .*home/datasets"):
        load_dataset("wc2014:P1")
    with pytest.raises(datasets.DatasetError, match=r"`kgteam datasets get metaqa`"):
        load_dataset("metaqa:1-hop:test")  # the sample is dev questions only


def test_a_file_fetched_into_the_home_is_read_before_the_sample(no_shared_data, tmp_path):
    folder = tmp_path / "home" / "datasets" / "metaqa" / "1-hop"
    folder.mkdir(parents=True)
    (folder / "qa_dev.txt").write_text("who directed [Kismet]\tWilliam Dieterle\n", encoding="utf-8")
    items = load_dataset("metaqa:1-hop")
    assert [it.question for it in items] == ["who directed Kismet"] and "source" not in items[0].extra


def test_eval_on_a_fresh_install_runs_on_the_shipped_sample(no_shared_data, metaqa_demo, tmp_path):
    """The README's eval line, on the demo KG (built once for the session) with nothing but the package."""
    home, _ = metaqa_demo
    out = tmp_path / "run.jsonl"
    result = CliRunner().invoke(app, ["eval", "metaqa:1-hop", "--limit", "3", "--model", "none", "--out", str(out),
                                      "--home", str(home)], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert "is the 50-question sample shipped with kgteam" in " ".join(result.output.split())
    records = read_run(out)
    assert len(records) == 3 and {r.id for r in records} <= {it.id for it in load_dataset("metaqa:1-hop")}
    assert sum(r.grading.grade == "accurate" for r in records) >= 1, json.dumps([r.grading.grade for r in records])
