"""Errors of web search: every one names the provider, and for HTTP the URL and what went wrong."""

from __future__ import annotations

from kgteam.tools.types import ToolError


class WebSearchError(ToolError):
    """A search failed or cannot be set up; the message says which provider and why."""


class CorpusError(WebSearchError):
    """A local corpus is missing, unreadable, or cannot be built from the given files."""


class ProviderHTTPError(WebSearchError):
    """An HTTP search provider answered with an error status, a non-JSON body, or not at all."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
