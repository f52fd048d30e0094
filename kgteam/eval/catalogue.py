"""The catalogue of public datasets ``kgteam datasets get`` can fetch: where each file comes from,
its sha256 pin, its licence, and which eval names it serves.

It is a data file in the package (``kgteam/data/datasets.yaml``), so a new pin or mirror is an edit
to YAML, not to code. ``KGTEAM_DATASETS_CATALOGUE`` names another file of the same shape (a local
mirror; the tests' HTTP server).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kgteam.eval.items import DatasetError

CATALOGUE_ENV = "KGTEAM_DATASETS_CATALOGUE"
BUILTIN_CATALOGUE = Path(__file__).resolve().parents[1] / "data" / "datasets.yaml"
DATASETS_SUBDIR = "datasets"


class DatasetFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str  # relative to the datasets folder, in the layout the eval names read
    url: str
    sha256: str
    size: int | None = None

    @field_validator("sha256")
    @classmethod
    def _hex(cls, value: str) -> str:
        if not re.fullmatch(r"[0-9a-f]{64}", value):
            raise ValueError("must be 64 lower-case hex digits")
        return value

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str) -> str:
        parts = Path(value).parts
        if not parts or Path(value).is_absolute() or ".." in parts:
            raise ValueError("must be a relative path inside the datasets folder")
        return value


class CatalogueEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str
    provides: list[str] = Field(default_factory=list)
    licence: str
    licence_url: str
    licence_note: str = ""
    homepage: str = ""
    files: list[DatasetFile]

    @property
    def size(self) -> int:
        return sum(f.size or 0 for f in self.files)


def catalogue_path() -> Path:
    env = os.environ.get(CATALOGUE_ENV)
    return Path(env).expanduser() if env else BUILTIN_CATALOGUE


def load_catalogue(path: Path | None = None) -> dict[str, CatalogueEntry]:
    """Name -> entry; a broken catalogue file is a :class:`DatasetError` naming it."""
    path = path or catalogue_path()
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return {str(name): CatalogueEntry.model_validate(entry) for name, entry in (raw.get("datasets") or {}).items()}
    except (OSError, yaml.YAMLError, ValidationError, AttributeError) as exc:
        raise DatasetError(f"dataset catalogue {path} cannot be read: {exc}") from None


def catalogue_entry(name: str, catalogue: dict[str, CatalogueEntry] | None = None) -> CatalogueEntry:
    catalogue = catalogue if catalogue is not None else load_catalogue()
    entry = catalogue.get(name.lower())
    if entry is None:
        raise DatasetError(f"unknown dataset {name!r}; `kgteam datasets list` shows: {', '.join(sorted(catalogue))}")
    return entry


def datasets_dir(home: str | Path | None = None) -> Path:
    """``<kgteam home>/datasets``: where ``datasets get`` writes and the eval names look."""
    from kgteam.tools.loading.layout import kg_home

    return Path(home).expanduser() / DATASETS_SUBDIR if home is not None else kg_home() / DATASETS_SUBDIR
