"""The ``Embedder`` contract: texts in, L2-normalised float32 rows out.

Every similarity in kgteam is a dot product of such rows, so every embedder normalises (and
zero rows stay zero: a text with no known token is similar to nothing, not NaN-similar).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from kgteam.tools.types import ToolError


class EmbeddingError(ToolError):
    """An embedder cannot be loaded or did not answer; the message says what to do."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors; ``name`` identifies the model so an index can refuse another one."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape ``(len(texts), dim)``, rows of unit length (or zero)."""
        ...


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Unit-length float32 rows; all-zero (or non-finite) rows become zero rows."""
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise EmbeddingError(f"expected a 2-d array of embeddings, got shape {out.shape}")
    out = np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return np.ascontiguousarray(out, dtype=np.float32)


def empty(dim: int) -> np.ndarray:
    return np.zeros((0, dim), dtype=np.float32)


def check_texts(texts: Sequence[str]) -> list[str]:
    """A list of strings (a lone string is a mistake: it would be embedded character by character)."""
    if isinstance(texts, str):
        raise EmbeddingError("embed() takes a sequence of texts, not one string")
    out = list(texts)
    for t in out:
        if not isinstance(t, str):
            raise EmbeddingError(f"embed() takes strings, got {type(t).__name__}")
    return out
