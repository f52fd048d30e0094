"""Brave Search API (web search): ``GET https://api.search.brave.com/res/v1/web/search``.

The key goes in the ``X-Subscription-Token`` header, read from the environment variable the team
file names (``web.api_key_env``, default ``BRAVE_API_KEY``); a missing variable stops the team
build. Brave returns at most 20 web results per request, so ``k`` above 20 gives 20. A refused
key (401, or 422 ``SUBSCRIPTION_TOKEN_INVALID``) and a rate limit (429 ``RATE_LIMITED``) are
reported as such, with Brave's own ``detail``.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

from kgteam.tools.web.document import Document
from kgteam.tools.web.errors import ProviderHTTPError, WebSearchError
from kgteam.tools.web.http_provider import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S, HttpJsonSource, plain_text

BRAVE_WEB_URL = "https://api.search.brave.com/res/v1/web/search"
MAX_COUNT = 20
DEFAULT_KEY_ENV = "BRAVE_API_KEY"


def _brave_error(response: httpx.Response) -> tuple[str, str]:
    """(code, detail) from Brave's ``{"type": "ErrorResponse", "error": {...}}`` body, if it is one."""
    try:
        body = response.json()
    except ValueError:
        return "", ""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "", ""
    return str(error.get("code") or ""), str(error.get("detail") or "")


class _BraveSource(HttpJsonSource):
    def explain_status(self, response: httpx.Response, where: str) -> ProviderHTTPError | None:
        status = response.status_code
        code, detail = _brave_error(response)
        said = f": {code} {detail}".rstrip() if code or detail else ""
        if status in (401, 403) or code == "SUBSCRIPTION_TOKEN_INVALID":
            return ProviderHTTPError(f"{where}: the API key was refused (HTTP {status}{said}); check the key in "
                                     f"the environment variable the team names (web.api_key_env)", status=status)
        if status == 429:
            reset = response.headers.get("x-ratelimit-reset") or response.headers.get("retry-after")
            hint = f"; the limit resets in {reset} s" if reset else ""
            return ProviderHTTPError(f"{where}: rate limit or quota reached (HTTP 429{said}){hint}", status=status)
        if 400 <= status < 500 and (code or detail):
            return ProviderHTTPError(f"{where}: HTTP {status}{said}", status=status)
        return None


class BraveProvider:
    """``SearchProvider`` over the Brave Search API (a hosted, paid API with a free tier)."""

    name = "brave"

    def __init__(self, api_key: str, *, url: str = BRAVE_WEB_URL, language: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_retries: int = DEFAULT_MAX_RETRIES,
                 retry_wait_s: float = 0.5, transport: httpx.AsyncBaseTransport | None = None) -> None:
        if not api_key:
            raise WebSearchError("brave: no API key given")
        self._api_key = api_key
        self.url = url
        self.language = language
        self._http = _BraveSource(self.name, timeout_s=timeout_s, max_retries=max_retries,
                                  retry_wait_s=retry_wait_s, transport=transport)

    @classmethod
    def from_env(cls, key_env: str = DEFAULT_KEY_ENV, **kwargs: Any) -> BraveProvider:
        key = os.environ.get(key_env, "").strip()
        if not key:
            raise WebSearchError(f"brave: environment variable {key_env} (web.api_key_env) is not set; put your "
                                 "Brave Search API key there")
        return cls(key, **kwargs)

    def __repr__(self) -> str:  # never show the key
        return f"BraveProvider(url={self.url!r})"

    async def search(self, query: str, k: int = 10) -> list[Document]:
        params: dict[str, Any] = {"q": query, "count": min(k, MAX_COUNT)}
        if self.language:
            params["search_lang"] = self.language
        headers = {"Accept": "application/json", "X-Subscription-Token": self._api_key}
        data = await self._http.get_json(self.url, params, headers)
        web = data.get("web")
        if web is None:  # Brave leaves "web" out when nothing matched
            return []
        results = web.get("results") if isinstance(web, dict) else None
        if not isinstance(results, list):
            raise ProviderHTTPError(f"brave at {self.url}: the JSON's 'web' has no 'results' list")
        docs: list[Document] = []
        seen: set[str] = set()
        for r in results:
            url = r.get("url") if isinstance(r, dict) else None
            if not isinstance(url, str) or not url or url in seen:
                continue
            seen.add(url)
            title = plain_text(r.get("title")) or None
            snippet = plain_text(r.get("description"))
            extra = [plain_text(s) for s in r.get("extra_snippets") or [] if isinstance(s, str)]
            snippet = " ".join(p for p in [snippet, *extra] if p) or title or url
            docs.append(Document(id=url, source=self.name, title=title, url=url, snippet=snippet,
                                 score=round(1.0 / (len(docs) + 1), 6), doc_id=url))
            if len(docs) == k:
                break
        return docs
