"""A KG's relation lexicon: words people use for its predicates that its labels do not contain.

``<kg folder>/lexicon.json`` is data, written by a user or derived from example question/answer
pairs by ``kgteam tune``; the semantic layer reads it like extra ``skos:altLabel`` values. The
KG itself is never changed, so a remote or read-only store can have a lexicon too.

    {"version": 1, "relations": {"http://ex.org/spouse": ["other half", "wife"]}, "source": "..."}
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kgteam.protocols.errors import KgteamError

LEXICON_FILE = "lexicon.json"


class LexiconError(KgteamError, ValueError):
    """A lexicon file that cannot be read (the message says which file and what is wrong)."""


class Lexicon(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    relations: dict[str, list[str]] = Field(default_factory=dict)  # predicate IRI -> phrases
    source: str = ""  # how it was made (for the user reading it later)
    stats: dict[str, Any] = Field(default_factory=dict)

    @field_validator("relations")
    @classmethod
    def _clean(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for iri, phrases in value.items():
            if not iri.strip() or any(c in iri for c in "<> \"{}|\\^`"):
                raise ValueError(f"not a predicate IRI: {iri!r}")
            kept = list(dict.fromkeys(" ".join(p.split()).lower() for p in phrases if p and p.strip()))
            if kept:
                out[iri] = kept
        return out

    def merged(self, other: Lexicon) -> Lexicon:
        relations = {k: list(v) for k, v in self.relations.items()}
        for iri, phrases in other.relations.items():
            relations[iri] = list(dict.fromkeys([*relations.get(iri, []), *phrases]))
        return Lexicon(relations=relations, source="; ".join(s for s in (self.source, other.source) if s),
                       stats=other.stats or self.stats)


def read_lexicon(path: Path) -> Lexicon | None:
    """The lexicon at ``path`` (a file or a KG folder); None when there is none."""
    file = path / LEXICON_FILE if path.is_dir() else path
    if not file.exists():
        return None
    try:
        return Lexicon.model_validate(json.loads(file.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LexiconError(f"cannot read the lexicon {file}: {exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ()))
        raise LexiconError(f"lexicon {file}: {where}: {first.get('msg')}") from exc


def write_lexicon(lexicon: Lexicon, kg_folder: Path) -> Path:
    """Write atomically (a crash leaves the old file or the new one, never half of one)."""
    file = kg_folder / LEXICON_FILE
    fd, tmp = tempfile.mkstemp(prefix=".lexicon-", suffix=".json", dir=kg_folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(lexicon.model_dump(), fh, indent=1, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # readable like the rest of the KG folder (mkstemp makes it 0600)
        os.replace(tmp, file)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return file
