"""Start, load and stop real SPARQL servers on 127.0.0.1 (tests and benchmarks).

Two servers: Virtuoso Open Source 7 from Debian (``virtuoso-t`` + ``isql-vt``) and the
``oxigraph serve-read-only`` CLI from PyPI. Each runs in its own temporary directory on free
loopback ports and is stopped by the PID we started — never by name.

Differences that matter to :class:`~kgteam.tools.backends.sparql_endpoint.SparqlEndpointStore`:

* Endpoint path: Virtuoso ``/sparql``, Oxigraph ``/query``.
* Default graph: Virtuoso's default graph is the union of *all* graphs, its own system graphs
  included, so data is bulk-loaded into a named graph and queried with ``default-graph-uri``.
  Oxigraph's default graph is only the default graph, so data is loaded there.
* Row cap: Virtuoso's ``[SPARQL] ResultSetMaxRows`` (10,000 by default) silently truncates;
  the endpoint store pages with LIMIT/OFFSET when told the cap (``page_size``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_GRAPH = "http://kgteam.local/graph/default"


class ServerError(RuntimeError):
    """A server could not be started, loaded or reached."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def virtuoso_available() -> bool:
    return shutil.which("virtuoso-t") is not None and shutil.which("isql-vt") is not None


def oxigraph_cli() -> str | None:
    """The ``oxigraph`` CLI: beside this interpreter (the venv) first, then on PATH."""
    here = Path(sys.executable).with_name("oxigraph")
    if here.exists():
        return str(here)
    return shutil.which("oxigraph")


def _wait_http(url: str, proc: subprocess.Popen[bytes], timeout_s: float, log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(f"server exited with {proc.returncode}; log: {_tail(log)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.2)
    raise ServerError(f"server not ready after {timeout_s:g}s at {url}; log: {_tail(log)}")


def _tail(path: Path, n: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return "(no log)"


def _stop_pid(proc: subprocess.Popen[bytes] | None, timeout_s: float = 20.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@dataclass
class RunningServer:
    """Base for a server we started: where to query it and how to stop it."""

    workdir: Path
    http_port: int
    endpoint_path: str
    default_graph: str | None = None
    page_size: int | None = None
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    owns_workdir: bool = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}{self.endpoint_path}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def endpoint_store(self, **kwargs: object):  # -> SparqlEndpointStore (import kept lazy)
        from kgteam.tools.backends.sparql_endpoint import SparqlEndpointStore

        kwargs.setdefault("default_graph", self.default_graph)
        kwargs.setdefault("page_size", self.page_size)
        return SparqlEndpointStore(self.url, **kwargs)  # type: ignore[arg-type]

    def stop(self) -> None:
        _stop_pid(self.proc)
        self.proc = None
        if self.owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ----------------------------------------------------------------------------- Virtuoso

_VIRTUOSO_INI = """\
[Database]
DatabaseFile = {d}/virtuoso.db
ErrorLogFile = {d}/virtuoso.log
LockFile = {d}/virtuoso.lck
TransactionFile = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
ErrorLogLevel = 7
FileExtend = 200
MaxCheckpointRemap = 2000
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {d}/virtuoso-temp.db
TransactionFile = {d}/virtuoso-temp.trx
MaxCheckpointRemap = 2000
Striping = 0

[Parameters]
ServerPort = 127.0.0.1:{sql_port}
LiteMode = 0
DisableUnixSocket = 1
DisableTcpSocket = 0
ServerThreads = 10
CheckpointInterval = 60
NumberOfBuffers = {buffers}
MaxDirtyBuffers = {dirty}
DirsAllowed = ., {d}, {data_dir}
ThreadCleanupInterval = 0
ResourcesCleanupInterval = 0
MaxSortedTopRows = 1000000

[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {d}
ServerThreads = 10
MaxClientConnections = 10
DavRoot = DAV
EnabledDavVSP = 0
KeepAliveTimeout = 10
MaxKeepAlives = 10

[SPARQL]
ResultSetMaxRows = {max_rows}
MaxQueryCostEstimationTime = 400
MaxQueryExecutionTime = {max_exec_s}
DefaultGraph = {graph}
"""


@dataclass
class VirtuosoServer(RunningServer):
    sql_port: int = 0
    password: str = "dba"

    def isql(self, sql: str, timeout_s: float = 600.0) -> str:
        """Run SQL through ``isql-vt`` on the loopback SQL port; raise on any reported error."""
        cmd = ["isql-vt", f"127.0.0.1:{self.sql_port}", "dba", self.password, "VERBOSE=OFF", f"EXEC={sql}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=self.workdir)
        out = r.stdout + r.stderr
        if r.returncode != 0 or "*** Error" in out:
            raise ServerError(f"isql failed ({r.returncode}): {out[-2000:]}")
        return out

    def bulk_load(self, files: list[Path], graph: str | None = None) -> None:
        """Bulk-load RDF files with ``ld_dir``/``rdf_loader_run`` into ``graph`` and checkpoint."""
        graph = graph or self.default_graph or DEFAULT_GRAPH
        from kgteam.tools.sparql_guard import check_iri

        check_iri(graph)
        for f in files:
            f = Path(f).resolve()
            if "'" in str(f) or "'" in graph:
                raise ServerError(f"unsupported quote character in {f} or {graph}")
            self.isql(f"ld_dir('{f.parent}', '{f.name}', '{graph}');")
        self.isql("rdf_loader_run();")
        names = ", ".join(f"'{Path(f).resolve()}'" for f in files)
        out = self.isql(
            f"SELECT 'LOADERR', ll_file, ll_error FROM DB.DBA.load_list WHERE ll_error IS NOT NULL AND ll_file IN ({names});"
        )
        errors = [line for line in out.splitlines() if line.startswith("LOADERR")]
        if errors:
            raise ServerError("Virtuoso bulk load reported errors: " + " | ".join(errors)[:2000])
        self.isql("checkpoint;")


def start_virtuoso(
    data_dir: Path | None = None,
    *,
    workdir: Path | None = None,
    result_set_max_rows: int = 10_000,
    max_exec_s: int = 60,
    buffers: int = 20_000,
    graph: str = DEFAULT_GRAPH,
    timeout_s: float = 60.0,
) -> VirtuosoServer:
    """Start ``virtuoso-t`` in the foreground (``-f``) on free loopback ports; data_dir is DirsAllowed."""
    if not virtuoso_available():
        raise ServerError("virtuoso-t / isql-vt not installed (Debian: virtuoso-opensource-7-bin)")
    owns = workdir is None
    wd = Path(workdir or tempfile.mkdtemp(prefix="kgteam-virtuoso-")).resolve()
    wd.mkdir(parents=True, exist_ok=True)
    sql_port, http_port = free_port(), free_port()
    while http_port == sql_port:
        http_port = free_port()
    ini = wd / "virtuoso.ini"
    ini.write_text(
        _VIRTUOSO_INI.format(
            d=wd,
            data_dir=Path(data_dir or wd).resolve(),
            sql_port=sql_port,
            http_port=http_port,
            max_rows=result_set_max_rows,
            max_exec_s=max_exec_s,
            buffers=buffers,
            dirty=buffers * 3 // 4,
            graph=graph,
        )
    )
    log = wd / "stdout.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            ["virtuoso-t", "-f", "-c", str(ini)], cwd=wd, stdout=fh, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    server = VirtuosoServer(
        workdir=wd, http_port=http_port, endpoint_path="/sparql", default_graph=graph,
        page_size=result_set_max_rows, proc=proc, owns_workdir=owns, sql_port=sql_port,
    )
    try:
        q = urllib.parse.urlencode({"query": "ASK {}"})
        _wait_http(f"http://127.0.0.1:{http_port}/sparql?{q}", proc, timeout_s, log)
    except BaseException:
        server.stop()
        raise
    return server


# ----------------------------------------------------------------------------- Oxigraph server


def oxigraph_load(location: Path, files: list[Path], *, timeout_s: float = 3600.0) -> None:
    """``oxigraph load`` files into the default graph of a store directory."""
    cli = oxigraph_cli()
    if cli is None:
        raise ServerError("the oxigraph CLI is not installed (pip install oxigraph)")
    cmd = [cli, "load", "--location", str(location)]
    for f in files:
        cmd += ["--file", str(f)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if r.returncode != 0:
        raise ServerError(f"oxigraph load failed: {(r.stdout + r.stderr)[-2000:]}")


def start_oxigraph(
    location: Path,
    *,
    union_default_graph: bool = False,
    query_timeout_s: int | None = 60,
    timeout_s: float = 60.0,
) -> RunningServer:
    """``oxigraph serve-read-only`` over an existing store directory (not removed on stop)."""
    cli = oxigraph_cli()
    if cli is None:
        raise ServerError("the oxigraph CLI is not installed (pip install oxigraph)")
    port = free_port()
    wd = Path(tempfile.mkdtemp(prefix="kgteam-oxigraph-"))
    cmd = [cli, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}"]
    if union_default_graph:
        cmd.append("--union-default-graph")
    if query_timeout_s:
        cmd += ["--timeout-s", str(query_timeout_s)]
    log = wd / "stdout.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = RunningServer(workdir=wd, http_port=port, endpoint_path="/query", proc=proc)
    try:
        q = urllib.parse.urlencode({"query": "ASK {}"})
        _wait_http(f"http://127.0.0.1:{port}/query?{q}", proc, timeout_s, log)
    except BaseException:
        server.stop()
        raise
    return server
