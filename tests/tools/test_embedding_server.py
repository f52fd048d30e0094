"""HttpEmbedder against a real OpenAI-compatible server: llama-cpp-python serving the bundled
SmolLM2 GGUF with embeddings on, bound to 127.0.0.1 (no mock)."""

from __future__ import annotations

import numpy as np
import pytest

from kgteam.llm.local_server import LocalModelServer, llama_cpp_available
from kgteam.tools.embedding import EmbeddingError, HttpEmbedder

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not llama_cpp_available(), reason="llama-cpp-python is not installed"),
]


def test_http_embedder_on_a_real_llama_cpp_server():
    # SmolLM2 is a chat model: its GGUF says "no pooling", so the server returns token vectors
    # unless mean pooling is forced through a metadata override.
    with LocalModelServer(extra_args=["--embedding", "True"]) as srv, \
            pytest.raises(EmbeddingError, match="token embeddings, not pooled"):
        HttpEmbedder(srv.base_url, srv.model_name)
    pooled = ["--embedding", "True", "--kv_overrides", "llama.pooling_type=int:1"]
    with LocalModelServer(extra_args=pooled) as srv:
        emb = HttpEmbedder(srv.base_url, srv.model_name, batch_size=4)
        assert emb.dim == 576 and emb.name == f"openai:{srv.model_name}"
        texts = [f"relation {i}" for i in range(9)] + ["directed by"]
        batched = emb.embed(texts)
        assert batched.shape == (10, 576) and batched.dtype == np.float32
        assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-4)
        alone = emb.embed(["directed by"])[0]
        assert float(alone @ batched[9]) > 0.999  # same text, other batch: same vector
        assert float(batched[0] @ batched[9]) < 0.999
        emb.close()
        wrong = HttpEmbedder(srv.base_url + "/no-such-prefix", srv.model_name, dim=576)
        with pytest.raises(EmbeddingError, match="refused the request: HTTP 404"):
            wrong.embed(["x"])
