"""Runs the hostile SPARQL corpus (``tests/data/hostile_sparql/corpus.jsonl``) through ``run_sparql``
on a real Oxigraph KG, with a loopback listener standing in for every host a query could reach.

Shared by ``test_hostile_sparql.py`` (asserts) and ``benchmarks/hostile_sparql.py`` (figures).
For each entry it records what happened — refused by the guard, answered, or stopped while running
(timeout, worker crash, result cap) — how long it took, and whether anything escaped: a connection
to the listener, a change to the KG, or a query the corpus says must be refused that reached the
engine.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph

from kgteam.tools.backends.oxigraph_store import OxigraphStore
from kgteam.tools.kg_tools import KGTools
from kgteam.tools.sparql_guard import analyse_query
from kgteam.tools.types import ToolError

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "hostile_sparql" / "corpus.jsonl"
KG_FILE = ROOT / "tests" / "data" / "tools" / "kg.ttl"


def load_corpus(path: Path = CORPUS) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Listener:
    """A TCP server on 127.0.0.1 that counts connections (none may ever arrive)."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.1)
        self.port = self._sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def fill(self, query: str) -> str:
        hostport = f"127.0.0.1:{self.port}"
        return (query.replace("{URL}", f"http://{hostport}/sparql").replace("{HOSTPORT}", hostport)
                .replace("{PORT}", str(self.port)))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self._sock.close()


class _NoLabels:
    """run_sparql needs no label index; KGTools wants one to close."""

    def search(self, text: str, k: int, kind: str = "entity") -> list:
        return []

    def close(self) -> None:
        pass


def build_store(folder: Path) -> Path:
    """The test KG in an on-disk Oxigraph store under ``folder`` (then closed, for read-only use)."""
    path = folder / "store"
    store = pyoxigraph.Store(str(path))
    store.bulk_load(path=str(KG_FILE), format=pyoxigraph.RdfFormat.TURTLE)
    store.flush()
    del store
    return path


def fingerprint(store: OxigraphStore) -> str:
    """A hash of every quad: equal before and after means the KG did not change."""
    res = store.query("SELECT ?s ?p ?o ?g WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }",
                      timeout_s=30, max_rows=10**6)
    lines = sorted(json.dumps({k: v.model_dump() for k, v in row.items()}, sort_keys=True) for row in res.rows)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest() + f":{len(lines)}"


@dataclass
class Outcome:
    id: str
    kind: str
    expect: str
    result: str  # refused | answered | stopped
    seconds: float
    timeout_s: float  # what the query was given
    message: str = ""
    escaped: list[str] = field(default_factory=list)  # what got out, if anything


@dataclass
class Run:
    outcomes: list[Outcome]
    timeout_s: float  # the KG's
    connections: int
    kg_unchanged: bool
    worker_isolated: bool | None

    def figures(self, slack_s: float) -> dict[str, object]:
        hostile = [o for o in self.outcomes if o.kind not in ("benign", "hidden")]
        benign = [o for o in self.outcomes if o.kind in ("benign", "hidden")]
        over = [o for o in self.outcomes if o.seconds > o.timeout_s + slack_s]
        return {
            "tried": len(self.outcomes),
            "hostile": len(hostile),
            "refused": sum(o.result == "refused" for o in hostile),
            "answered": sum(o.result == "answered" for o in hostile),
            "stopped": sum(o.result == "stopped" for o in hostile),
            "escaped": sum(bool(o.escaped) for o in self.outcomes),
            "crashed": 0,  # the caller is still here to count: a crash ends only the query worker
            "timeouts_overrun": len(over),
            "benign": len(benign),
            "benign_false_positives": sum(o.result != "answered" for o in benign),
            "unexpected": sum(not matches(o) for o in self.outcomes),
            "connections": self.connections,
            "kg_unchanged": self.kg_unchanged,
            "worker_network_isolated": self.worker_isolated,
            "timeout_s": self.timeout_s,
            "slowest_s": round(max((o.seconds for o in self.outcomes), default=0.0), 3),
            "worst_overrun_s": round(max((o.seconds - o.timeout_s for o in self.outcomes), default=0.0), 3),
        }


def matches(o: Outcome) -> bool:
    """The outcome the corpus asks for (``bounded``: any, as long as nothing escapes)."""
    return o.expect == "bounded" or o.result == o.expect


async def run_corpus(store_dir: Path, entries: list[dict[str, Any]], *, timeout_s: float = 2.0,
                     memory_mb: int = 512, isolate_network: bool = False) -> Run:
    """Every entry through ``run_sparql``; ``isolate_network=False`` so the listener sees what the
    guard alone lets through (the worker's own network namespace would hide a leak)."""
    listener = Listener()
    store = OxigraphStore(store_dir, worker_memory_mb=memory_mb, isolate_network=isolate_network)
    tools = KGTools(store, _NoLabels(), default_timeout_s=timeout_s, max_rows=1000)  # type: ignore[arg-type]
    before = fingerprint(store)
    outcomes: list[Outcome] = []
    try:
        for entry in entries:
            query = listener.fill(entry["query"])
            asked = entry.get("timeout_s")
            given = min(asked, timeout_s) if asked else timeout_s
            seen = listener.connections
            t0 = time.perf_counter()
            try:
                analyse_query(query, tools.max_rows + 1)
            except ToolError as exc:
                outcome = Outcome(entry["id"], entry["kind"], entry["expect"], "refused", time.perf_counter() - t0,
                                  given, str(exc)[:200])
            else:
                t0 = time.perf_counter()
                try:
                    await tools.run_sparql(query, timeout_s=asked)
                    outcome = Outcome(entry["id"], entry["kind"], entry["expect"], "answered",
                                      time.perf_counter() - t0, given)
                except ToolError as exc:
                    outcome = Outcome(entry["id"], entry["kind"], entry["expect"], "stopped",
                                      time.perf_counter() - t0, given, str(exc)[:200])
                if entry["expect"] == "refused":
                    outcome.escaped.append("reached the engine")
                if fingerprint(store) != before:
                    outcome.escaped.append("changed the KG")
            if listener.connections != seen:
                outcome.escaped.append("connected to the listener")
            outcomes.append(outcome)
        time.sleep(0.3)  # a late connection still counts
        return Run(outcomes, timeout_s, listener.connections, fingerprint(store) == before, store.worker_isolated)
    finally:
        tools.close()
        listener.close()
