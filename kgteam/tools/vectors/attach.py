"""``add_vectors``: (re)builds the ``vectors/`` folder of an existing KG, swapped in atomically.

The new folder is built beside the old one and renamed into place under the KG's lock, then the
manifest is rewritten (itself an atomic replace); a failure or Ctrl-C leaves the KG as it was.
"""

from __future__ import annotations

import os
import shutil
import uuid
from contextlib import nullcontext
from pathlib import Path

import pyoxigraph as ox

from kgteam.tools.embedding.base import Embedder
from kgteam.tools.loading.errors import LoadError
from kgteam.tools.loading.layout import (
    MANIFEST,
    OLD_PREFIX,
    STORE_DIR,
    TMP_PREFIX,
    VECTORS_DIR,
    check_kg_name,
    dir_size,
    kgs_dir,
    name_lock,
)
from kgteam.tools.loading.manifest import KGManifest
from kgteam.tools.loading.progress import LoadProgress, ProgressCallback, RichProgress
from kgteam.tools.naming import Naming
from kgteam.tools.vectors.store import build_vectors
from kgteam.tools.vectors.stream import DEFAULT_MEMORY_MB


def _leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith((f"{TMP_PREFIX}{VECTORS_DIR}", f"{OLD_PREFIX}{VECTORS_DIR}"))]


def add_vectors(name: str, embedder: Embedder | None = None, *, home: Path | None = None, triples: bool = True,
                progress: bool | ProgressCallback = True, memory_mb: int = DEFAULT_MEMORY_MB) -> KGManifest:
    """Embeds KG ``name``'s relations (and facts, unless ``triples=False``) with ``embedder``
    (default: the embedded WordLlama) and returns the updated manifest."""
    check_kg_name(name)
    kgs = kgs_dir(home)
    folder = kgs / name
    if embedder is None:
        from kgteam.tools.embedding.wordllama import WordLlamaEmbedder, default_embedder

        embedder = default_embedder() or WordLlamaEmbedder()  # the second call raises the reason
    show: RichProgress | None = RichProgress(name) if progress is True else None
    callback = show if show is not None else (progress if callable(progress) else None)

    def report(what: str, done: int, total: int) -> None:
        if callback is not None:
            callback(LoadProgress("embed", what, 0, 0, 0, docs=done, docs_total=total))

    with name_lock(kgs, name):
        if not (folder / MANIFEST).is_file():
            raise LoadError(f"no KG named {name!r} in {kgs}; load it first with `kgteam load FILE... --name {name}`")
        for stale in _leftovers(folder):
            shutil.rmtree(stale, ignore_errors=True)
        manifest = KGManifest.read(folder)
        tmp = folder / f"{TMP_PREFIX}{VECTORS_DIR}-{uuid.uuid4().hex[:8]}"
        scratch = kgs / f"{TMP_PREFIX}{name}+embed-{uuid.uuid4().hex[:8]}"  # removed by a later load if killed
        try:
            if manifest.endpoint is not None:  # `kgteam kg connect`: the triples come from the server
                from kgteam.tools.loading.endpoint import fill_scratch_store

                store = fill_scratch_store(manifest.endpoint, scratch,
                                           page=manifest.endpoint.page_size or 10_000)
            else:
                store = ox.Store.read_only(str(folder / STORE_DIR))
            try:
                with show if show is not None else nullcontext():
                    info = build_vectors(store, tmp, embedder, triples=triples, progress=report,
                                         naming=Naming.with_predicates(manifest.label_predicates),
                                         facts=manifest.counts.facts, memory_mb=memory_mb)
            finally:
                del store
            final = folder / VECTORS_DIR
            old = folder / f"{OLD_PREFIX}{VECTORS_DIR}-{uuid.uuid4().hex[:8]}"
            if final.exists():
                os.rename(final, old)
            try:
                os.rename(tmp, final)
            except BaseException:
                if old.exists():
                    os.rename(old, final)
                raise
            manifest.vectors = info
            manifest.disk_bytes = dir_size(folder) - (dir_size(old) if old.exists() else 0)
            manifest.write(folder)
            shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        finally:  # an endpoint KG's scratch copy of the triples
            shutil.rmtree(scratch, ignore_errors=True)
    manifest.path = folder
    return manifest
