"""Fact vectors composed from per-term tokens equal the embedder's own vectors of the fact sentences,
cut sentences and unlabelled terms included, and a composition that disagrees is turned off."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyoxigraph as ox
import pytest

from kgteam.tools.embedding import default_embedder
from kgteam.tools.embedding.cache import CachedEmbedder
from kgteam.tools.naming import DEFAULT_NAMING
from kgteam.tools.vectors.compose import FactComposer, additive
from kgteam.tools.vectors.stream import _chunks, build_triple_index
from kgteam.tools.vectors.verbalise import MAX_TEXT_CHARS, TermTable, read_labels

EX = "http://example.org/c/"
LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")


@pytest.fixture(scope="module")
def embedder():
    emb = default_embedder()
    if emb is None:
        pytest.skip("wordllama is not installed")
    return emb


def _store() -> ox.Store:
    """Facts with labelled and unlabelled IRIs, literals (one long), a blank node and non-ASCII names."""
    st = ox.Store()
    g = ox.DefaultGraph()
    names = {"a": "Émile Zola", "b": "Les Rougon-Macquart", "r": "wrote", "q": "born in", "c": "Paris [c3]",
             "d": "a long name " * 15}
    for key, name in names.items():
        st.add(ox.Quad(ox.NamedNode(EX + key), LABEL, ox.Literal(name), g))
    a, b, r, q = (ox.NamedNode(EX + k) for k in "abrq")
    facts = [(a, r, b), (a, q, ox.NamedNode(EX + "c")), (b, ox.NamedNode(EX + "hasNoLabel"), a),
             (a, ox.NamedNode(EX + "note"), ox.Literal("  spaced   text\twith tabs ")),
             (ox.NamedNode(EX + "d"), ox.NamedNode(EX + "essay"), ox.Literal("word " * 200)),  # cut
             (a, r, ox.BlankNode("x1")), (ox.BlankNode("x2"), q, ox.Literal("1871", language="fr"))]
    for s, p, o in facts:
        st.add(ox.Quad(s, p, o, g))
    return st


def _composed_and_reference(st: ox.Store, emb) -> tuple[np.ndarray, np.ndarray, list[str]]:
    table = TermTable()
    composer = FactComposer(additive(emb), table)
    got, ref, texts = [], [], []
    for ids, sentences in _chunks(st, read_labels(st), table, DEFAULT_NAMING, rows=3):
        got.append(composer.vectors(ids))
        ref.append(emb.embed(sentences))
        texts += sentences
    assert composer.usable
    return np.concatenate(got), np.concatenate(ref), texts


def test_composed_fact_vectors_equal_the_embedders_sentence_vectors(embedder):
    got, ref, texts = _composed_and_reference(_store(), embedder)
    assert len(texts) == 7 and any(len(t) == MAX_TEXT_CHARS for t in texts)
    assert got.shape == ref.shape == (7, embedder.dim)
    np.testing.assert_allclose(got, ref, atol=1e-6)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_a_cache_in_front_is_seen_through_and_other_embedders_are_not_additive(embedder):
    assert additive(CachedEmbedder(embedder)) is embedder

    class Sentences:
        name, dim = "plain", embedder.dim

        def embed(self, texts):
            return embedder.embed(texts)

    assert additive(Sentences()) is None


class _WrongTokens:
    """The real embedder with token ids that do not match its sentences: composition must notice."""

    def __init__(self, inner) -> None:
        self.inner_model, self.name, self.dim, self.token_vectors = inner, inner.name, inner.dim, inner.token_vectors

    def embed(self, texts):
        return self.inner_model.embed(texts)

    def token_ids(self, texts):
        flat, counts = self.inner_model.token_ids(texts)
        return (flat + 7) % self.token_vectors.shape[0], counts


def test_a_composition_that_disagrees_falls_back_to_sentences(embedder, tmp_path: Path):
    st = _store()
    wrong = _WrongTokens(embedder)
    table = TermTable()
    composer = FactComposer(wrong, table)
    ids, _ = next(_chunks(st, read_labels(st), table, DEFAULT_NAMING, rows=7, texts=False))
    assert composer.vectors(ids) is None and not composer.usable

    folder = tmp_path / "v"
    folder.mkdir()
    n, kind = build_triple_index(st, folder, wrong, read_labels(st), DEFAULT_NAMING, facts=7,
                                         ann_threshold=1000)
    _, ref, _ = _composed_and_reference(st, embedder)
    stored = np.load(folder / "triples.npy")
    assert n == 7 and kind == "exact"
    np.testing.assert_allclose(stored, ref, atol=2e-3)  # the index keeps float16-rounded rows
