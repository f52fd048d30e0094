"""SearxNG and Brave against recorded exchanges (tests/data/web/recorded/, see its README), replayed
with respx: no such server runs here. What is checked is what kgteam sends (path, parameters,
key header) and what it makes of each answer: documents, retries, and errors a person can act on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
import respx

from kgteam.tools.web.brave import BRAVE_WEB_URL, BraveProvider
from kgteam.tools.web.errors import ProviderHTTPError, WebSearchError
from kgteam.tools.web.searxng import SearxngProvider

RECORDED = Path(__file__).resolve().parents[1] / "data" / "web" / "recorded"
SEARX = "http://127.0.0.1:8888"
KEY = "BSA-test-key-not-real"


def recorded(name: str) -> dict:
    return json.loads((RECORDED / name).read_text(encoding="utf-8"))


def page(name: str, status: int = 200) -> httpx.Response:
    return httpx.Response(status, json=recorded(name))


def searx(**kwargs) -> SearxngProvider:
    return SearxngProvider(SEARX, retry_wait_s=0, **kwargs)


def brave(**kwargs) -> BraveProvider:
    return BraveProvider(KEY, retry_wait_s=0, **kwargs)


# ---------------------------------------------------------------- SearxNG


def test_searxng_results_become_documents_and_pages_are_followed():
    with respx.mock(base_url=SEARX) as mock:
        route = mock.get("/search").mock(side_effect=[page("searxng_page1.json"), page("searxng_page2.json")])
        docs = asyncio.run(searx(language="en").search("copper valley railway locomotive", k=4))
    first = route.calls[0].request.url.params
    assert (first["q"], first["format"], first["pageno"], first["language"]) == (
        "copper valley railway locomotive", "json", "1", "en")
    assert route.calls[1].request.url.params["pageno"] == "2"
    assert [d.url for d in docs] == ["https://example.org/copper-valley-railway", "https://example.org/night-heron",
                                     "https://example.org/hollin-mines", "https://example.org/brask-smelter"]
    top = docs[0]
    assert (top.id, top.source, top.doc_id, top.chunk) == (top.url, "searxng", top.url, None)
    assert top.title == "Copper Valley Railway – history"  # entity decoded
    assert top.snippet.startswith("The Copper Valley Railway is a narrow-gauge line") and top.score == 3.0
    assert docs[1].snippet == "Night Heron (locomotive)"  # no content: the title stands in
    assert docs[3].snippet == "The smelter at Brask processed ore brought by the Copper Valley Railway."  # <b> gone


def test_searxng_stops_at_k_and_when_a_page_brings_nothing_new():
    with respx.mock(base_url=SEARX) as mock:
        route = mock.get("/search").mock(return_value=page("searxng_page1.json"))
        two = asyncio.run(searx().search("copper", k=2))
        assert len(two) == 2 and route.call_count == 1
        everything = asyncio.run(searx().search("copper", k=10))  # page 2 repeats page 1: stop
    assert len(everything) == 3 and route.call_count == 3


def test_searxng_no_results_is_an_empty_list():
    with respx.mock(base_url=SEARX) as mock:
        mock.get("/search").mock(return_value=page("searxng_empty.json"))
        assert asyncio.run(searx().search("zzqqxx no such thing")) == []


def test_searxng_403_says_to_enable_the_json_format():
    body = (RECORDED / "searxng_403.html").read_text()
    with respx.mock(base_url=SEARX) as mock:
        route = mock.get("/search").mock(return_value=httpx.Response(403, text=body,
                                                                      headers={"content-type": "text/html"}))
        with pytest.raises(ProviderHTTPError, match=r"searxng at http://127.0.0.1:8888/search: HTTP 403 .*"
                                                    r"add 'json' under search.formats") as err:
            asyncio.run(searx().search("x"))
    assert route.call_count == 1 and err.value.status == 403


def test_an_html_page_instead_of_json_is_named():
    body = (RECORDED / "captcha.html").read_text()
    with respx.mock(base_url=SEARX) as mock:
        mock.get("/search").mock(return_value=httpx.Response(200, text=body, headers={"content-type": "text/html"}))
        with pytest.raises(ProviderHTTPError, match=r"answered with an HTML page, not JSON .*Just a moment"):
            asyncio.run(searx().search("x"))


def test_json_of_the_wrong_shape_and_non_json_are_named():
    with respx.mock(base_url=SEARX) as mock:
        mock.get("/search").mock(side_effect=[httpx.Response(200, json={"error": "nope"}),
                                              httpx.Response(200, text="results: none",
                                                             headers={"content-type": "text/plain"})])
        with pytest.raises(ProviderHTTPError, match=r"the JSON has no 'results' list \(keys: error\)"):
            asyncio.run(searx().search("x"))
        with pytest.raises(ProviderHTTPError, match="something that is not JSON: results: none"):
            asyncio.run(searx().search("x"))


def test_5xx_and_timeouts_are_retried_then_succeed():
    with respx.mock(base_url=SEARX) as mock:
        route = mock.get("/search").mock(side_effect=[httpx.Response(502, text="bad gateway"),
                                                      httpx.ReadTimeout("slow"), page("searxng_empty.json")])
        assert asyncio.run(searx(max_retries=2).search("x")) == []
    assert route.call_count == 3


def test_retries_are_bounded_and_the_last_error_is_reported():
    with respx.mock(base_url=SEARX) as mock:
        route = mock.get("/search").mock(side_effect=httpx.ConnectTimeout("slow"))
        with pytest.raises(ProviderHTTPError, match=r"searxng at .*/search: no answer within 2 s \(timeout\)"):
            asyncio.run(searx(max_retries=1, timeout_s=2).search("x"))
    assert route.call_count == 2


@pytest.mark.parametrize(("response", "message"), [
    (httpx.Response(404, text="Not Found"), "HTTP 404: Not Found"),
    (httpx.Response(429, text="Too Many Requests", headers={"retry-after": "30"}),
     r"rate limit reached \(HTTP 429\); the server asks to wait 30 s"),
    (httpx.Response(401, text="login required"), r"access refused \(HTTP 401\): login required"),
])
def test_other_errors_are_not_retried(response, message):
    with respx.mock(base_url=SEARX) as mock:
        route = mock.get("/search").mock(return_value=response)
        with pytest.raises(ProviderHTTPError, match=message):
            asyncio.run(searx(max_retries=3).search("x"))
    assert route.call_count == 1


def test_a_refused_connection_is_not_retried():
    with respx.mock(base_url=SEARX) as mock:
        route = mock.get("/search").mock(side_effect=httpx.ConnectError("Connection refused"))
        with pytest.raises(ProviderHTTPError, match=r"cannot connect \(ConnectError: Connection refused\)"):
            asyncio.run(searx(max_retries=3).search("x"))
    assert route.call_count == 1


def test_searxng_needs_an_http_url():
    with pytest.raises(ValueError, match="must start with http"):
        SearxngProvider("127.0.0.1:8888")


# ---------------------------------------------------------------- Brave


def test_brave_sends_the_key_and_caps_count():
    with respx.mock() as mock:
        route = mock.get(BRAVE_WEB_URL).mock(return_value=page("brave_web.json"))
        docs = asyncio.run(brave(language="en").search("copper valley railway", k=50))
    request = route.calls[0].request
    assert request.headers["X-Subscription-Token"] == KEY
    assert request.headers["Accept"] == "application/json"
    assert dict(request.url.params) == {"q": "copper valley railway", "count": "20", "search_lang": "en"}
    assert [d.title for d in docs] == ["Copper Valley Railway - Heritage Lines", "Night Heron locomotive",
                                       "Hollin mines"]
    assert docs[0].snippet == ("The Copper Valley Railway carried ore from the Hollin mines to Brask & opened in "
                               "1902. Its most famous locomotive, the Night Heron, was built in Leeds. The line "
                               "closed in 1968.")
    assert docs[1].snippet == "A 0-6-0 tank engine that pulled the last train on the line."
    assert docs[2].snippet == "Hollin mines"  # empty description: the title stands in
    assert [d.source for d in docs] == ["brave"] * 3 and docs[0].score > docs[1].score > docs[2].score


def test_brave_without_a_web_section_found_nothing():
    with respx.mock() as mock:
        mock.get(BRAVE_WEB_URL).mock(return_value=page("brave_no_web.json"))
        assert asyncio.run(brave().search("zzqqxx no such thing")) == []


def test_brave_refused_key_and_rate_limit_are_explained_and_not_retried():
    with respx.mock() as mock:
        route = mock.get(BRAVE_WEB_URL).mock(side_effect=[
            page("brave_422_token.json", 422),
            httpx.Response(429, json=recorded("brave_429.json"), headers={"X-RateLimit-Reset": "1, 1419704"}),
            httpx.Response(401, text=""),
        ])
        with pytest.raises(ProviderHTTPError, match=r"brave at https://api.search.brave.com/res/v1/web/search: the "
                                                    r"API key was refused \(HTTP 422: SUBSCRIPTION_TOKEN_INVALID The "
                                                    r"provided subscription token is invalid.\)"):
            asyncio.run(brave(max_retries=3).search("x"))
        with pytest.raises(ProviderHTTPError, match=r"rate limit or quota reached \(HTTP 429: RATE_LIMITED Request "
                                                    r"rate limit exceeded for plan.\); the limit resets in 1, 1419704"):
            asyncio.run(brave(max_retries=3).search("x"))
        with pytest.raises(ProviderHTTPError, match=r"the API key was refused \(HTTP 401\)"):
            asyncio.run(brave(max_retries=3).search("x"))
    assert route.call_count == 3


def test_brave_key_comes_from_the_named_environment_variable(monkeypatch):
    monkeypatch.delenv("MY_BRAVE_KEY", raising=False)
    with pytest.raises(WebSearchError, match="environment variable MY_BRAVE_KEY .* is not set"):
        BraveProvider.from_env("MY_BRAVE_KEY")
    monkeypatch.setenv("MY_BRAVE_KEY", KEY)
    provider = BraveProvider.from_env("MY_BRAVE_KEY")
    assert KEY not in repr(provider)
    with respx.mock() as mock:
        route = mock.get(BRAVE_WEB_URL).mock(return_value=page("brave_no_web.json"))
        asyncio.run(provider.search("x"))
    assert route.calls[0].request.headers["X-Subscription-Token"] == KEY
