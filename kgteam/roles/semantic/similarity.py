"""Word-to-relation similarity for the scorer, from whatever embedder the team has."""

from __future__ import annotations

import asyncio
from typing import Any

from kgteam.roles.semantic.layer import Similarity


def embedder_similarity(embedder: Any | None = None) -> Similarity | None:
    """Cosine similarity through ``embedder.embed`` (the embedded default, text-cached, when not given).

    Returns None when no embedder is available: the scorer then compares words lexically.
    """
    from kgteam.tools.embedding import CachedEmbedder, build_embedder

    if embedder is None:
        embedder = build_embedder()  # the embedded WordLlama behind a bounded text cache
    elif not isinstance(embedder, CachedEmbedder):
        embedder = CachedEmbedder(embedder)  # the scorer asks for the same words and labels again and again
    if embedder is None:
        return None

    async def similarity(units: list[str], labels: list[str]) -> list[list[float]]:
        def compute() -> list[list[float]]:
            a = embedder.embed(units)
            b = embedder.embed([lab.replace("_", " ") for lab in labels])
            return (a @ b.T).tolist()

        return await asyncio.to_thread(compute)

    return similarity


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
