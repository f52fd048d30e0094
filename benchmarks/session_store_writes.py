"""Session-store write throughput: SQLite vs PostgreSQL, side by side, same workload, one run.

The workload is what ``TeamRunner`` writes while answering: ``--sessions`` sessions with one open
turn each, written round-robin (concurrent sessions interleave), ``--messages`` envelopes per
session (a ~1 KB payload each) and ``--events`` trace events after each envelope (tool and LLM
calls). The clock runs from the first append until the store says everything is committed
(``flush``), so it measures durable messages per second; ``append_us`` is what one
``append_envelope`` call costs its caller (the event loop, in the runtime).

Stores: SQLite (WAL, ``synchronous=NORMAL``: a commit per envelope, no fsync per commit), and
PostgreSQL with its default durability (``fsync`` and ``synchronous_commit`` on: every commit
waits for the WAL on disk), written through the store's group-commit writer; and, for
comparison, PostgreSQL with a ``flush`` after every envelope (one commit per message, as SQLite
does). PostgreSQL is a throwaway server this script starts on 127.0.0.1 (Debian's binaries, see
tests/sessions/pg_server.py) unless ``--pg-url`` names one.

    .venv/bin/python benchmarks/session_store_writes.py            # JSON on stdout
    .venv/bin/python benchmarks/session_store_writes.py --sessions 50 --messages 100 --events 2
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "sessions"))  # the throwaway PostgreSQL server (pg_server.py)

from kgteam.protocols.envelope import Envelope  # noqa: E402
from kgteam.protocols.payloads import Answer, MissingInfo  # noqa: E402
from kgteam.sessions import SessionStore, open_session_store  # noqa: E402


def workload(sessions: int, messages: int) -> list[Envelope]:
    """Round-robin over the sessions: message i of every session, then message i+1 ..."""
    text = "the film was directed by someone who also wrote it; " * 20  # ~1 KB, like a role message
    out = []
    for i in range(messages):
        for s in range(sessions):
            payload = Answer(confidence=1.0, text=text) if i == messages - 1 else MissingInfo(description=f"step {i}: {text}")
            out.append(Envelope(session_id=f"bench-{s}", turn=0, sender="role", payload=payload))
    return out


def run(store: SessionStore, envelopes: list[Envelope], sessions: int, events: int, *,
        flush_each: bool = False) -> dict[str, Any]:
    for s in range(sessions):  # the turns are open before the clock starts
        store.begin_turn(f"bench-{s}", "how fast are writes?")
    append_s: list[float] = []
    started = time.perf_counter()
    for env in envelopes:
        t = time.perf_counter()
        store.append_envelope(env)
        append_s.append(time.perf_counter() - t)
        for e in range(events):
            store.append_event(env.session_id, 0, "tool_call", {"role": "role", "tool": "run_sparql", "rows": e,
                                                                 "seconds": 0.001})
        if flush_each:
            store.flush()
    store.flush()
    seconds = time.perf_counter() - started
    boundary = []
    for s in range(sessions):
        t = time.perf_counter()
        store.finish_turn(f"bench-{s}", 0, Answer(confidence=1.0, text="done"))
        boundary.append(time.perf_counter() - t)
    stored = sum(len(store.messages(f"bench-{s}")) for s in range(sessions))
    assert stored == len(envelopes), f"{stored} of {len(envelopes)} messages stored"
    return {
        "messages": len(envelopes),
        "events": len(envelopes) * events,
        "seconds": round(seconds, 3),
        "messages_per_s": round(len(envelopes) / seconds, 1),
        "append_us_p50": round(statistics.median(append_s) * 1e6, 1),
        "append_us_p95": round(sorted(append_s)[int(0.95 * (len(append_s) - 1))] * 1e6, 1),
        "finish_turn_ms_p50": round(statistics.median(boundary) * 1e3, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--messages", type=int, default=100, help="envelopes per session")
    parser.add_argument("--events", type=int, default=2, help="trace events after each envelope")
    parser.add_argument("--pg-url", help="an existing PostgreSQL database (default: start a throwaway server)")
    args = parser.parse_args()
    envelopes = workload(args.sessions, args.messages)
    result: dict[str, Any] = {
        "workload": {"sessions": args.sessions, "messages_per_session": args.messages,
                     "events_per_message": args.events,
                     "envelope_bytes": len(envelopes[0].model_dump_json())},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    with tempfile.TemporaryDirectory(prefix="kgteam-bench-") as tmp:
        store = open_session_store(Path(tmp) / "sessions.sqlite")
        result["sqlite"] = run(store, envelopes, args.sessions, args.events)
        store.close()

    server = None
    if args.pg_url:
        urls = [args.pg_url, args.pg_url]
    else:
        from pg_server import start_postgres

        server = start_postgres(durable=True)
        urls = [server.create_database("bench"), server.create_database("bench")]
    try:
        import psycopg

        with psycopg.connect(urls[0]) as conn:
            result["postgresql_settings"] = {
                name: conn.execute(f"SHOW {name}").fetchone()[0]  # noqa: S608
                for name in ("server_version", "fsync", "synchronous_commit")}
        store = open_session_store(urls[0])
        result["postgresql"] = run(store, envelopes, args.sessions, args.events)
        store.close()
        if args.pg_url:  # the same database: start the comparison run on fresh session ids
            envelopes = [e.model_copy(update={"session_id": "x" + e.session_id}) for e in envelopes]
        store = open_session_store(urls[1])
        result["postgresql_commit_per_message"] = run(store, envelopes, args.sessions, args.events, flush_each=True)
        store.close()
    finally:
        if server is not None:
            server.stop()
    result["ratio_postgresql_over_sqlite"] = round(
        result["postgresql"]["messages_per_s"] / result["sqlite"]["messages_per_s"], 2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
