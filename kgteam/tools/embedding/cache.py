"""``CachedEmbedder``: remembers vectors by text hash, so repeated texts (relation labels,
question fragments scored again on every hop) cost one embedding call per distinct text."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from kgteam.tools.embedding.base import Embedder, check_texts, empty


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class CachedEmbedder:
    """An LRU cache of ``max_items`` vectors in front of ``inner``; misses go to it in one batch."""

    def __init__(self, inner: Embedder, max_items: int = 100_000) -> None:
        if max_items < 1:
            raise ValueError("max_items must be at least 1")
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.max_items = max_items
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return empty(self.dim)
        keys = [text_key(t) for t in items]
        out = np.empty((len(items), self.dim), dtype=np.float32)
        todo: dict[bytes, list[int]] = {}
        with self._lock:
            for i, key in enumerate(keys):
                row = self._cache.get(key)
                if row is None:
                    todo.setdefault(key, []).append(i)
                else:
                    self._cache.move_to_end(key)
                    out[i] = row
            self.hits += len(items) - sum(len(v) for v in todo.values())
            self.misses += len(todo)
        if todo:
            fresh = self.inner.embed([items[rows[0]] for rows in todo.values()])
            with self._lock:
                for (key, rows), vec in zip(todo.items(), fresh, strict=True):
                    out[rows] = vec
                    self._cache[key] = vec.copy()
                    self._cache.move_to_end(key)
                while len(self._cache) > self.max_items:
                    self._cache.popitem(last=False)
        return out

    def __len__(self) -> int:
        return len(self._cache)
