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

Requests are blocking; the async tools run them with ``asyncio.to_thread``. One
``SPARQLWrapper`` per request keeps this object thread-safe.
"""

from __future__ import annotations

import json
import time
import urllib.error

import pyoxigraph
from SPARQLWrapper import JSON, N3, POST, URLENCODED, SPARQLWrapper

from kgteam.tools.backends.oxigraph_store import term_from_oxigraph
from kgteam.tools.backends.rdf_terms import normalise_term, sort_triple_rows
from kgteam.tools.result_cap import MAX_RESULT_BYTES, cap_result
from kgteam.tools.sparql_guard import check_iri, query_shape, set_limit_offset
from kgteam.tools.types import RDFTerm, SparqlResult, ToolError


def body_limit(max_bytes: int) -> int:
    """The most response bytes read for a ``max_bytes`` answer: SPARQL JSON wraps every value in
    ~60 bytes of markup, so 4x plus 1 MiB leaves room for any answer the cap would keep."""
    return 4 * max_bytes + 1024 * 1024


class SparqlEndpointStore:
    name = "sparql-endpoint"

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

    def _request(self, sparql: str, *, timeout_s: float, rdf: bool = False,
                 max_bytes: int = MAX_RESULT_BYTES) -> tuple[bytes, dict[str, str]]:
        w = SPARQLWrapper(self.url, agent=self.user_agent)
        w.setMethod(POST)
        w.setRequestMethod(URLENCODED)
        w.setOnlyConneg(True)
        w.setReturnFormat(N3 if rdf else JSON)
        w.setTimeout(max(1, int(round(min(timeout_s, self.timeout_s) + 0.5))))
        if rdf:
            w.addCustomHttpHeader("Accept", "application/n-triples, text/plain;q=0.5")
        if self.default_graph:
            w.addDefaultGraph(self.default_graph)
        w.setQuery(sparql)
        try:
            res = w.query()
            most = body_limit(max_bytes)
            body = res.response.read(most + 1)
            if len(body) > most:
                raise ToolError(f"SPARQL endpoint answer larger than {most} bytes (the result cap is {max_bytes} "
                                "bytes of values): ask for fewer rows or shorter values")
            headers = {k.lower(): v for k, v in res.info().items()}
        except ToolError:
            raise
        except TimeoutError:
            raise ToolError(f"SPARQL endpoint timed out after {timeout_s:g}s") from None
        except urllib.error.URLError as e:
            if isinstance(getattr(e, "reason", None), TimeoutError):
                raise ToolError(f"SPARQL endpoint timed out after {timeout_s:g}s") from None
            raise ToolError(f"SPARQL endpoint unreachable: {e}") from None
        except Exception as e:  # SPARQLWrapper wraps HTTP 4xx/5xx in its own exception types
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

    # ------------------------------------------------------------------ parsing

    @staticmethod
    def _parse_json(body: bytes) -> tuple[list[str], list[dict[str, RDFTerm]], bool | None]:
        try:
            data = json.loads(body)
        except ValueError as e:
            raise ToolError(f"SPARQL endpoint returned invalid JSON: {e}") from None
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
            triples = list(pyoxigraph.parse(body, format=pyoxigraph.RdfFormat.TURTLE))
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
            rows = sort_triple_rows(self._parse_triples(body))
            truncated = len(rows) > max_rows or "x-sparql-maxrows" in headers or (
                page_cut and len(rows) >= (self.page_size or 0)
            )
            return SparqlResult(
                query=sparql, variables=["subject", "predicate", "object"], rows=rows[:max_rows],
                truncated=truncated, elapsed_s=time.perf_counter() - start,
            )
        if info.form == "ASK":
            body, _ = self._request(sparql, timeout_s=timeout_s)
            _, _, boolean = self._parse_json(body)
            return SparqlResult(query=sparql, boolean=boolean, elapsed_s=time.perf_counter() - start)

        want = max_rows + 1 if info.limit is None else min(info.limit, max_rows + 1)
        page = self.page_size
        if page is None or want <= page:
            body, headers = self._request(sparql, timeout_s=timeout_s, max_bytes=max_bytes)
            variables, rows, _ = self._parse_json(body)
            capped = "x-sparql-maxrows" in headers
        else:
            variables, rows, capped = [], [], False
            offset = info.offset
            while len(rows) < want:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    raise ToolError(f"SPARQL endpoint timed out after {timeout_s:g}s")
                n = min(page, want - len(rows))
                body, headers = self._request(set_limit_offset(sparql, n, offset), timeout_s=remaining,
                                              max_bytes=max_bytes)
                variables, chunk, _ = self._parse_json(body)
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
