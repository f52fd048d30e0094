"""SearxNG (a self-hosted metasearch engine) through its JSON API: ``GET /search?q=…&format=json``.

The instance must allow the JSON format (``search.formats`` in its ``settings.yml``); otherwise it
answers 403, which is reported with that hint. Results come in pages of the instance's size;
further pages are fetched (up to ``MAX_PAGES``) until ``k`` distinct URLs are found.
"""

from __future__ import annotations

from typing import Any

import httpx

from kgteam.tools.web.document import Document
from kgteam.tools.web.errors import ProviderHTTPError
from kgteam.tools.web.http_provider import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S, HttpJsonSource, plain_text

MAX_PAGES = 3


class _SearxSource(HttpJsonSource):
    def explain_status(self, response: httpx.Response, where: str) -> ProviderHTTPError | None:
        if response.status_code == 403:
            return ProviderHTTPError(f"{where}: HTTP 403 for format=json: the instance does not allow the JSON "
                                     "format (add 'json' under search.formats in its settings.yml)", status=403)
        return None


class SearxngProvider:
    """``SearchProvider`` over a SearxNG instance at ``url`` (e.g. ``http://127.0.0.1:8888``)."""

    name = "searxng"

    def __init__(self, url: str, *, language: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_retries: int = DEFAULT_MAX_RETRIES, retry_wait_s: float = 0.5,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"SearxNG url must start with http:// or https:// (got {url!r})")
        self.base_url = url.rstrip("/")
        self.search_url = self.base_url + "/search" if not self.base_url.endswith("/search") else self.base_url
        self.language = language
        self._http = _SearxSource(self.name, timeout_s=timeout_s, max_retries=max_retries,
                                  retry_wait_s=retry_wait_s, transport=transport)

    async def _page(self, query: str, page: int) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"q": query, "format": "json", "pageno": page}
        if self.language:
            params["language"] = self.language
        data = await self._http.get_json(self.search_url, params, {"Accept": "application/json"})
        results = data.get("results")
        if not isinstance(results, list):
            raise ProviderHTTPError(f"searxng at {self.search_url}: the JSON has no 'results' list "
                                    f"(keys: {', '.join(sorted(data)) or 'none'})")
        return [r for r in results if isinstance(r, dict)]

    async def search(self, query: str, k: int = 10) -> list[Document]:
        docs: list[Document] = []
        seen: set[str] = set()
        for page in range(1, MAX_PAGES + 1):
            results = await self._page(query, page)
            new = 0
            for r in results:
                url = r.get("url")
                if not isinstance(url, str) or not url or url in seen:
                    continue
                seen.add(url)
                new += 1
                title = plain_text(r.get("title")) or None
                snippet = plain_text(r.get("content")) or title or url
                score = r.get("score")
                score = float(score) if isinstance(score, int | float) else 1.0 / (len(docs) + 1)
                docs.append(Document(id=url, source=self.name, title=title, url=url, snippet=snippet,
                                     score=score, doc_id=url))
                if len(docs) == k:
                    return docs
            if not new:
                break
        return docs
