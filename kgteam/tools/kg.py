"""A loaded knowledge graph: its folder, opened store and label index, and where KGs live.

``open_kg("metaqa")`` finds ``<home>/kgs/metaqa/`` (``home`` = ``$KGTEAM_HOME`` or
``~/.kgteam``); ``ensure_demo_kg()`` installs the bundled demo KB there on first use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from kgteam.tools.backends.base import LabelIndex, TripleStore
from kgteam.tools.loading.builder import build_kg
from kgteam.tools.loading.errors import LoadError
from kgteam.tools.loading.layout import (
    LABELS_DIR,
    MANIFEST,
    STORE_DIR,
    check_kg_name,
    kg_home,
    kgs_dir,
    name_lock,
    recover,
)
from kgteam.tools.loading.manifest import KGManifest
from kgteam.tools.loading.progress import ProgressCallback
from kgteam.tools.types import ToolError
from kgteam.tools.vectors.store import KGVectors

__all__ = [
    "DEMO_KG_NAME",
    "KGNotFoundError",
    "KnowledgeGraph",
    "demo_kb_path",
    "ensure_demo_kg",
    "kg_home",
    "list_kgs",
    "open_kg",
]

DEMO_KG_NAME = "metaqa"
DEMO_KB_FILE = "metaqa_kb.txt.xz"


class KGNotFoundError(ToolError, FileNotFoundError):
    """No KG by that name or path; the message lists the KGs that exist and how to make one."""


@dataclass
class KnowledgeGraph:
    """An opened KG. Close it (or use ``with``) to release the store and index handles."""

    name: str
    path: Path
    store: TripleStore
    labels: LabelIndex
    manifest: dict[str, Any] = field(default_factory=dict)
    vectors: KGVectors | None = None  # the vectors/ folder, when the KG has one

    @property
    def base_iri(self) -> str | None:
        return self.manifest.get("base_iri")

    def close(self) -> None:
        self.store.close()
        self.labels.close()

    def __enter__(self) -> KnowledgeGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def list_kgs(home: Path | None = None) -> list[KGManifest]:
    """Manifests of the KGs under ``<home>/kgs`` (sorted by name); unreadable folders are skipped."""
    kgs = kgs_dir(home)
    if not kgs.is_dir():
        return []
    out = []
    for folder in sorted(kgs.iterdir()):
        if folder.name.startswith(".") or not (folder / MANIFEST).is_file():
            continue
        try:
            out.append(KGManifest.read(folder))
        except (OSError, ValueError):
            continue
    return out


def _missing(what: str, home: Path | None) -> KGNotFoundError:
    names = [m.name for m in list_kgs(home)]
    have = f"KGs in {kgs_dir(home)}: {', '.join(names)}" if names else f"no KGs in {kgs_dir(home)} yet"
    return KGNotFoundError(
        f"no KG {what}. {have}. Create one with `kgteam load FILE... --name NAME` "
        f"or install the demo with `kgteam load --demo`."
    )


def _folder_for(name_or_path: str | Path, home: Path | None) -> Path:
    as_path = Path(name_or_path).expanduser()
    looks_like_path = isinstance(name_or_path, Path) or str(name_or_path).startswith((".", "~", "/"))
    if looks_like_path or as_path.is_absolute() or len(as_path.parts) > 1:
        if (as_path / MANIFEST).is_file():
            return as_path
        raise _missing(f"at {as_path} (no {MANIFEST})", home)
    name = str(name_or_path)
    try:
        check_kg_name(name)
    except LoadError as exc:
        raise KGNotFoundError(str(exc)) from exc
    folder = kgs_dir(home) / name
    if not (folder / MANIFEST).is_file():
        kgs = kgs_dir(home)
        if kgs.is_dir():
            with name_lock(kgs, name):  # a load killed mid-swap leaves the old KG aside: put it back
                recover(kgs, name)
        if not (folder / MANIFEST).is_file():
            raise _missing(f"named {name!r}", home)
    return folder


def kg_folder(name_or_path: str | Path, home: Path | None = None) -> Path:
    """The folder of a loaded KG, by name (under ``<home>/kgs``) or path, without opening it."""
    return _folder_for(name_or_path, home)


def open_kg(name_or_path: str | Path, home: Path | None = None) -> KnowledgeGraph:
    """Opens a KG by name (under ``<home>/kgs``) or by folder path; store and index read-only. A KG
    registered with ``kgteam kg connect`` opens its SPARQL endpoint as the store."""
    from kgteam.tools.backends.oxigraph_store import OxigraphStore
    from kgteam.tools.backends.tantivy_index import TantivyLabelIndex

    folder = _folder_for(name_or_path, home)
    manifest = KGManifest.read(folder)
    if manifest.endpoint is not None:  # `kgteam kg connect`: the triples are on the server
        from kgteam.tools.loading.endpoint import open_endpoint

        store: TripleStore = open_endpoint(manifest.endpoint)
    else:
        store = OxigraphStore(folder / STORE_DIR, read_only=True)
    try:
        labels = TantivyLabelIndex(folder / LABELS_DIR)
    except BaseException:
        store.close()
        raise
    try:
        vectors = KGVectors.open(folder)
    except BaseException:
        store.close()
        labels.close()
        raise
    return KnowledgeGraph(
        name=manifest.name,
        path=folder,
        store=store,
        labels=labels,
        manifest=manifest.model_dump(mode="json"),
        vectors=vectors,
    )


def demo_kb_path() -> Path:
    """The bundled MetaQA KB (xz-compressed ``subject|relation|object`` lines)."""
    path = Path(str(resources.files("kgteam").joinpath("data", DEMO_KB_FILE)))
    if not path.is_file():
        raise KGNotFoundError(f"the bundled demo KB is missing from the installation ({path})")
    return path


def install_demo_kg(home: Path | None = None, progress: bool | ProgressCallback = False,
                    embed: bool = True) -> KGManifest:
    """(Re)builds the demo KG ``metaqa`` from the bundled MetaQA KB (with its vectors, unless ``embed=False``)."""
    return build_kg([demo_kb_path()], DEMO_KG_NAME, home=home, format="metaqa", progress=progress, embed=embed)


def ensure_demo_kg(home: Path | None = None, progress: bool | ProgressCallback = False,
                   embed: bool = True) -> KnowledgeGraph:
    """Opens the demo KG, installing it first when it is not there (about 12 s with vectors, 4 s without)."""
    try:
        return open_kg(DEMO_KG_NAME, home)
    except KGNotFoundError:
        pass
    install_demo_kg(home, progress=progress, embed=embed)
    return open_kg(DEMO_KG_NAME, home)
