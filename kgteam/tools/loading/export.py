"""``export_kg``: an installed KG's triples as N-Triples or N-Quads, the files any SPARQL server loads.

Streamed by Oxigraph from the read-only store straight into the file (no copy in memory), into a
hidden file renamed into place at the end, so a failed export never leaves a half file under the
name asked for. N-Triples is the default graph, which is where ``kgteam load`` puts every triple
(``oxigraph dump`` needs ``--graph default`` for the same file); N-Quads is the whole dataset.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import uuid
from pathlib import Path

import pyoxigraph as ox

from kgteam.tools.loading.errors import LoadError
from kgteam.tools.loading.layout import STORE_DIR
from kgteam.tools.loading.manifest import KGManifest

EXPORT_FORMATS = {"nt": ox.RdfFormat.N_TRIPLES, "nq": ox.RdfFormat.N_QUADS}


def export_kg(folder: Path, out: Path | None, fmt: str = "nt") -> int:
    """Writes the KG at ``folder`` to ``out`` (None: stdout); returns its triple count (the manifest's)."""
    if fmt not in EXPORT_FORMATS:
        raise LoadError(f"unknown export format {fmt!r}: use {' or '.join(EXPORT_FORMATS)}")
    manifest = KGManifest.read(folder)
    if manifest.endpoint is not None:
        raise LoadError(f"KG {manifest.name!r} is a SPARQL endpoint ({manifest.endpoint.url}): its triples are on "
                        "that server, export them there")
    try:
        store = ox.Store.read_only(str(folder / STORE_DIR))
    except OSError as exc:
        raise LoadError(f"cannot open the store of KG {manifest.name!r}: {exc}") from None
    graph = {"from_graph": ox.DefaultGraph()} if fmt == "nt" else {}
    try:
        n = manifest.counts.triples
        if out is None:
            store.dump(sys.stdout.buffer, EXPORT_FORMATS[fmt], **graph)
            sys.stdout.buffer.flush()
            return n
        out = out.expanduser()
        if out.is_dir():
            raise LoadError(f"{out} is a folder: give a file name (e.g. {out / (manifest.name + '.' + fmt)})")
        tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            store.dump(str(tmp), EXPORT_FORMATS[fmt], **graph)
            os.replace(tmp, out)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        return n
    except OSError as exc:
        raise LoadError(f"export of KG {manifest.name!r} failed: {exc}") from None
    finally:
        del store
        gc.collect()  # release the RocksDB handle now
