"""Reciprocal-rank fusion: merges ranked lists whose scores are not comparable (BM25-like label
scores and cosine similarities) by rank alone, so neither list's scale dominates."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
RRF_K = 60  # the usual constant: damps the gap between rank 1 and rank 2


def reciprocal_rank_fusion(rankings: Sequence[Sequence[K]], *, k: int = RRF_K,
                           weights: Sequence[float] | None = None) -> list[tuple[K, float]]:
    """Keys of all rankings with ``sum(weight / (k + rank))`` (rank from 1), best first.

    Ties keep the order in which keys were first met (earlier lists first), so the result is stable.
    """
    if weights is not None and len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[K, float] = {}
    for i, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[i]
        seen: set[K] = set()
        for rank, key in enumerate(ranking, start=1):
            if key in seen:  # a key counts once per ranking, at its best rank
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + w / (k + rank)
    order = {key: n for n, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))
