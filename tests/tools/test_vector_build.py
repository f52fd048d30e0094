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
    assert steps.index("names") < steps.index("relations") < steps.index("triples") < steps.index("training") \
        < steps.index("indexing")
    assert ("names", 1, 1) in chunked_events  # reading the store's names is a step of its own
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
    events: list = []
    m = build_kg(src, "met", home=tmp_path, format="metaqa", progress=events.append, embed=True, vectors="triples")
    assert read_back == []  # the load's own facts were used
    steps = [(e.source, e.docs) for e in events if e.phase == "embed"]
    assert steps.index(("facts", 2)) < steps.index(("triples", 0)) and ("names", 0) not in steps
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


@pytest.mark.parametrize(("n", "rows", "train_rows"), [(400, 60, 57), (400, 7, 400), (1000, 64, 100), (5, 3, 2)])
def test_the_training_sample_is_every_kth_row_read_a_chunk_at_a_time(tmp_path: Path, n, rows, train_rows):
    """The IVF trains on an even sample of the spilled rows; read chunk by chunk it must be the
    very rows a strided read of the whole file gives, and hold no chunk alive."""
    full = np.random.default_rng(n).standard_normal((n, 8)).astype(np.float16)
    spill = tmp_path / "spill.f16"
    spill.write_bytes(full.tobytes())
    got = stream._training_sample(spill, 8, n, rows, train_rows)
    want = full[:: max(1, n // train_rows)][:train_rows].astype(np.float32)
    assert got.dtype == np.float32 and np.array_equal(got, want)
    # no view into a whole chunk: at most the sample itself (rows of the last stride) backs it
    assert got.base is None or got.base.size <= got.size + 2 * max(1, n // train_rows) * 8


def test_met_facts_distinct_rows_equal_numpy_unique_on_both_paths(monkeypatch: pytest.MonkeyPatch):
    from kgteam.tools.vectors.met_facts import MetFacts

    rng = np.random.default_rng(3)
    rows = rng.integers(0, 1000, size=(5000, 3)).astype(np.int32)
    rows = np.concatenate([rows, rows[:700]])  # repeated lines
    met = MetFacts()
    met.ids = {f"<t{i}>": i for i in range(1000)}
    met.rows.frombytes(rows.tobytes())
    want = np.unique(rows, axis=0)
    assert np.array_equal(met.fact_ids(), want)  # packed int64 keys
    met.ids = {f"<t{i}>": i for i in range(1 << 22)}  # 3 x 22 bits do not fit 63: rows sorted as rows
    assert np.array_equal(met.fact_ids(), want)


def test_a_relation_that_is_a_naming_predicate_reads_the_store_and_the_gc_is_back_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Triples of a KG's own naming predicate are names, not facts: only the store scan tells them
    apart, so a load whose relation is one builds its index from the store."""
    import gc

    from kgteam.tools.iri import mint_relation_iri

    src = tmp_path / "kb.tsv"
    src.write_text("q1\tname\tAda Lovelace\nq1\tknows\tq2\nq2\tname\tCharles Babbage\n", encoding="utf-8")
    base = "http://example.org/people/"
    read_back: list[int] = []
    real_chunks = stream._chunks
    monkeypatch.setattr(stream, "_chunks", lambda *a, **k: read_back.append(1) or real_chunks(*a, **k))
    m = build_kg(src, "people", home=tmp_path, format="tsv", base_iri=base, progress=False, embed=True,
                 vectors="triples", label_predicates=[mint_relation_iri(base, "name")])
    assert read_back == [1]
    assert gc.isenabled()
    rows = _vector_rows(m.path / "vectors")
    # the naming triples are left out of the facts (a TSV object is an IRI, not a literal name,
    # so the ids keep the loader's own labels)
    assert [v[:3] for v in rows.values()] == [("q1", "knows", "q2")]


def test_auto_stops_keeping_fact_ids_past_its_limit_and_reads_the_store_if_it_still_builds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``auto`` builds no triple index past its size limit, so the load stops keeping ids there; if
    duplicate lines bring the facts back under the limit, the index comes from the store."""
    from kgteam.tools.loading import builder

    monkeypatch.setattr(builder, "AUTO_TRIPLES_MAX_FACTS", 3)
    monkeypatch.setattr(builder, "_REPORT_EVERY", 2)
    read_back: list[int] = []
    real_chunks = stream._chunks
    monkeypatch.setattr(stream, "_chunks", lambda *a, **k: read_back.append(1) or real_chunks(*a, **k))
    src = tmp_path / "kb.txt"
    src.write_text("".join(f"film{i}|directed_by|person{i % 3}\n" for i in range(10)), encoding="utf-8")
    m = build_kg(src, "many", home=tmp_path, format="metaqa", progress=False, embed=True, vectors="auto")
    assert read_back == [1] and m.vectors is not None and m.vectors.triples == 10
