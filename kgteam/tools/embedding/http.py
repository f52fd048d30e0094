"""``HttpEmbedder``: any OpenAI-compatible ``POST /v1/embeddings`` server (OpenAI, vLLM, Ollama,
llama.cpp, text-embeddings-inference). Batched; server trouble (5xx, 429, connection errors,
timeouts) is retried with backoff, anything else fails at once with the server's message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential_jitter

from kgteam.tools.embedding.base import EmbeddingError, check_texts, empty, normalise_rows


class _Transient(Exception):
    """One failed attempt worth retrying."""


class HttpEmbedder:
    """Embeddings from ``<base_url>/embeddings``; ``base_url`` ends in ``/v1`` like the chat client's.

    ``dim`` is learnt from the first answer when not given (one probe call on construction).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout_s: float = 30.0,
        attempts: int = 4,
        backoff_s: float = 0.5,
        client: httpx.Client | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise EmbeddingError(f"embedder base_url must be an http(s) URL, not {base_url!r}")
        if batch_size < 1:
            raise EmbeddingError("embedder batch_size must be at least 1")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.name = f"openai:{model}"
        self.batch_size = batch_size
        self.attempts = max(1, attempts)
        self.backoff_s = backoff_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.Client(timeout=timeout_s, headers=headers)
        self.dim = dim if dim is not None else int(self._post(["dimension probe"]).shape[1])

    def close(self) -> None:
        self._client.close()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return empty(self.dim)
        parts = [self._post(items[i : i + self.batch_size]) for i in range(0, len(items), self.batch_size)]
        out = np.concatenate(parts)
        if out.shape[1] != self.dim:
            raise EmbeddingError(f"{self.url} returned {out.shape[1]}-dim vectors, expected {self.dim}")
        return out

    def _post(self, batch: list[str]) -> np.ndarray:
        retry = Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential_jitter(multiplier=self.backoff_s, max=8.0, jitter=self.backoff_s),
            retry=retry_if_exception_type(_Transient),
            reraise=True,
        )
        try:
            for attempt in retry:
                with attempt:
                    data = self._once(batch)
        except _Transient as exc:
            raise EmbeddingError(f"embedding server {self.url} failed after {self.attempts} attempts: {exc}") from None
        return self._parse(data, len(batch))

    def _once(self, batch: list[str]) -> Any:
        try:
            resp = self._client.post(self.url, json={"model": self.model, "input": batch})
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise _Transient(f"{type(exc).__name__}: {exc}") from exc
        if resp.status_code >= 500 or resp.status_code == 429:
            raise _Transient(f"HTTP {resp.status_code}: {resp.text[:200]}")
        if resp.status_code >= 400:
            raise EmbeddingError(f"embedding server {self.url} refused the request: HTTP {resp.status_code}: "
                                 f"{resp.text[:300]}")
        try:
            return resp.json()
        except ValueError:
            raise EmbeddingError(f"embedding server {self.url} answered with something that is not JSON") from None

    def _parse(self, data: Any, n: int) -> np.ndarray:
        rows = data.get("data") if isinstance(data, dict) else None
        if not isinstance(rows, list) or len(rows) != n:
            raise EmbeddingError(f"embedding server {self.url} returned {len(rows) if isinstance(rows, list) else 'no'} "
                                 f"embeddings for {n} texts")
        try:
            ordered = sorted(rows, key=lambda r: r.get("index", 0))
            matrix = np.array([r["embedding"] for r in ordered], dtype=np.float32)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise EmbeddingError(f"embedding server {self.url} returned malformed embeddings") from None
        if matrix.ndim == 3 and matrix.shape[1] >= 1:  # llama.cpp without pooling: one vector per token
            raise EmbeddingError(f"{self.url} returned token embeddings, not pooled ones; start the server with "
                                 "a pooling type (llama.cpp: --pooling mean; llama-cpp-python: "
                                 "--kv_overrides <arch>.pooling_type=int:1)")
        if matrix.ndim != 2 or matrix.shape[1] == 0:
            raise EmbeddingError(f"embedding server {self.url} returned embeddings of shape {matrix.shape}")
        return normalise_rows(matrix)
