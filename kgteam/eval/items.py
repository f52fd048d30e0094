"""The item types every dataset reader produces and every grader reads.

They sit below the readers (:mod:`kgteam.eval.datasets`), the metrics and the claim generator, so
those modules import these and not each other (they used to import one another in a circle).
"""

from __future__ import annotations

import functools
from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, Field

from kgteam.protocols.errors import KgteamError

TagValue = str | int | float | bool


@functools.lru_cache(maxsize=200_000)
def entity_iri(base: str, name: str) -> str:
    """Entity IRI as minted by the KG loaders: ``<base>e/<quote(name, safe='')>``."""
    return f"{base}e/{quote(name, safe='')}"


def relation_iri(base: str, name: str) -> str:
    return f"{base}r/{quote(name, safe='')}"


class EntityRef(BaseModel):
    """A KG entity as the dataset names it; ``iri`` only when the dataset's KG is known."""

    label: str
    iri: str | None = None


class GoldAnswer(BaseModel):
    """One gold answer item. ``label`` is None when only an IRI is known (e.g. Wikidata Q-ids)."""

    label: str | None = None
    iri: str | None = None
    datatype: str | None = None  # for literals (xsd:integer, xsd:dateTime ...)

    def display(self) -> str:
        return self.label if self.label is not None else (self.iri or "")


class GoldPath(BaseModel):
    """A relation path from a start entity (IRN format): follow ``relations`` in order.

    ``relation_iris``/``directions`` say how to walk it on a KG: WC2014's ``r_inverse`` names
    are walked as ``r`` backwards ("in"), since the loader folds inverse copies into ``r``.
    """

    start: EntityRef
    relations: list[str]
    relation_iris: list[str] = Field(default_factory=list)
    directions: list[Literal["out", "in"]] = Field(default_factory=list)


AnswerKind = Literal["entity", "string", "number", "date", "boolean", "empty"]
ANSWER_KINDS: tuple[str, ...] = ("entity", "string", "number", "date", "boolean", "empty")


class DatasetItem(BaseModel):
    id: str
    question: str
    answers: list[GoldAnswer] = Field(default_factory=list)
    # what the gold is, when the dataset says so; "empty": the KG holds no answer (abstaining is right)
    answer_kind: AnswerKind | None = None
    topic_entities: list[EntityRef] = Field(default_factory=list)
    gold_query: str | None = None
    gold_paths: list[GoldPath] = Field(default_factory=list)
    tags: dict[str, TagValue] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def topic_entity(self) -> EntityRef | None:
        return self.topic_entities[0] if self.topic_entities else None

    @property
    def hops(self) -> int | None:
        value = self.tags.get("hops")
        return int(value) if value is not None else None


class DatasetError(KgteamError, ValueError):
    """A dataset name or file that cannot be read; the message says what is available."""
