"""The triple vector index at scale: load builds what teams use, a missing index names the command
that adds it, and the streamed (chunked) build answers like a one-shot build, with progress inside
every step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyoxigraph as ox
import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.tools.embedding import default_embedder
from kgteam.tools.kg import open_kg
from kgteam.tools.kg_tools import KGTools
from kgteam.tools.loading import build_kg
from kgteam.tools.types import ToolError
from kgteam.tools.vectors import policy, stream
from kgteam.tools.vectors.index import IVFBuilder, VectorIndex
from kgteam.tools.vectors.store import KGVectors, build_vectors

EX = "http://example.org/farm/"


def await_(coro):
    """Runs one tool call (these tests mix CLI runs, which start their own event loops, with tool calls)."""
    import asyncio

    return asyncio.run(coro)


def _farm_ttl(n: int) -> str:
    """``n`` facts about animals, farms and colours, each entity labelled."""
    lines = [f"@prefix ex: <{EX}> .", "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .",
             'ex:livesOn rdfs:label "lives on" .', 'ex:colour rdfs:label "has colour" .']
    colours = ["red", "brown", "white", "black", "grey", "golden"]
    for i in range(n // 2):
        lines.append(f'ex:a{i} rdfs:label "animal {i}" . ex:f{i % 17} rdfs:label "farm {i % 17}" .')
        lines.append(f"ex:a{i} ex:livesOn ex:f{i % 17} . ex:a{i} ex:colour \"{colours[i % 6]}\" .")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def farm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    home = tmp_path_factory.mktemp("farm_home")
    src = home / "farm.ttl"
    src.write_text(_farm_ttl(400), encoding="utf-8")
    build_kg(src, "farm", home=home, progress=False)  # no vectors
    return home, src


def test_auto_skips_the_triple_index_above_its_limit_and_the_tool_names_the_command(
        farm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _, src = farm
    monkeypatch.setattr(policy, "AUTO_TRIPLES_MAX_FACTS", 100)
    runner = CliRunner()
    res = runner.invoke(app, ["load", str(src), "--name", "big", "--home", str(tmp_path), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "relation vectors only" in res.output and "kgteam index big" in res.output
    with open_kg("big", tmp_path) as kg:
        assert kg.vectors is not None and not kg.vectors.has_triples
        tools = KGTools.from_kg(kg)
        assert (await_(tools.search_relations("lives on", k=1)))[0].iri == f"{EX}livesOn"
        with pytest.raises(ToolError, match=r"KG 'big' has no triple vector index.*`kgteam index big`"):
            await_(tools.similar_triples("animal 3 lives on", k=3))
    res = runner.invoke(app, ["kgs", "--home", str(tmp_path)])
    assert "relations" in res.output and "triples (" not in res.output
    res = runner.invoke(app, ["index", "big", "--home", str(tmp_path), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "400 triples" in res.output
    res = runner.invoke(app, ["kgs", "--home", str(tmp_path)])
    assert "relations + 400 triples (exact)" in res.output
    with open_kg("big", tmp_path) as kg:
        hits = await_(KGTools.from_kg(kg).similar_triples("animal 3 lives on farm 3", k=3))
        assert (hits[0].subject, hits[0].predicate) == (f"{EX}a3", f"{EX}livesOn")


def test_small_kgs_get_both_indexes_and_bad_vector_options_are_refused(farm, tmp_path: Path):
    _, src = farm
    runner = CliRunner()
    res = runner.invoke(app, ["load", str(src), "--name", "small", "--home", str(tmp_path), "--quiet",
                              "--vectors", "relations"])
    assert res.exit_code == 0, res.output
    assert KGVectors.open(tmp_path / "kgs" / "small").info.triples == 0
    for bad, said in ((["--vectors", "all"], "--vectors must be one of auto, triples, relations, none"),
                      (["--no-embed", "--vectors", "triples"], "cannot be combined with --vectors triples")):
        res = runner.invoke(app, ["load", str(src), "--name", "x", "--home", str(tmp_path), "--quiet", *bad])
        assert res.exit_code == 2 and said in res.output, res.output
    assert not (tmp_path / "kgs" / "x").exists()


def _build(store: ox.Store, folder: Path, monkeypatch: pytest.MonkeyPatch, rows: int, events: list) -> KGVectors:
    monkeypatch.setattr(stream, "chunk_rows", lambda memory_mb, dim: rows)
    info = build_vectors(store, folder, default_embedder(), ann_threshold=100, facts=400,
                         progress=lambda what, done, total: events.append((what, done, total)))
    return KGVectors(folder, info)


def test_a_chunked_build_equals_a_one_shot_build_and_reports_progress_in_every_step(
        farm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home, _ = farm
    store = ox.Store.read_only(str(home / "kgs" / "farm" / "store"))
    chunked_events: list = []
    chunked = _build(store, tmp_path / "chunked", monkeypatch, 64, chunked_events)
    whole = _build(store, tmp_path / "whole", monkeypatch, 100_000, [])
    assert chunked.info.triples == whole.info.triples == 400 and chunked.info.triples_kind == "ivf"
    assert np.array_equal(np.load(tmp_path / "chunked" / "triples.ids.npy"), np.load(tmp_path / "whole" / "triples.ids.npy"))
    assert not list((tmp_path / "chunked").glob("*.spill*"))  # the spill file is gone
    emb = default_embedder()
    for text in ("animal 7 lives on farm 7", "animal 12 has colour", "golden"):
        q = emb.embed([text])
        assert [(m.subject, m.predicate, m.object) for m in chunked.search_triples(q, 5)] == \
               [(m.subject, m.predicate, m.object) for m in whole.search_triples(q, 5)]
    steps = [e[0] for e in chunked_events]
    assert steps.index("relations") < steps.index("triples") < steps.index("training") < steps.index("indexing")
    embedded = [done for what, done, _ in chunked_events if what == "triples"]
    indexed = [done for what, done, _ in chunked_events if what == "indexing"]
    assert embedded == [0, 64, 128, 192, 256, 320, 384, 400]  # one event per chunk, the total 400
    assert indexed == embedded  # the graph build reports per chunk too
    assert ("training", 1, 1) in chunked_events


def test_ivf_index_round_trips_and_finds_near_duplicates(tmp_path: Path):
    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((3000, 32)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    builder = IVFBuilder(32, len(vecs))
    builder.train(vecs[::3])
    for start in range(0, len(vecs), 500):
        builder.add(vecs[start : start + 500])
    index = builder.finish()
    queries = vecs[:50] + 0.02 * rng.standard_normal((50, 32)).astype(np.float32)
    assert (index.search(queries, 3)[1][:, 0] == np.arange(50)).mean() >= 0.95
    index.save(tmp_path / "t")
    again = VectorIndex.open(tmp_path / "t", 32, "ivf", 3000)
    assert np.array_equal(again.search(queries, 3)[1], index.search(queries, 3)[1])
    with pytest.raises(Exception, match="holds 3000 rows"):
        VectorIndex.open(tmp_path / "t", 32, "ivf", 2999)


def _vector_rows(folder: Path) -> dict[tuple[str, str, str], tuple[str, str, str, np.ndarray]]:
    """(s, p, o) IRIs -> their labels and vector, from a vectors/ folder with an exact index."""
    import json

    terms = json.loads((folder / "terms.json").read_text(encoding="utf-8"))
    ids = np.load(folder / "triples.ids.npy")
    matrix = np.load(folder / "triples.npy")
    values, labels = terms["values"], terms["labels"]
    return {(values[s], values[p], values[o]): (labels[s], labels[p], labels[o], matrix[row])
            for row, (s, p, o) in enumerate(ids.tolist())}


def test_a_name_triple_load_builds_from_the_facts_it_met_the_same_index_the_store_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The load keeps each fact's term ids as it reads (no second pass over the store); its index
    must hold the same distinct facts, names and vectors as one built by reading the store back."""
    import json

    src = tmp_path / "kb.txt"
    lines = ["Kismet|directed_by|William Dieterle", "Kismet|release_year|1944",
             "Kismet|directed_by|William Dieterle",  # a duplicate line: one fact
             "Ocean's_Eleven|starred_actors|Zoë  Saldaña", "Up|has_genre|Animation", "1944|has_tags|Up"]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read_back: list[int] = []
    real_chunks = stream._chunks
    monkeypatch.setattr(stream, "_chunks", lambda *a, **k: read_back.append(1) or real_chunks(*a, **k))
    m = build_kg(src, "met", home=tmp_path, format="metaqa", progress=False, embed=True, vectors="triples")
    assert read_back == []  # the load's own facts were used
    assert m.vectors is not None and m.vectors.triples == m.counts.facts == 5  # 6 lines, 5 distinct facts
    met = _vector_rows(m.path / "vectors")
    store = ox.Store.read_only(str(m.path / "store"))
    scanned_dir = tmp_path / "scanned"
    build_vectors(store, scanned_dir, default_embedder(), triples=True)
    assert read_back == [1]
    scanned = _vector_rows(scanned_dir)
    assert set(met) == set(scanned)
    assert json.loads((m.path / "vectors" / "relations.json").read_text())["iris"] == \
        json.loads((scanned_dir / "relations.json").read_text())["iris"]
    for key, (s, p, o, vec) in met.items():
        assert (s, p, o) == scanned[key][:3]
        assert np.allclose(vec, scanned[key][3], atol=1e-5)
    assert ("Ocean's Eleven", "starred actors", "Zoë Saldaña") in {v[:3] for v in met.values()}
