"""``WebSearch``: the team's search resource, which the ``web_search`` tool is bound to.

Built once per team from the team file's ``web:`` section (:func:`build_web_search`): a local
corpus, a SearxNG instance or the Brave API behind the ``SearchProvider`` protocol. A team
without that section still gets a ``WebSearch`` — one that says how to configure it when called —
so the tool's schema is the same for every team and a role learns why it has no search.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from kgteam.tools.types import ToolError
from kgteam.tools.web.document import Document
from kgteam.tools.web.errors import WebSearchError
from kgteam.tools.web.provider import SearchProvider

NOT_CONFIGURED = ("web search is not configured for this team: add a 'web:' section to the team file "
                  "(provider: corpus, searxng or brave; see docs/web_search.md)")


class WebSearch:
    """A provider plus the checks every search gets (a query, ``k`` in range, errors as ToolErrors)."""

    def __init__(self, provider: SearchProvider | None, *, missing: str = NOT_CONFIGURED) -> None:
        self.provider = provider
        self._missing = missing

    @property
    def name(self) -> str:
        return self.provider.name if self.provider is not None else "none"

    @property
    def configured(self) -> bool:
        return self.provider is not None

    async def search(self, query: str, k: int = 10) -> list[Document]:
        if self.provider is None:
            raise WebSearchError(self._missing)
        if not isinstance(query, str) or not query.strip():
            raise WebSearchError("web_search needs a non-empty query")
        try:
            return await self.provider.search(query.strip(), k)
        except ToolError:
            raise
        except Exception as exc:  # a plugin provider's own failure: still a tool error with its name
            raise WebSearchError(f"{self.provider.name}: search failed ({type(exc).__name__}: {exc})") from exc

    def close(self) -> None:
        close = getattr(self.provider, "close", None)
        if callable(close):
            close()


def build_web_search(spec: Any | None, *, home: Path | str | None = None,
                     stack: contextlib.ExitStack | None = None) -> WebSearch:
    """The ``WebSearch`` a ``web:`` spec asks for (duck-typed: provider, corpus, url, api_key_env,
    mode, language, timeout_s, max_retries). Raises ``WebSearchError`` naming what is missing."""
    if spec is None:
        return WebSearch(None)
    provider_name = getattr(spec, "provider", "corpus")
    timeout_s = getattr(spec, "timeout_s", 10.0)
    max_retries = getattr(spec, "max_retries", 2)
    language = getattr(spec, "language", None)
    provider: SearchProvider
    if provider_name == "corpus":
        from kgteam.tools.web.corpus import open_corpus

        provider = open_corpus(spec.corpus, home, mode=getattr(spec, "mode", "hybrid"))
    elif provider_name == "searxng":
        from kgteam.tools.web.searxng import SearxngProvider

        try:
            provider = SearxngProvider(spec.url, language=language, timeout_s=timeout_s, max_retries=max_retries)
        except ValueError as exc:
            raise WebSearchError(str(exc)) from None
    elif provider_name == "brave":
        from kgteam.tools.web.brave import DEFAULT_KEY_ENV, BraveProvider

        provider = BraveProvider.from_env(getattr(spec, "api_key_env", None) or DEFAULT_KEY_ENV,
                                          language=language, timeout_s=timeout_s, max_retries=max_retries)
    else:
        raise WebSearchError(f"unknown web search provider {provider_name!r} (corpus, searxng or brave)")
    search = WebSearch(provider)
    if stack is not None:
        stack.callback(search.close)
    return search
