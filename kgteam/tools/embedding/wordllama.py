"""The embedded default embedder: WordLlama (static token embeddings, 256 dims, numpy only).

Loaded from the files the ``wordllama`` wheel ships, never from a hub: ``WordLlama.load()``
looks for the tokenizer in a folder the wheel does not have and then downloads it, so the
tokenizer and weights are opened here by path. Why WordLlama: see docs/decisions.md (quality
on relation paraphrases close to MiniLM at ~100x the speed, 33 MB, 0.4 s start-up).
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kgteam.tools.embedding.base import EmbeddingError, check_texts, empty, normalise_rows

CONFIG = "l2_supercat"
DIM = 256
_TOKENIZER = Path("tokenizers") / f"{CONFIG}_tokenizer_config.json"
_WEIGHTS = Path("weights") / f"{CONFIG}_{DIM}.safetensors"


def _package_dir() -> Path:
    """The installed ``wordllama`` folder, imported without letting it reconfigure logging."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama  # its inference module calls logging.basicConfig(level=INFO) on import
    except ImportError as exc:
        raise EmbeddingError(
            "the embedded embedder needs the 'wordllama' package: pip install 'wordllama==0.4.0.post1' "
            "(it is a kgteam dependency; reinstall kgteam)"
        ) from exc
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    return Path(wordllama.__file__).parent


class WordLlamaEmbedder:
    """WordLlama ``l2_supercat`` at 256 dims; thread-safe, ~0.4 s to load."""

    name = f"wordllama:{CONFIG}-{DIM}"
    dim = DIM

    def __init__(self, batch_size: int = 256) -> None:
        pkg = _package_dir()
        tok_path, weights_path = pkg / _TOKENIZER, pkg / _WEIGHTS
        missing = [str(p) for p in (tok_path, weights_path) if not p.is_file()]
        if missing:
            raise EmbeddingError(
                f"the wordllama installation lacks {', '.join(missing)}; reinstall 'wordllama==0.4.0.post1' "
                "(kgteam never downloads model files at run time)"
            )
        from safetensors import safe_open
        from wordllama import WordLlama
        from wordllama.inference import WordLlamaInference

        tokenizer = WordLlama.load_tokenizer(tok_path)
        with safe_open(str(weights_path), framework="np") as fh:
            weights = fh.get_tensor("embedding.weight")
        if weights.ndim != 2 or weights.shape[1] != DIM:
            raise EmbeddingError(f"unexpected WordLlama weights of shape {weights.shape} in {weights_path}")
        self._model = WordLlamaInference(weights, tokenizer)
        self._lock = threading.Lock()  # the tokenizer's padding state is shared
        self.batch_size = batch_size
        # An unpadded copy for token_ids(): the model's own tokenizer pads (shared state).
        self._plain = type(tokenizer).from_str(tokenizer.to_str())
        self._plain.no_padding()
        self._plain.no_truncation()

    @property
    def token_vectors(self) -> np.ndarray:
        """The (vocabulary, dim) float32 token matrix that embed() averages rows of."""
        return self._model.embedding

    def token_ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """All texts' token ids as embed() sees them (clipped to the vocabulary), unpadded and
        concatenated (int32), with each text's token count (int64).

        WordLlama is additive: a text's vector is the normalised sum of its tokens' rows, so a
        caller that has the ids of a text's parts can build its vector without tokenising it
        again (:mod:`kgteam.tools.vectors.compose`)."""
        items = check_texts(texts)
        encoded = self._plain.encode_batch(items, add_special_tokens=False)
        counts = np.fromiter((len(enc.ids) for enc in encoded), dtype=np.int64, count=len(encoded))
        flat = np.fromiter(itertools.chain.from_iterable(enc.ids for enc in encoded), dtype=np.int64,
                           count=int(counts.sum()))
        np.clip(flat, 0, self._model.embedding.shape[0] - 1, out=flat)
        return flat.astype(np.int32), counts

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = check_texts(texts)
        if not items:
            return empty(self.dim)
        with self._lock:
            raw = self._model.embed(items, norm=False, batch_size=self.batch_size)
        return normalise_rows(raw)


_default: WordLlamaEmbedder | None = None
_default_failed = False
_default_lock = threading.Lock()


def default_embedder() -> WordLlamaEmbedder | None:
    """The process-wide embedded embedder, or None when wordllama is not installed."""
    global _default, _default_failed
    with _default_lock:
        if _default is None and not _default_failed:
            try:
                _default = WordLlamaEmbedder()
            except EmbeddingError:
                _default_failed = True
        return _default


def embedded_available() -> bool:
    """Whether the embedded embedder can be loaded (without loading it)."""
    import importlib.util

    return importlib.util.find_spec("wordllama") is not None
