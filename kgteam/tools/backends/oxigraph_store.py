"""Embedded Oxigraph (pyoxigraph, on disk): the default triple store.

Opened read-only for querying so many readers (tools, the ``oxigraph serve-read-only``
server, benchmark processes, sandbox workers) can share one store directory.

pyoxigraph has no query timeout and a running query cannot be interrupted (it releases the
GIL, so it does not block the event loop, but it keeps a core busy). ``query`` checks the
deadline while streaming rows, which is enough for the small queries the tools build.
``query_untrusted`` (used by ``run_sparql`` for SPARQL written by users or LLMs) runs the
query in a worker process over the same read-only store and kills that process — by the PID
we started — when the deadline passes or the caller cancels: a runaway cartesian product cannot
outlive its timeout. The worker is where a hostile query may hurt, and only itself:

* its data segment is capped (``RLIMIT_DATA``, ``worker_memory_mb``): a query that builds a
  gigabyte string makes Oxigraph abort the worker, not the caller;
* a crash (that abort, a parser stack overflow) ends only the worker; the caller gets a clear
  error naming the cause and the next query starts a fresh worker;
* it runs in its own network namespace where the system allows one (root, or unprivileged user
  namespaces): pyoxigraph offers no switch to turn ``SERVICE`` off, so should a federated query
  ever get past the guard, the worker has no network to reach another host with.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pyoxigraph
from pyoxigraph import BlankNode, Literal, NamedNode, QueryBoolean, QuerySolutions, QueryTriples, Triple

from kgteam.tools.backends.rdf_terms import normalise_term, sort_triple_rows
from kgteam.tools.result_cap import MAX_RESULT_BYTES, ByteBudget
from kgteam.tools.types import RDFTerm, SparqlResult, ToolError

_CHECK_EVERY = 256
_WORKER_START_S = 60.0
_POLL_S = 0.05  # how often a waiting caller looks for cancellation
WORKER_MEMORY_MB = 1024  # the worker's data segment; an idle worker on a 16 MB store uses ~130 MB
QUERY_WORKERS_ENV = "KGTEAM_QUERY_WORKERS"
_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
REPLACED = "the KG was replaced or removed while open (e.g. by `kgteam load`); reopen it"


def store_identity(path: str | Path) -> str:
    """Which store directory ``path`` is *now*: device and inode. ``kgteam load`` swaps a new folder
    in under the same name, so the path alone does not say which KG a late opener would read."""
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}"


def term_from_oxigraph(term: object) -> RDFTerm:
    if isinstance(term, NamedNode):
        return normalise_term("uri", term.value)
    if isinstance(term, Literal):
        return normalise_term("literal", term.value, term.datatype.value, term.language)
    if isinstance(term, BlankNode):
        return normalise_term("bnode", term.value)
    if isinstance(term, Triple):
        return normalise_term("triple", str(term))
    raise ToolError(f"unsupported RDF term in result: {type(term).__name__}")


def _leave_network() -> bool:
    """Move this (still single-threaded) process into an empty network namespace: no interface
    but a downed loopback, so nothing it runs can connect anywhere. False where not permitted."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - no libc to call
        return False
    # root (or CAP_SYS_ADMIN) may unshare the network alone; others need an unprivileged user namespace
    return any(libc.unshare(flags) == 0 for flags in (_CLONE_NEWNET, _CLONE_NEWUSER | _CLONE_NEWNET))


def _cap_memory(megabytes: int) -> None:
    if megabytes > 0:
        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def _sandbox_main(read_fd: int, write_fd: int, path: str, union: bool, identity: str = "",
                  memory_mb: int = WORKER_MEMORY_MB, isolate: bool = True) -> None:
    """Worker process: answer (sparql, max_rows, max_bytes) requests until the pipe closes.

    Refuses to serve a store other than the parent's: checked before and after opening, so a
    swap in between is caught too.
    """
    rx = Connection(read_fd, writable=False)
    tx = Connection(write_fd, readable=False)
    isolated = isolate and _leave_network()  # before opening the store: RocksDB starts threads, unshare wants none
    _cap_memory(memory_mb)
    try:
        before = store_identity(path)
        store = OxigraphStore(path, read_only=True, union_default_graph=union, sandbox_workers=0)
        after = store_identity(path)
    except (OSError, ToolError):
        tx.send(("stale",))
        return
    if identity and not (before == after == identity):
        tx.send(("stale",))
        return
    tx.send(("ready", isolated))
    while True:
        try:
            sparql, max_rows, max_bytes = rx.recv()
        except (EOFError, OSError):
            return
        try:
            res = store.query(sparql, timeout_s=float("inf"), max_rows=max_rows, max_bytes=max_bytes)
            tx.send(("ok", res.model_dump()))
        except ToolError as e:
            tx.send(("error", str(e)))
        except MemoryError:
            tx.send(("error", f"the query needed more than the query worker's {memory_mb} MB of memory"))
            return  # a fresh worker for the next query
        except Exception as e:  # pragma: no cover - reported to the caller, worker stays up
            tx.send(("error", f"query failed: {type(e).__name__}: {e}"))


class _Worker:
    """``python -m kgteam.tools.backends.oxigraph_store`` talking over two pipes.

    A plain subprocess rather than multiprocessing: spawn would re-import the parent's
    ``__main__`` (a user's script) in the worker.
    """

    def __init__(self, path: str, union: bool, identity: str, memory_mb: int, isolate: bool) -> None:
        to_child_r, self._to_child_w = os.pipe()
        self._from_child_r, from_child_w = os.pipe()
        # what the engine prints as it dies ("memory allocation of N bytes failed") is the cause to
        # report, not a backtrace for the user's terminal
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker, closed in kill()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __name__, str(to_child_r), str(from_child_w), path, "1" if union else "0",
             identity, str(memory_mb), "1" if isolate else "0"],
            pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stderr=self.stderr,
            env={**os.environ, "RUST_BACKTRACE": "0"},
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self.tx = Connection(self._to_child_w, readable=False)
        self.rx = Connection(self._from_child_r, writable=False)
        self.isolated = False  # in its own network namespace (set from its hello)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def death(self) -> str:
        """Why the (dead) worker ended: its signal or exit status and its last words."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        code = self.proc.returncode
        how = f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit status {code}"
        last = ""
        with contextlib.suppress(OSError, ValueError):
            self.stderr.seek(0, os.SEEK_END)
            self.stderr.seek(max(0, self.stderr.tell() - 2000))
            lines = [ln.strip() for ln in self.stderr.read().decode("utf-8", "replace").splitlines() if ln.strip()]
            last = next((ln for ln in lines if "memory allocation" in ln or "overflow" in ln), lines[-1] if lines else "")
        return how + (f": {last[:300]}" if last else "")

    def kill(self) -> None:
        for conn in (self.tx, self.rx):
            with contextlib.suppress(Exception):
                conn.close()
        if self.alive():
            self.proc.kill()  # SIGKILL to the PID this object started
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        with contextlib.suppress(OSError):
            self.stderr.close()


def default_query_workers() -> int:
    """How many ``run_sparql`` worker processes one open store may run at once.

    Two (one on a single core): a team extends all of a layer's paths at once, and with one worker
    a 3 ms schema query waited 130-400 ms behind the others at 4M facts. More than two buys little
    on two cores and costs a worker's memory each. ``KGTEAM_QUERY_WORKERS`` overrides (1 = the old
    single worker).
    """
    raw = os.environ.get(QUERY_WORKERS_ENV, "").strip()
    if raw:
        try:
            n = int(raw)
        except ValueError:
            raise ToolError(f"{QUERY_WORKERS_ENV} must be a whole number of worker processes, not {raw!r}") from None
        if n < 1:
            raise ToolError(f"{QUERY_WORKERS_ENV} must be at least 1, not {n}")
        return n
    return min(2, os.cpu_count() or 1)


class _SandboxPool:
    """A few long-lived worker processes; a worker that overruns its deadline is killed and replaced.

    Idle workers are handed out last-in first-out and started lazily, so a caller asking one query
    at a time keeps reusing one process; a second starts only when two queries overlap.
    """

    def __init__(self, path: str, union: bool, size: int, identity: str, memory_mb: int, isolate: bool) -> None:
        self._path, self._union, self._identity, self._memory_mb = path, union, identity, memory_mb
        self._isolate = isolate
        self.isolated: bool | None = None  # whether the last worker started got its own network namespace
        self._idle: queue.LifoQueue[_Worker | None] = queue.LifoQueue()
        for _ in range(size):
            self._idle.put(None)  # started lazily: importing pyoxigraph in a child costs ~0.3 s
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()

    def run(self, sparql: str, timeout_s: float, max_rows: int, max_bytes: int,
            cancel: threading.Event | None = None) -> dict[str, Any]:
        try:
            worker = self._idle.get(timeout=timeout_s)
        except queue.Empty:
            raise ToolError(f"query timed out after {timeout_s:g}s (all query workers busy)") from None
        sent = False
        try:
            if worker is None or not worker.alive():
                if worker is not None:
                    self._discard(worker)
                worker = None
                worker = self._start()
            worker.tx.send((sparql, max_rows, max_bytes))
            sent = True
            deadline = time.monotonic() + timeout_s
            while not worker.rx.poll(min(_POLL_S, max(0.0, deadline - time.monotonic()))):
                if cancel is not None and cancel.is_set():
                    self._discard(worker)
                    worker = None
                    raise ToolError("query cancelled (stopped)")
                if time.monotonic() >= deadline:
                    self._discard(worker)
                    worker = None
                    raise ToolError(f"query timed out after {timeout_s:g}s (stopped)")
            status, payload = worker.rx.recv()
        except (EOFError, OSError):
            why = worker.death() if worker is not None and sent else ""
            if worker is not None:
                self._discard(worker)
            worker = None
            if why:
                raise ToolError(f"the query crashed the query worker ({why}); a query that needs more than "
                                f"{self._memory_mb} MB is stopped this way. The worker was restarted.") from None
            raise ToolError("query worker died or could not start") from None
        finally:
            self._idle.put(worker)
        if status != "ok":
            raise ToolError(payload)
        return payload

    def _start(self) -> _Worker:
        worker = _Worker(self._path, self._union, self._identity, self._memory_mb, self._isolate)
        with self._lock:
            self._all.add(worker)
        # Start-up (imports, opening the store) does not count against the query deadline.
        if not worker.rx.poll(_WORKER_START_S):
            raise OSError("worker did not start")
        hello = worker.rx.recv()
        if hello == ("stale",):
            self._discard(worker)
            raise ToolError(REPLACED)
        if not (isinstance(hello, tuple) and hello[:1] == ("ready",)):
            raise OSError("worker did not start")
        worker.isolated = self.isolated = bool(hello[1])
        return worker

    def _discard(self, worker: _Worker) -> None:
        worker.kill()
        with self._lock:
            self._all.discard(worker)

    def close(self) -> None:
        with self._lock:
            workers, self._all = list(self._all), set()
        for w in workers:
            w.kill()


class OxigraphStore:
    """:class:`~kgteam.tools.backends.base.TripleStore` over a pyoxigraph ``Store``.

    ``sandbox_workers`` is how many ``query_untrusted`` workers may run at once (None:
    :func:`default_query_workers`; 0: none, queries run in this process);
    ``worker_memory_mb`` caps each worker's data segment (0: no cap);
    ``isolate_network=False`` leaves the worker on the network (tests use it to watch the guard
    alone, without this second wall behind it).
    """

    name = "oxigraph"

    def __init__(
        self,
        path_or_store: str | Path | pyoxigraph.Store,
        read_only: bool = True,
        *,
        union_default_graph: bool = False,
        sandbox_workers: int | None = None,
        worker_memory_mb: int = WORKER_MEMORY_MB,
        isolate_network: bool = True,
    ) -> None:
        if isinstance(path_or_store, pyoxigraph.Store):
            self._store = path_or_store
            self.path: Path | None = None
        else:
            self.path = Path(path_or_store)
            if read_only:
                if not self.path.is_dir():
                    raise ToolError(f"no Oxigraph store at {self.path}")
                self._identity = store_identity(self.path)
                self._store = pyoxigraph.Store.read_only(str(self.path))
                if store_identity(self.path) != self._identity:  # swapped while opening: which one is open?
                    raise ToolError(REPLACED)
            else:
                self._store = pyoxigraph.Store(str(self.path))
        self.union_default_graph = union_default_graph
        self._sandbox: _SandboxPool | None = None
        if sandbox_workers is None:
            sandbox_workers = default_query_workers()
        if self.path is not None and read_only and sandbox_workers > 0:
            # workers start lazily (and restart after a killed query): they must open *this* store
            self._sandbox = _SandboxPool(str(self.path), union_default_graph, sandbox_workers, self._identity,
                                         worker_memory_mb, isolate_network)

    @property
    def store(self) -> pyoxigraph.Store:
        return self._store

    @property
    def worker_isolated(self) -> bool | None:
        """Whether the query worker runs without network (None: no worker started yet)."""
        return self._sandbox.isolated if self._sandbox is not None else None

    def query(self, sparql: str, *, timeout_s: float, max_rows: int, max_bytes: int = MAX_RESULT_BYTES) -> SparqlResult:
        start = time.perf_counter()
        deadline = start + timeout_s
        try:
            res = self._store.query(sparql, use_default_graph_as_union=self.union_default_graph)
        except SyntaxError as e:
            raise ToolError(f"SPARQL syntax error: {e}") from None
        except OSError as e:
            raise ToolError(f"query failed: {e}") from None
        if isinstance(res, QueryBoolean):
            return SparqlResult(query=sparql, boolean=bool(res), elapsed_s=time.perf_counter() - start)
        rows: list[dict[str, RDFTerm]] = []
        truncated_by: str | None = None
        budget = ByteBudget(max_bytes)
        try:
            if isinstance(res, QuerySolutions):
                variables = [v.value for v in res.variables]
                for i, sol in enumerate(res):
                    if len(rows) >= max_rows:
                        truncated_by = "rows"
                        break
                    row: dict[str, RDFTerm] = {}
                    for var in variables:
                        t = sol[var]
                        if t is not None:
                            row[var] = term_from_oxigraph(t)
                    if not budget.admit(row):
                        truncated_by = "bytes"
                        break
                    rows.append(row)
                    if i % _CHECK_EVERY == 0 and time.perf_counter() > deadline:
                        raise TimeoutError
            elif isinstance(res, QueryTriples):
                variables = ["subject", "predicate", "object"]
                for i, tr in enumerate(res):
                    if len(rows) >= max_rows:
                        truncated_by = "rows"
                        break
                    triple = {
                        "subject": term_from_oxigraph(tr.subject),
                        "predicate": term_from_oxigraph(tr.predicate),
                        "object": term_from_oxigraph(tr.object),
                    }
                    if not budget.admit(triple):
                        truncated_by = "bytes"
                        break
                    rows.append(triple)
                    if i % _CHECK_EVERY == 0 and time.perf_counter() > deadline:
                        raise TimeoutError
                rows = sort_triple_rows(rows)
            else:  # pragma: no cover - pyoxigraph returns one of the three
                raise ToolError(f"unexpected result type {type(res).__name__}")
        except TimeoutError:
            raise ToolError(f"query timed out after {timeout_s:g}s") from None
        except OSError as e:
            raise ToolError(f"query failed: {e}") from None
        finally:
            # pyoxigraph's results may only be freed on the thread that made them; the frame an
            # error's traceback keeps would otherwise hold them until the GC ran on another thread
            res = sol = tr = None  # noqa: F841
        elapsed = time.perf_counter() - start
        return SparqlResult(query=sparql, variables=variables, rows=rows, truncated=truncated_by is not None,
                            truncated_by=truncated_by, elapsed_s=elapsed)

    def query_untrusted(self, sparql: str, *, timeout_s: float, max_rows: int, max_bytes: int = MAX_RESULT_BYTES,
                        cancel: threading.Event | None = None) -> SparqlResult:
        """Like ``query`` but in a killable, memory-capped worker process, so the timeout is hard,
        ``cancel`` stops it at once, and a crash or blow-up ends only the worker."""
        if self._sandbox is None:
            return self.query(sparql, timeout_s=timeout_s, max_rows=max_rows, max_bytes=max_bytes)
        start = time.perf_counter()
        data = self._sandbox.run(sparql, timeout_s, max_rows, max_bytes, cancel)
        res = SparqlResult.model_validate(data)
        res.elapsed_s = time.perf_counter() - start
        return res

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
        # pyoxigraph closes RocksDB when the Store is garbage-collected; drop our reference.
        self._store = None  # type: ignore[assignment]


if __name__ == "__main__":  # the run_sparql worker process (see _Worker)
    # Ctrl-C in a terminal reaches the whole process group: the parent decides (it cancels the
    # question and kills its workers); a worker printing a KeyboardInterrupt traceback helps no one
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _sandbox_main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1",
                  sys.argv[5] if len(sys.argv) > 5 else "", int(sys.argv[6]) if len(sys.argv) > 6 else WORKER_MEMORY_MB,
                  sys.argv[7] != "0" if len(sys.argv) > 7 else True)
