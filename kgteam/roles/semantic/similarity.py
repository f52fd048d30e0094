"""Word-to-relation similarity for the scorer, from whatever embedder the team has."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from kgteam.roles.semantic.layer import Similarity


def embedder_similarity(embedder: Any | None = None) -> Similarity | None:
    """Cosine similarity through ``embedder.embed`` (the embedded default when not given).

    Returns None when no embedder is available: the scorer then compares words lexically.
    """
    if embedder is None:
        try:
            from kgteam.tools.embedding import default_embedder
        except ImportError:
            default_embedder = None  # type: ignore[assignment]
        embedder = default_embedder() if default_embedder else _wordllama()
    if embedder is None:
        return None
    cache: dict[str, np.ndarray] = {}

    def vectors(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            for t, v in zip(missing, embedder.embed(missing), strict=True):
                cache[t] = np.asarray(v, dtype=np.float32)
        return np.stack([cache[t] for t in texts])

    async def similarity(units: list[str], labels: list[str]) -> list[list[float]]:
        def compute() -> list[list[float]]:
            a = vectors(units)
            b = vectors([lab.replace("_", " ") for lab in labels])
            return (a @ b.T).tolist()

        return await asyncio.to_thread(compute)

    return similarity


def _wordllama() -> Any | None:  # until kgteam.tools.embedding lands
    try:
        from pathlib import Path

        import wordllama
        from safetensors import safe_open
        from wordllama.inference import WordLlamaInference
        from wordllama.wordllama import WordLlama
    except ImportError:
        return None
    pkg = Path(wordllama.__file__).parent
    tok = WordLlama.load_tokenizer(pkg / "tokenizers" / "l2_supercat_tokenizer_config.json")
    with safe_open(str(pkg / "weights" / "l2_supercat_256.safetensors"), framework="np", device="cpu") as f:
        emb = f.get_tensor("embedding.weight")
    inf = WordLlamaInference(emb, tok)

    class _E:
        def embed(self, texts: list[str]) -> np.ndarray:
            return inf.embed(texts, norm=True)

    return _E()


def team_similarity(tools: Any) -> Similarity | None:
    """The team's embedder when its KG tools carry one, else the embedded default (or lexical only)."""
    try:
        tool = tools["text_similarity"]
    except KeyError:
        tool = None
    if tool is not None:
        async def via_tool(units: list[str], labels: list[str]) -> list[list[float]]:
            return await tool(texts=units, candidates=labels)

        return via_tool
    return _default_similarity()


_DEFAULT: list[Similarity | None] = []


def _default_similarity() -> Similarity | None:
    if not _DEFAULT:
        _DEFAULT.append(embedder_similarity())
    return _DEFAULT[0]
