"""What the HTTP search providers share: one GET that returns JSON or a clear ``ProviderHTTPError``.

Timeouts and 5xx answers are retried (tenacity, exponential back-off); nothing else is, since a
refused key, a rate limit or a wrong URL does not get better by asking again. Every error names
the provider and the URL (without the query string, which may be private) and what went wrong; an
HTML page where JSON was expected — a login wall, a captcha, a SearxNG without the JSON format —
is named as such. Each search opens its own client: a team may run questions on different event
loops, and an httpx client belongs to the loop it first ran on.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import httpx
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from kgteam.tools.web.errors import ProviderHTTPError

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_RETRIES = 2
_TAG = re.compile(r"<[^>]{0,200}>")
USER_AGENT = "kgteam-web-search/1"


def plain_text(value: Any) -> str:
    """An engine's snippet as plain text: tags such as ``<strong>`` dropped, entities decoded."""
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_TAG.sub("", value)).split())


def _body_excerpt(response: httpx.Response, limit: int = 200) -> str:
    text = " ".join(response.text.split())
    return text[:limit] + ("…" if len(text) > limit else "")


def _looks_like_html(response: httpx.Response) -> bool:
    kind = response.headers.get("content-type", "").lower()
    head = response.text.lstrip()[:100].lower()
    return "html" in kind or head.startswith(("<!doctype html", "<html"))


class HttpJsonSource:
    """GET ``url`` with params and headers; returns the decoded JSON object."""

    def __init__(self, provider: str, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_retries: int = DEFAULT_MAX_RETRIES, retry_wait_s: float = 0.5,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.provider = provider
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.retry_wait_s = retry_wait_s
        self._transport = transport

    def explain_status(self, response: httpx.Response, where: str) -> ProviderHTTPError | None:
        """A provider-specific error for this status (``None``: the generic one)."""
        return None

    def _error_for(self, response: httpx.Response, where: str) -> ProviderHTTPError:
        status = response.status_code
        special = self.explain_status(response, where)
        if special is not None:
            return special
        if status >= 500:
            return ProviderHTTPError(f"{where} failed with HTTP {status} (server error): {_body_excerpt(response)}",
                                     status=status, retryable=True)
        if status == 429:
            wait = response.headers.get("retry-after")
            hint = f"; the server asks to wait {wait} s" if wait else ""
            return ProviderHTTPError(f"{where}: rate limit reached (HTTP 429){hint}", status=status)
        if status in (401, 403):
            return ProviderHTTPError(f"{where}: access refused (HTTP {status}): {_body_excerpt(response)}",
                                     status=status)
        return ProviderHTTPError(f"{where}: HTTP {status}: {_body_excerpt(response)}", status=status)

    async def _once(self, url: str, params: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        where = f"{self.provider} at {url}"
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s, transport=self._transport,
                                         headers={"User-Agent": USER_AGENT}) as client:
                response = await client.get(url, params=params, headers=headers)
        except httpx.TimeoutException:
            raise ProviderHTTPError(f"{where}: no answer within {self.timeout_s:g} s (timeout)",
                                    retryable=True) from None
        except httpx.HTTPError as exc:  # refused, DNS, TLS ...: not retried
            raise ProviderHTTPError(f"{where}: cannot connect ({type(exc).__name__}: {exc})") from None
        if response.status_code >= 400:
            raise self._error_for(response, where)
        if _looks_like_html(response):
            raise ProviderHTTPError(f"{where} answered with an HTML page, not JSON (is this the search API "
                                    f"URL? a login page or captcha?): {_body_excerpt(response, 120)}",
                                    status=response.status_code)
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ProviderHTTPError(f"{where} answered with something that is not JSON: "
                                    f"{_body_excerpt(response, 120)}", status=response.status_code) from None
        if not isinstance(data, dict):
            raise ProviderHTTPError(f"{where} answered with JSON that is not an object", status=response.status_code)
        return data

    async def get_json(self, url: str, params: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait_exponential(multiplier=self.retry_wait_s, max=8),
            retry=retry_if_exception(lambda e: isinstance(e, ProviderHTTPError) and e.retryable),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await self._once(url, params, headers or {})
        raise AssertionError("unreachable")  # pragma: no cover - reraise=True ends the loop with an error
