"""The KG vector index: built by load and by ``kgteam embed``, searched by similar_triples and
hybrid search_relations, refused for another embedder, swapped atomically."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.tools.embedding import EmbeddingError, default_embedder
from kgteam.tools.fusion import reciprocal_rank_fusion
from kgteam.tools.kg import open_kg
from kgteam.tools.kg_tools import TOOL_NAMES, KGTools
from kgteam.tools.loading import build_kg
from kgteam.tools.types import SimilarTriple, ToolError
from kgteam.tools.vectors.attach import add_vectors
from kgteam.tools.vectors.index import VectorIndex

EX = "http://example.org/zoo/"
TTL = f"""
@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
ex:keeperOf rdfs:label "keeper of" ; skos:altLabel "looks after" .
ex:origin rdfs:label "native region" ; rdfs:comment "the part of the world an animal species comes from" .
ex:weight rdfs:label "weight in kg" .
ex:Alice rdfs:label "Alice Moreau" . ex:Bruno rdfs:label "Bruno Okafor" .
ex:Tiger rdfs:label "Sumatran tiger" . ex:Penguin rdfs:label "emperor penguin" . ex:Asia rdfs:label "Asia" .
ex:Antarctica rdfs:label "Antarctica" .
ex:Alice ex:keeperOf ex:Tiger . ex:Bruno ex:keeperOf ex:Penguin .
ex:Tiger ex:origin ex:Asia . ex:Penguin ex:origin ex:Antarctica .
ex:Tiger ex:weight 140 . ex:Penguin ex:weight 23 .
"""


class OtherEmbedder:
    """Same dimension, another model: its vectors must never be compared with WordLlama's."""

    name = "other:fake"
    dim = 256

    def __init__(self, fail_after: int | None = None) -> None:
        self.calls = 0
        self.fail_after = fail_after

    def embed(self, texts):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise EmbeddingError("server went away")
        rng = np.random.default_rng(len(texts))
        out = rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    home = tmp_path_factory.mktemp("zoo_home")
    src = home / "zoo.ttl"
    src.write_text(TTL, encoding="utf-8")
    build_kg(src, "zoo", home=home, progress=False, embed=True)
    build_kg(src, "plain", home=home, progress=False)
    return home, src


@pytest.fixture
def tools(zoo):
    with open_kg("zoo", zoo[0]) as kg:
        yield KGTools.from_kg(kg)


def test_load_records_the_embedder_and_indexes_labels_aliases_descriptions(zoo):
    home, _ = zoo
    with open_kg("zoo", home) as kg:
        info = kg.vectors.info
        assert kg.manifest["vectors"]["embedder"] == info.embedder == default_embedder().name
        assert (info.relations, info.triples, info.triples_kind) == (4, 7, "exact")  # rdfs:comment is a fact too
        texts = set(kg.vectors.relation_texts)
        assert {"keeper of", "looks after", "the part of the world an animal species comes from"} <= texts
    with open_kg("plain", home) as kg:
        assert kg.vectors is None and kg.manifest["vectors"] is None


async def test_similar_triples_finds_the_fact_by_meaning(tools: KGTools):
    hits = await tools.similar_triples("which animal does Alice Moreau take care of", k=3)
    assert all(isinstance(h, SimilarTriple) for h in hits)
    top = hits[0]
    assert (top.subject, top.predicate, top.object) == (f"{EX}Alice", f"{EX}keeperOf", f"{EX}Tiger")
    assert (top.subject_label, top.predicate_label, top.object_label) == ("Alice Moreau", "keeper of", "Sumatran tiger")
    assert hits[0].score >= hits[1].score >= hits[2].score
    weights = await tools.similar_triples("how heavy is the emperor penguin", k=8)
    literal = next(h for h in weights if h.predicate == f"{EX}weight" and h.subject == f"{EX}Penguin")
    assert literal.object_is_literal and literal.object == "23" and literal.object_datatype.endswith("#integer")
    assert "similar_triples" in TOOL_NAMES
    assert "similar_triples" in [s["function"]["name"] for s in tools.toolbox().specs()]


async def test_search_relations_is_hybrid_with_vectors_and_lexical_without(zoo, tools: KGTools):
    home, _ = zoo
    question = "the part of the world an animal comes from"  # no word of the label "native region"
    hybrid = await tools.search_relations(question, k=3)
    assert hybrid[0].iri == f"{EX}origin" and hybrid[0].matched.startswith("the part of the world")
    with open_kg("plain", home) as kg:
        lexical = await KGTools.from_kg(kg).search_relations(question, k=3)
    assert all(h.iri != f"{EX}origin" for h in lexical)
    exact = await tools.search_relations("weight in kg", k=3)
    assert exact[0].iri == f"{EX}weight" and exact[0].exact


async def test_tools_refuse_another_embedders_index_and_say_how_to_fix(zoo):
    home, _ = zoo
    with open_kg("zoo", home) as kg:
        other = KGTools.from_kg(kg, embedder=OtherEmbedder())
        with pytest.raises(ToolError, match="made with wordllama.*not with other:fake.*kgteam embed"):
            await other.similar_triples("Alice", k=2)
        assert (await other.search_relations("keeper of", k=1))[0].iri == f"{EX}keeperOf"  # lexical only
        with pytest.raises(ToolError, match="no embedder"):
            await KGTools.from_kg(kg, embedder=None).similar_triples("Alice", k=2)
    with open_kg("plain", home) as kg, pytest.raises(ToolError, match="kgteam index plain"):
        await KGTools.from_kg(kg).similar_triples("Alice", k=2)


def test_embed_adds_vectors_later_and_a_failed_rebuild_keeps_the_old_ones(tmp_path: Path, zoo):
    _, src = zoo
    build_kg(src, "late", home=tmp_path, progress=False)
    manifest = add_vectors("late", home=tmp_path, progress=False)
    assert manifest.vectors is not None and manifest.vectors.triples == 7
    with pytest.raises(EmbeddingError, match="went away"):
        add_vectors("late", OtherEmbedder(fail_after=1), home=tmp_path, progress=False)
    with open_kg("late", tmp_path) as kg:
        assert kg.vectors.info.embedder == default_embedder().name
    assert sorted(p.name for p in (tmp_path / "kgs" / "late").iterdir()) == ["labels", "manifest.json", "store",
                                                                           "vectors"]
    add_vectors("late", OtherEmbedder(), home=tmp_path, progress=False, triples=False)
    with open_kg("late", tmp_path) as kg:
        assert kg.vectors.info.embedder == "other:fake" and not kg.vectors.has_triples
        assert kg.manifest["vectors"]["embedder"] == "other:fake"


def test_cli_load_no_embed_then_embed(tmp_path: Path, zoo):
    _, src = zoo
    runner = CliRunner()
    res = runner.invoke(app, ["load", str(src), "--name", "cli", "--home", str(tmp_path), "--quiet", "--no-embed"])
    assert res.exit_code == 0, res.output
    assert not (tmp_path / "kgs" / "cli" / "vectors").exists()
    res = runner.invoke(app, ["embed", "cli", "--home", str(tmp_path), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "4 relations (6 texts)" in res.output and "7 triples" in res.output
    res = runner.invoke(app, ["embed", "missing", "--home", str(tmp_path), "--quiet"])
    assert res.exit_code == 1 and "no KG named 'missing'" in res.output
    res = runner.invoke(app, ["embed", "cli", "--provider", "openai", "--home", str(tmp_path)])
    assert res.exit_code == 2 and "needs 'base_url' and 'model'" in res.output


def test_exact_and_hnsw_search_agree_and_survive_a_round_trip(tmp_path: Path):
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((2000, 32)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    queries = vecs[:20] + 0.05 * rng.standard_normal((20, 32)).astype(np.float32)
    exact = VectorIndex.build(vecs)
    hnsw = VectorIndex.build(vecs, kind="hnsw")
    assert exact.kind == "exact" and hnsw.kind == "hnsw"
    es, ei = exact.search(queries, 5)
    hs, hi = hnsw.search(queries, 5)
    assert (ei[:, 0] == np.arange(20)).all() and (hi[:, 0] == np.arange(20)).all()
    assert np.allclose(es[:, 0], hs[:, 0], atol=1e-4)
    for index in (exact, hnsw):
        index.save(tmp_path / index.kind)
        again = VectorIndex.open(tmp_path / index.kind, 32, index.kind, 2000)
        assert (again.search(queries, 5)[1][:, 0] == np.arange(20)).all()
    assert exact.search(queries[:1], 5000)[1].shape == (1, 2000)


def test_reciprocal_rank_fusion_rewards_agreement_and_is_stable():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "d", "a"]])
    assert [k for k, _ in fused] == ["b", "a", "d", "c"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    assert [k for k, _ in reciprocal_rank_fusion([["x", "y"], ["y", "x"]])] == ["x", "y"]  # tie: first met
    assert [k for k, _ in reciprocal_rank_fusion([["a", "a", "b"]])] == ["a", "b"]


def test_fused_relation_hits_only_confident_hits_vote_and_k_is_filled():
    from kgteam.tools.kg_tools import fuse_relation_hits
    from kgteam.tools.types import LabelHit

    def hit(iri: str, score: float, exact: bool = False) -> LabelHit:
        return LabelHit(iri=iri, label=iri, matched=iri, score=score, exact=exact, kind="relation")

    lexical = [hit("keeper", 37.6), hit("comment", 25.8), hit("typo", 5.0)]
    dense = [hit("origin", 0.90), hit("comment", 0.03), hit("keeper", 0.02)]
    fused = fuse_relation_hits(lexical, dense, 4)
    assert [h.iri for h in fused] == ["origin", "keeper", "comment", "typo"]  # tie -> higher cosine
    assert fused[-1].score == 0.0 and fused[0].score > 0
    assert fuse_relation_hits([hit("named", 9.0, exact=True)], dense, 2)[0].iri == "named"
