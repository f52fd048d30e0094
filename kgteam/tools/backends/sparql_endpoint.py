"""Any SPARQL 1.1 endpoint over HTTP (SPARQLWrapper) as a :class:`TripleStore`.

Tested against Virtuoso 7 (``/sparql``) and ``oxigraph serve-read-only`` (``/query``).
What this class smooths over, so the KG tools give the same answers on every backend:

* **Default graph.** ``default_graph`` is sent as ``default-graph-uri``. Use it for Virtuoso,
  whose implicit default graph is the union of every graph including its system graphs; leave
  it ``None`` for Oxigraph when the data sits in the default graph.
* **Row cap.** Virtuoso silently cuts results at ``ResultSetMaxRows`` and says so with an
  ``X-SPARQL-MaxRows`` header. Given ``page_size`` (the server cap), SELECT queries that may
  return more are fetched in LIMIT/OFFSET pages; without it a capped response is marked
  ``truncated``. Pages without ORDER BY rely on the server's stable plan order.
* **Terms.** ``typed-literal``, boolean ``1``, ``xsd:int`` vs ``xsd:integer``, decimal
  re-printing and language-tag case are canonicalised (:mod:`rdf_terms`).
* **ASK.** Virtuoso answers ASK in JSON as a one-cell SELECT (``__ASK_RETVAL``).
* **Size.** A response body is read up to a bound derived from the byte cap (values plus JSON
  overhead) and refused beyond it; parsed rows are then cut at the byte cap like Oxigraph's.
* **Anytime answers.** At ``MaxQueryExecutionTime`` Virtuoso returns partial results with
  ``X-SQL-State: S1TAT``; they are refused (a partial COUNT is a wrong answer), not returned.
* **A failing endpoint is not an empty KG.** A refused connection, an HTTP 401/403/404/405/
  502/503/504, a body that is not SPARQL results, or no answer within the timeout (the whole
  request, body included) when a trivial ASK then gets none within :data:`PROBE_S` either, raise
  :class:`EndpointUnavailable`, which is no :class:`ToolError`: roles take a ToolError as "this
  query found nothing" and try the next one (six tries of a hanging server took six timeouts and
  ended in "I don't know"), while this one ends the question with an error naming the endpoint.
  A query the server refuses or cannot finish in time while it answers the probe stays a
  ToolError (a syntax error, its own time limit, a runaway query).

Requests are blocking; the async tools run them with ``asyncio.to_thread``. One
``SPARQLWrapper`` per request keeps this object thread-safe.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
from typing import Any

import pyoxigraph
from SPARQLWrapper import JSON, N3, POST, URLENCODED, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import EndPointNotFound, Unauthorized

from kgteam.protocols.errors import KgteamError
from kgteam.tools.backends.oxigraph_store import term_from_oxigraph
from kgteam.tools.backends.rdf_terms import normalise_term, sort_triple_rows
from kgteam.tools.result_cap import MAX_RESULT_BYTES, cap_result
from kgteam.tools.sparql_guard import check_iri, query_shape, set_limit_offset
from kgteam.tools.types import RDFTerm, SparqlResult, ToolError


class EndpointUnavailable(KgteamError):  # noqa: N818 - reads as what happened, like TimeoutError
    """The endpoint failed, not the query: it must end the question (see the module docstring).
    ``timed_out``: it gave no answer in time (``kg connect`` then counts a huge KG's triples as 0)."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class _NotSparql(ValueError):
    """A body that is not SPARQL results (an HTML page, a JSON document of another kind)."""


PROBE_S = 2.0  # after a timeout, how long a trivial ASK may take for the endpoint to count as working
_DOWN_STATUSES = (401, 403, 404, 405, 502, 503, 504)  # the URL no longer serves SPARQL, or the server is down


def _read_body(response: Any, most: int, deadline: float) -> bytes:
    """Up to ``most + 1`` bytes of ``response``, read by the ``deadline`` (a server that sends a byte
    now and then cannot hold a request past it: each read waits at most the time left)."""
    sock = getattr(getattr(getattr(response, "fp", None), "raw", None), "_sock", None)
    read = getattr(response, "read1", response.read)
    chunks: list[bytes] = []
    size = 0
    while size <= most:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if sock is not None:
            sock.settimeout(left)
        chunk = read(min(1 << 16, most + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _start(body: bytes) -> str:
    return body[:60].decode("utf-8", "replace")


def body_limit(max_bytes: int) -> int:
    """The most response bytes read for a ``max_bytes`` answer: SPARQL JSON wraps every value in
    ~60 bytes of markup, so 4x plus 1 MiB leaves room for any answer the cap would keep."""
    return 4 * max_bytes + 1024 * 1024


class SparqlEndpointStore:
    name = "sparql-endpoint"
    probe_s = PROBE_S  # a query may take this long past its timeout (the probe); KGTools waits for it

    def __init__(
        self,
        url: str,
        *,
        default_graph: str | None = None,
        timeout_s: float = 30.0,
        user_agent: str = "kgteam/0.1 (+https://github.com/kgteam)",
        page_size: int | None = None,
    ) -> None:
        check_iri(url)
        if default_graph is not None:
            check_iri(default_graph)
        self.url = url
        self.default_graph = default_graph
        self.timeout_s = timeout_s
        self.user_agent = user_agent
        self.page_size = page_size

    # ------------------------------------------------------------------ HTTP

    def _http(self, sparql: str, limit: float, rdf: bool, max_bytes: int) -> tuple[bytes, dict[str, str]]:
        """One POST, its whole answer read within ``limit`` seconds; raises what the HTTP stack raises."""
        deadline = time.monotonic() + limit
        w = SPARQLWrapper(self.url, agent=self.user_agent)
        w.setMethod(POST)
        w.setRequestMethod(URLENCODED)
        w.setOnlyConneg(True)
        w.setReturnFormat(N3 if rdf else JSON)
        w.timeout = limit  # type: ignore[assignment]  # setTimeout() would round it to whole seconds
        if rdf:
            w.addCustomHttpHeader("Accept", "application/n-triples, text/plain;q=0.5")
        if self.default_graph:
            w.addDefaultGraph(self.default_graph)
        w.setQuery(sparql)
        res = w.query()
        most = body_limit(max_bytes)
        body = _read_body(res.response, most, deadline)
        if len(body) > most:
            raise ToolError(f"SPARQL endpoint answer larger than {most} bytes (the result cap is {max_bytes} "
                            "bytes of values): ask for fewer rows or shorter values")
        return body, {k.lower(): v for k, v in res.info().items()}

    def _request(self, sparql: str, *, timeout_s: float, rdf: bool = False,
                 max_bytes: int = MAX_RESULT_BYTES) -> tuple[bytes, dict[str, str]]:
        limit = max(0.05, min(timeout_s, self.timeout_s))
        try:
            body, headers = self._http(sparql, limit, rdf, max_bytes)
        except ToolError:
            raise
        except (OSError, http.client.HTTPException) as e:  # timeouts, URLError and HTTPError are OSErrors
            raise self._unavailable(e, limit) from None
        except (EndPointNotFound, Unauthorized) as e:
            raise EndpointUnavailable(f"SPARQL endpoint {self.url} refused the query ({type(e).__name__}): "
                                      "check the URL and its access") from None
        except Exception as e:  # SPARQLWrapper wraps HTTP 400/414/500 in its own exception types
            msg = str(e).strip().splitlines()
            raise ToolError(f"SPARQL endpoint error: {' '.join(msg)[:500]}") from None
        # Virtuoso's "anytime query": at MaxQueryExecutionTime it answers 200 with *partial* results.
        state = headers.get("x-sql-state", "")
        if state == "S1TAT" or "incomplete results" in headers.get("x-sql-message", "").lower():
            raise ToolError(
                f"SPARQL endpoint stopped the query at its execution-time limit (partial results dropped): "
                f"{headers.get('x-sql-message', state)[:300]}"
            )
        return body, headers

    def _unavailable(self, exc: BaseException, limit: float) -> KgteamError:
        """The error for a request that failed below SPARQL: a timeout, a refused or dropped
        connection, or an HTTP status saying the server is down (another status: a ToolError)."""
        reason = getattr(exc, "reason", exc)
        if isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError):
            if self._answers_probe():  # the server works: this query was too costly, the roles may try another
                return ToolError(f"SPARQL endpoint timed out after {limit:g}s")
            return EndpointUnavailable(f"SPARQL endpoint {self.url} timed out: no answer within "
                                       f"{round(limit, 1):g}s (the KG's timeout is {self.timeout_s:g}s)",
                                       timed_out=True)
        if isinstance(exc, urllib.error.HTTPError):
            if exc.code in _DOWN_STATUSES:
                return EndpointUnavailable(f"SPARQL endpoint {self.url} answered HTTP {exc.code} "
                                           f"{exc.reason}: it does not serve SPARQL now")
            return ToolError(f"SPARQL endpoint error: HTTP {exc.code} {exc.reason}")
        if isinstance(exc, urllib.error.URLError):
            return EndpointUnavailable(f"SPARQL endpoint {self.url} is unreachable: {reason}")
        return EndpointUnavailable(f"SPARQL endpoint {self.url} broke off: {type(exc).__name__}: {exc}")

    def _answers_probe(self) -> bool:
        """Whether the endpoint answers a trivial ASK within :data:`PROBE_S`: after a timeout it tells
        a query too costly for the timeout (a ToolError) from a server that stopped answering."""
        try:
            body, _ = self._http("ASK { ?s ?p ?o }", min(PROBE_S, self.timeout_s), False, MAX_RESULT_BYTES)
            return self._parse_json(body)[2] is not None
        except Exception:  # noqa: BLE001 - any failure of the probe says the same: no answer
            return False

    def _results(self, parse: Any, body: bytes, headers: dict[str, str]) -> Any:
        """``parse(body)``; a body that is not SPARQL results (a proxy's HTML page) fails the endpoint."""
        try:
            return parse(body)
        except _NotSparql as exc:
            kind = headers.get("content-type", "").split(";")[0].strip() or "no content type"
            raise EndpointUnavailable(f"SPARQL endpoint {self.url} answered {kind}, not SPARQL results "
                                      f"({exc})") from None

    # ------------------------------------------------------------------ parsing

    @staticmethod
    def _parse_json(body: bytes) -> tuple[list[str], list[dict[str, RDFTerm]], bool | None]:
        try:
            data = json.loads(body)
        except ValueError:
            raise _NotSparql(f"it began {_start(body)!r}") from None
        if not isinstance(data, dict) or not ("boolean" in data or isinstance(data.get("head"), dict)):
            raise _NotSparql(f"JSON without 'head' or 'boolean': {_start(body)!r}")
        if "boolean" in data:
            return [], [], bool(data["boolean"])
        variables = list(data.get("head", {}).get("vars", []))
        rows: list[dict[str, RDFTerm]] = []
        for b in data.get("results", {}).get("bindings", []):
            row: dict[str, RDFTerm] = {}
            for var, t in b.items():
                row[var] = normalise_term(
                    t.get("type", "literal"), t.get("value", ""), t.get("datatype"), t.get("xml:lang") or t.get("lang")
                )
            rows.append(row)
        if variables == ["__ASK_RETVAL"]:  # Virtuoso's JSON ASK
            val = rows[0]["__ASK_RETVAL"].value if rows and "__ASK_RETVAL" in rows[0] else "0"
            return [], [], val in ("1", "true")
        return variables, rows, None

    @staticmethod
    def _parse_triples(body: bytes) -> list[dict[str, RDFTerm]]:
        try:
            triples = list(pyoxigraph.parse(body, format=pyoxigraph.RdfFormat.N_TRIPLES))
        except SyntaxError:
            try:
                triples = list(pyoxigraph.parse(body, format=pyoxigraph.RdfFormat.TURTLE))
            except SyntaxError:
                raise _NotSparql(f"it began {_start(body)!r}") from None
        return [
            {
                "subject": term_from_oxigraph(t.subject),
                "predicate": term_from_oxigraph(t.predicate),
                "object": term_from_oxigraph(t.object),
            }
            for t in triples
        ]

    # ------------------------------------------------------------------ TripleStore

    def query(self, sparql: str, *, timeout_s: float, max_rows: int, max_bytes: int = MAX_RESULT_BYTES) -> SparqlResult:
        start = time.perf_counter()
        result = self._query(sparql, timeout_s=timeout_s, max_rows=max_rows, max_bytes=max_bytes)
        if result.truncated and result.truncated_by is None:
            result.truncated_by = "rows"
        result = cap_result(result, max_bytes)
        result.elapsed_s = time.perf_counter() - start
        return result

    def _query(self, sparql: str, *, timeout_s: float, max_rows: int, max_bytes: int) -> SparqlResult:
        start = time.perf_counter()
        deadline = start + timeout_s
        info = query_shape(sparql)
        if info.form in ("CONSTRUCT", "DESCRIBE"):
            # Triples cannot be paged by OFFSET reliably; one request at most page_size solutions.
            page_cut = self.page_size is not None and (info.limit is None or info.limit > self.page_size)
            text = set_limit_offset(sparql, self.page_size, info.offset) if page_cut else sparql  # type: ignore[arg-type]
            body, headers = self._request(text, timeout_s=timeout_s, rdf=True, max_bytes=max_bytes)
            rows = sort_triple_rows(self._results(self._parse_triples, body, headers))
            truncated = len(rows) > max_rows or "x-sparql-maxrows" in headers or (
                page_cut and len(rows) >= (self.page_size or 0)
            )
            return SparqlResult(
                query=sparql, variables=["subject", "predicate", "object"], rows=rows[:max_rows],
                truncated=truncated, elapsed_s=time.perf_counter() - start,
            )
        if info.form == "ASK":
            body, headers = self._request(sparql, timeout_s=timeout_s)
            _, _, boolean = self._results(self._parse_json, body, headers)
            return SparqlResult(query=sparql, boolean=boolean, elapsed_s=time.perf_counter() - start)

        want = max_rows + 1 if info.limit is None else min(info.limit, max_rows + 1)
        page = self.page_size
        if page is None or want <= page:
            body, headers = self._request(sparql, timeout_s=timeout_s, max_bytes=max_bytes)
            variables, rows, _ = self._results(self._parse_json, body, headers)
            capped = "x-sparql-maxrows" in headers
        else:
            variables, rows, capped = [], [], False
            offset = info.offset
            while len(rows) < want:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:  # the pages together have the timeout; the server answers them
                    raise ToolError(f"SPARQL endpoint timed out after {timeout_s:g}s")
                n = min(page, want - len(rows))
                body, headers = self._request(set_limit_offset(sparql, n, offset), timeout_s=remaining,
                                              max_bytes=max_bytes)
                variables, chunk, _ = self._results(self._parse_json, body, headers)
                rows.extend(chunk)
                offset += len(chunk)
                if len(chunk) < n:
                    break
        truncated = capped or len(rows) > max_rows
        return SparqlResult(
            query=sparql, variables=variables, rows=rows[:max_rows], truncated=truncated,
            elapsed_s=time.perf_counter() - start,
        )

    def close(self) -> None:
        """Nothing to release: every request uses its own connection."""
