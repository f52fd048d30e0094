"""``build_embedder``: the team file's ``kg.embedder`` block -> an ``Embedder`` (or None).

Takes the spec duck-typed (provider, base_url, model, api_key_env, batch_size, timeout_s) so
tools do not import the config layer.
"""

from __future__ import annotations

import os
from typing import Any

from kgteam.tools.embedding.base import Embedder, EmbeddingError
from kgteam.tools.embedding.cache import CachedEmbedder


def build_embedder(spec: Any | None = None, *, cache_items: int = 50_000) -> Embedder | None:
    """The embedder a spec asks for, behind a text cache; None for provider ``none``.

    No spec means the embedded WordLlama (None only if wordllama is not installed).
    """
    provider = getattr(spec, "provider", "wordllama") if spec is not None else "wordllama"
    if provider == "none":
        return None
    if provider == "wordllama":
        from kgteam.tools.embedding.wordllama import default_embedder

        inner = default_embedder()
        if inner is None:
            if spec is not None:  # asked for explicitly: say why it is not there
                from kgteam.tools.embedding.wordllama import WordLlamaEmbedder

                WordLlamaEmbedder()
            return None
        return CachedEmbedder(inner, cache_items)
    if provider == "openai":
        from kgteam.tools.embedding.http import HttpEmbedder

        key_env = getattr(spec, "api_key_env", None)
        api_key = os.environ.get(key_env) if key_env else None
        if key_env and not api_key:
            raise EmbeddingError(f"embedder: environment variable {key_env} (api_key_env) is not set")
        inner_http = HttpEmbedder(spec.base_url, spec.model, api_key=api_key,
                                  batch_size=getattr(spec, "batch_size", 64),
                                  timeout_s=getattr(spec, "timeout_s", 30.0))
        return CachedEmbedder(inner_http, cache_items)
    raise EmbeddingError(f"unknown embedder provider {provider!r} (wordllama, openai or none)")
