"""Embedders: the embedded WordLlama (offline), the cache, the spec builder, HTTP error handling."""

from __future__ import annotations

import json
import socket

import httpx
import numpy as np
import pytest

from kgteam.config.schema import EmbedderSpec, KGSpec
from kgteam.tools.embedding import (
    CachedEmbedder,
    Embedder,
    EmbeddingError,
    HttpEmbedder,
    WordLlamaEmbedder,
    build_embedder,
    default_embedder,
)
from kgteam.tools.embedding import wordllama as wl


class CountingEmbedder:
    """A deterministic fake that records every batch it is asked for."""

    name = "counting"
    dim = 4

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def embed(self, texts):
        self.batches.append(list(texts))
        rows = [[len(t), t.count("a"), 1.0, 0.0] for t in texts]
        out = np.array(rows, dtype=np.float32).reshape(len(rows), 4)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def wordllama() -> WordLlamaEmbedder:
    emb = default_embedder()
    assert emb is not None, "wordllama is a kgteam dependency and must load offline"
    return emb


def test_wordllama_shapes_norms_and_empty_input(wordllama: WordLlamaEmbedder):
    assert isinstance(wordllama, Embedder)
    vecs = wordllama.embed(["directed by", "who directed this film", "", "the birth place"])
    assert vecs.dtype == np.float32 and vecs.shape == (4, wordllama.dim)
    norms = np.linalg.norm(vecs, axis=1)
    assert np.allclose(norms[[0, 1, 3]], 1.0, atol=1e-5)
    assert norms[2] == 0.0  # no token: a zero row, never NaN
    assert wordllama.embed([]).shape == (0, wordllama.dim)
    with pytest.raises(EmbeddingError, match="not one string"):
        wordllama.embed("directed by")


def test_wordllama_ranks_a_paraphrase_above_an_unrelated_relation(wordllama: WordLlamaEmbedder):
    q, directed, born, genre = wordllama.embed(["who is the director of", "directed by", "place of birth",
                                                "has genre"])
    assert q @ directed > q @ born and q @ directed > q @ genre


def test_wordllama_batches_agree_with_single_calls(wordllama: WordLlamaEmbedder):
    texts = [f"relation number {i} of the graph" for i in range(300)]
    together = wordllama.embed(texts)
    assert np.allclose(together[257], wordllama.embed([texts[257]])[0], atol=1e-5)


def test_default_embedder_is_one_instance_and_never_downloads(monkeypatch: pytest.MonkeyPatch):
    assert default_embedder() is default_embedder()

    def no_network(*args, **kwargs):
        raise AssertionError("tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    assert WordLlamaEmbedder().embed(["offline"]).shape == (1, 256)


def test_missing_wordllama_files_give_a_clear_error_not_a_download(monkeypatch, tmp_path):
    monkeypatch.setattr(wl, "_package_dir", lambda: tmp_path)
    with pytest.raises(EmbeddingError, match="lacks .*tokenizer.*reinstall"):
        WordLlamaEmbedder()


def test_cache_sends_only_distinct_misses_in_one_batch():
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_items=3)
    first = cached.embed(["a", "bb", "a"])
    assert inner.batches == [["a", "bb"]]
    assert np.array_equal(first[0], first[2])
    second = cached.embed(["bb", "ccc", "a"])
    assert inner.batches[-1] == ["ccc"]
    assert np.array_equal(second[0], first[1])
    cached.embed(["dddd"])  # evicts the least recently used ("bb")
    assert len(cached) == 3
    cached.embed(["bb"])
    assert inner.batches[-1] == ["bb"]
    assert (cached.name, cached.dim) == ("counting", 4)


def test_build_embedder_from_spec(monkeypatch: pytest.MonkeyPatch):
    assert KGSpec(name="x").embedder.provider == "wordllama"
    default = build_embedder(EmbedderSpec())
    assert default is not None and default.name.startswith("wordllama:")
    assert build_embedder(EmbedderSpec(provider="none")) is None
    with pytest.raises(ValueError, match="needs 'base_url' and 'model'"):
        EmbedderSpec(provider="openai")
    monkeypatch.delenv("KGTEAM_TEST_EMBED_KEY", raising=False)
    with pytest.raises(EmbeddingError, match="KGTEAM_TEST_EMBED_KEY"):
        build_embedder(EmbedderSpec(provider="openai", base_url="http://127.0.0.1:9/v1", model="m",
                                    api_key_env="KGTEAM_TEST_EMBED_KEY"))


def _transport(replies: list):
    seen: list[dict] = []

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        reply = replies.pop(0) if replies else None
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, httpx.Response):
            return reply
        data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(body["input"])]
        return httpx.Response(200, json={"data": list(reversed(data))})

    return httpx.MockTransport(handle), seen


def test_http_embedder_batches_orders_and_retries_server_errors():
    transport, seen = _transport([None, httpx.Response(503, text="busy"), httpx.ConnectError("refused")])
    emb = HttpEmbedder("http://embed.test/v1", "m", batch_size=2, backoff_s=0, client=httpx.Client(transport=transport))
    assert emb.dim == 3 and emb.name == "openai:m"
    vecs = emb.embed(["a", "bbb", "cc"])
    assert [b["input"] for b in seen[1:]] == [["a", "bbb"], ["a", "bbb"], ["a", "bbb"], ["cc"]]
    expected = np.array([[1, 1, 0], [3, 1, 0], [2, 1, 0]], dtype=np.float32)
    assert np.allclose(vecs, expected / np.linalg.norm(expected, axis=1, keepdims=True))


def test_http_embedder_gives_up_with_clear_errors():
    transport, seen = _transport([None, httpx.Response(400, text="no such model")])
    emb = HttpEmbedder("http://embed.test/v1", "m", backoff_s=0, client=httpx.Client(transport=transport))
    with pytest.raises(EmbeddingError, match="refused the request: HTTP 400: no such model"):
        emb.embed(["x"])
    assert len(seen) == 2  # a 4xx is not retried
    transport, _ = _transport([None] + [httpx.Response(500, text="down")] * 5)
    emb = HttpEmbedder("http://embed.test/v1", "m", attempts=2, backoff_s=0, client=httpx.Client(transport=transport))
    with pytest.raises(EmbeddingError, match="failed after 2 attempts: HTTP 500"):
        emb.embed(["x"])
    with pytest.raises(EmbeddingError, match="http"):
        HttpEmbedder("embed.test/v1", "m", dim=3)
