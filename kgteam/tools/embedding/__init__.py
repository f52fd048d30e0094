"""Text embeddings: the ``Embedder`` protocol, the embedded WordLlama default, an OpenAI-compatible
HTTP embedder, a hash-keyed cache, and ``build_embedder`` for the team file's ``embedder:`` block."""

from kgteam.tools.embedding.base import Embedder, EmbeddingError, normalise_rows
from kgteam.tools.embedding.cache import CachedEmbedder
from kgteam.tools.embedding.choose import build_embedder
from kgteam.tools.embedding.http import HttpEmbedder
from kgteam.tools.embedding.wordllama import WordLlamaEmbedder, default_embedder, embedded_available

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "EmbeddingError",
    "HttpEmbedder",
    "WordLlamaEmbedder",
    "build_embedder",
    "default_embedder",
    "embedded_available",
    "normalise_rows",
]
