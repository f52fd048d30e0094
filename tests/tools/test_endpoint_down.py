"""An endpoint KG whose server stops answering is an error, not an empty KG (issue 40).

A real HTTP server on 127.0.0.1, started here, serves the isles KG as SPARQL until it is told to
hang, to answer an HTML page with status 200, or to send its answer a byte at a time. The KG is
connected with ``kgteam kg connect`` while the server works; then every question must end with
an error naming the endpoint (and the limit, for a timeout), exit code 1, within the KG's
timeout plus a small constant, instead of "I don't know" after one timeout per query tried."""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyoxigraph as ox
import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.tools.backends.sparql_endpoint import PROBE_S, EndpointUnavailable, SparqlEndpointStore
from kgteam.tools.types import ToolError

ISLES = Path(__file__).resolve().parents[1] / "data" / "kgs" / "isles" / "isles.ttl"
TIMEOUT_S = 2
runner = CliRunner()


class SparqlServer:
    """A SPARQL endpoint over an in-memory store, with a ``mode``: ok, hang, html, trickle, bad-query, or
    slow (a query naming ``?slow`` never ends; the others are answered)."""

    def __init__(self) -> None:
        self.store = ox.Store()
        self.store.load(path=str(ISLES), format=ox.RdfFormat.TURTLE)
        self.mode = "ok"
        self.release = threading.Event()  # lets hanging handlers go when the test ends
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                query = urllib.parse.parse_qs(body.decode())["query"][0]
                if server.mode == "hang" or (server.mode == "slow" and "?slow" in query):
                    server.release.wait(60)
                    return
                if server.mode == "bad-query":
                    self.send_response(400)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if server.mode == "html":
                    self._send(b"<html><body><h1>Down for maintenance</h1></body></html>", "text/html")
                    return
                if server.mode == "trickle":  # headers at once, then a byte now and then
                    self.send_response(200)
                    self.send_header("Content-Type", "application/sparql-results+json")
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    for _ in range(1000):
                        if server.release.wait(0.3):
                            return
                        self.wfile.write(b" ")
                        self.wfile.flush()
                    return
                result = server.store.query(query)
                if isinstance(result, ox.QueryTriples):
                    self._send(result.serialize(format=ox.RdfFormat.N_TRIPLES), "application/n-triples")
                else:
                    self._send(result.serialize(format=ox.QueryResultsFormat.JSON),
                               "application/sparql-results+json")

            def _send(self, out: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/query"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[SparqlServer]:
    srv = SparqlServer()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def home(server: SparqlServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("endpoint_down_home")
    server.mode = "ok"
    result = runner.invoke(app, ["kg", "connect", "ep", server.url, "--timeout", str(TIMEOUT_S),
                                 "--home", str(home), "-q"])
    assert result.exit_code == 0, result.output
    return home


def _ask(home: Path, tmp_path: Path) -> tuple[dict, float, str]:
    started = time.monotonic()
    result = runner.invoke(app, ["ask", "What is the capital of Quillsey?", "--kg", "ep", "--model", "none",
                                 "--home", str(home), "--db", str(tmp_path / "s.sqlite"), "--json"])
    elapsed = time.monotonic() - started
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    return json.loads(result.stdout), elapsed, result.output


def test_a_working_endpoint_answers(server: SparqlServer, home: Path, tmp_path: Path) -> None:
    server.mode = "ok"
    result = runner.invoke(app, ["ask", "What is the capital of Quillsey?", "--kg", "ep", "--model", "none",
                                 "--home", str(home), "--db", str(tmp_path / "s.sqlite"), "--json"])
    assert result.exit_code == 0, result.output
    assert [v["label"] for v in json.loads(result.stdout)["values"]] == ["Fennick"]


def test_a_hanging_endpoint_ends_the_question_with_an_error_within_its_timeout(
        server: SparqlServer, home: Path, tmp_path: Path) -> None:
    server.mode = "hang"
    data, elapsed, _ = _ask(home, tmp_path)
    assert data["status"] == "error" and data["stopped_by"] == "error"
    assert server.url in data["error"] and "timed out" in data["error"] and f"{TIMEOUT_S}s" in data["error"]
    assert "don't know" not in data["text"]
    # one timeout and the probe that tells a dead server from a costly query, not one timeout per
    # query tried (six before: 6 x 2 s); the rest is the team's start-up
    assert data["cost"]["seconds"] < TIMEOUT_S + PROBE_S + 1.5, data["cost"]
    assert elapsed < TIMEOUT_S + PROBE_S + 8, elapsed


def test_an_html_page_with_status_200_is_an_error_not_an_empty_answer(
        server: SparqlServer, home: Path, tmp_path: Path) -> None:
    server.mode = "html"
    data, _, _ = _ask(home, tmp_path)
    assert data["status"] == "error"
    assert server.url in data["error"] and "text/html" in data["error"] and "not SPARQL results" in data["error"]
    assert data["cost"]["seconds"] < TIMEOUT_S


def test_kgteam_sparql_on_a_hanging_endpoint_is_one_line(server: SparqlServer, home: Path) -> None:
    server.mode = "hang"
    result = runner.invoke(app, ["sparql", "ep", "SELECT * WHERE { ?s ?p ?o } LIMIT 1", "--home", str(home)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert result.output.startswith("error: ") and "timed out" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_server_sending_a_byte_at_a_time_is_held_to_the_timeout(server: SparqlServer) -> None:
    """The timeout bounds the whole request, not each read of the socket."""
    server.mode = "trickle"
    store = SparqlEndpointStore(server.url, timeout_s=1.5)
    started = time.monotonic()
    with pytest.raises(EndpointUnavailable, match="timed out") as info:
        store.query("ASK { ?s ?p ?o }", timeout_s=1.5, max_rows=1)
    assert time.monotonic() - started < 1.5 + min(PROBE_S, 1.5) + 1  # the request, then the probe (trickled too)
    assert not isinstance(info.value, ToolError) and info.value.timed_out


def test_a_query_the_server_refuses_stays_a_tool_error(server: SparqlServer) -> None:
    """HTTP 400 is the query's fault: roles may go on with another query (the endpoint works)."""
    server.mode = "bad-query"
    store = SparqlEndpointStore(server.url, timeout_s=5)
    with pytest.raises(ToolError, match="endpoint error"):
        store.query("SELECT * WHERE { ?s ?p ?o } LIMIT 1", timeout_s=5, max_rows=1)


def test_a_query_too_costly_for_the_timeout_on_a_working_endpoint_stays_a_tool_error(server: SparqlServer) -> None:
    """The server answers a trivial ASK after the timeout: the query, not the endpoint, failed."""
    server.mode = "slow"
    store = SparqlEndpointStore(server.url, timeout_s=5)
    started = time.monotonic()
    with pytest.raises(ToolError, match="timed out"):
        store.query("SELECT ?slow WHERE { ?slow ?p ?o }", timeout_s=1, max_rows=1)
    assert time.monotonic() - started < 1 + PROBE_S


async def test_the_kg_tools_wait_for_the_probe_and_pass_the_endpoint_error_on(server: SparqlServer) -> None:
    """KGTools give a store its timeout plus a grace; the endpoint's probe must fit in it, or the
    tools would turn the failure into an ordinary ToolError ("query timed out") again."""
    from kgteam.tools.kg_tools import KGTools

    server.mode = "hang"
    tools = KGTools(SparqlEndpointStore(server.url, timeout_s=1), labels=None, default_timeout_s=1)  # type: ignore[arg-type]
    with pytest.raises(EndpointUnavailable):
        await tools.labels_for(["http://example.org/isles/Quillsey"])
    with pytest.raises(EndpointUnavailable):
        await tools.run_sparql("ASK { ?s ?p ?o }")
