"""``Document``: one search result (a corpus chunk or a search engine's hit), the unit every
provider returns and every prompt shows fenced (see ``kgteam.prompts.documents.fence_documents``)."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

SNIPPET_MAX_CHARS = 1500  # a chunk or an engine snippet is cut here, so one result cannot flood a prompt


def clip(text: str, limit: int = SNIPPET_MAX_CHARS) -> str:
    """``text`` cut to ``limit`` characters at a word boundary where one is near, marked with an ellipsis."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.8:
        cut = cut[:space]
    return cut.rstrip() + "…"


class Document(BaseModel):
    """A retrieved text. ``score`` is comparable within one search call only (BM25, cosine,
    fused rank score or an engine's own score, by provider and mode)."""

    id: str = Field(description="stable id: 'corpus:<name>:<doc_id>#<chunk>' for a local corpus, the URL for the web")
    source: str = Field(description="who found it: 'corpus:<name>', 'searxng', 'brave'")
    title: str | None = None
    url: str | None = None
    snippet: str = Field(description=f"the chunk text or the engine's snippet (at most {SNIPPET_MAX_CHARS} chars)")
    score: float = 0.0
    doc_id: str | None = Field(None, description="the whole document a chunk came from")
    chunk: int | None = Field(None, description="the chunk's number within its document, from 0")

    @field_validator("snippet")
    @classmethod
    def _clip(cls, value: str) -> str:
        return clip(value)
