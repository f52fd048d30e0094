"""Load on one ``kgteam serve`` process, then ``kill -9`` mid-answer and a fresh server.

Load: ``--sessions`` clients at once, each creating a session and asking ``--questions`` questions
one after another over SSE, against a real server (scripted zero-latency model, the demo MetaQA
KG, the two-role test team of ``tests/serve/serve_roles.py``: the model names the film, label
search links it, one SPARQL query answers). Reported: errors, lost messages (every streamed
message must be in the SQLite store, in order: read from the file after the run), time to first
event (request sent -> first SSE event), question latency, throughput, answers checked against
the KB.

Kill: a session asks a long question ("slow 400": 400 persisted steps); after ``--kill-after``
streamed messages the server gets SIGKILL. Then: ``PRAGMA integrity_check``, every streamed
message is stored, a fresh server reports the turn ``interrupted``, and the session answers its
next question there.

    .venv/bin/python benchmarks/serve_load.py --sessions 200 --questions 3    # JSON on stdout

With ``--postgres`` (a throwaway PostgreSQL server, started as the tests start theirs) or
``--sessions-url postgresql://...`` the same load runs again on ``--workers`` serve processes
sharing that database, session ``i`` on worker ``i mod workers``; lost messages are then read
from the database. Both runs are reported side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import lzma
import os
import random
import re
import signal
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "serve"))

from serve_roles import TEAM, script_for  # noqa: E402
from served import ServerProcess, parse_sse  # noqa: E402

from kgteam.tools.kg import demo_kb_path, install_demo_kg  # noqa: E402


def pick_films(count: int, seed: int) -> dict[str, set[str]]:
    """Films of the demo KB with plain multi-word names (no name inside another), and their directors."""
    directors: dict[str, set[str]] = defaultdict(set)
    with lzma.open(demo_kb_path(), "rt", encoding="utf-8") as kb:
        for line in kb:
            s, p, o = line.rstrip("\n").split("|", 2)
            if p == "directed_by":
                directors[s].add(o)
    names = sorted(f for f in directors if re.fullmatch(r"[A-Z][a-z]+( [A-Z][a-z]+){1,3}", f))
    random.Random(seed).shuffle(names)
    chosen: list[str] = []
    for name in names:
        if not any(name in other or other in name for other in chosen):
            chosen.append(name)
        if len(chosen) == count:
            break
    return {name: directors[name] for name in chosen}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Connection:
    """A minimal HTTP/1.1 keep-alive client on asyncio streams: the load generator must cost little
    CPU beside the server (httpx's pure-Python parsing was slower than the server on 2 cores)."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: dict | None = None):
        """Yields (seconds since the request was sent, status, body chunk) for each chunk."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        payload = json.dumps(body).encode() if body is not None else b""
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\n\r\n").encode()
        started = time.perf_counter()
        self.writer.write(head + payload)
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        headers = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding") == "chunked":
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                data = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                yield time.perf_counter() - started, status, data[:-2]
        else:
            yield time.perf_counter() - started, status, await self.reader.readexactly(int(headers["content-length"]))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def one_session(url: str, films: list[str], questions: int, rng: random.Random, out: dict) -> None:
    host, port = url.removeprefix("http://").split(":")
    conn = Connection(host, int(port))
    try:
        async for _, status, data in conn.request("POST", "/v1/sessions", {}):
            if status != 201:
                raise RuntimeError(f"HTTP {status}: {data[:200]!r}")
            sid = json.loads(data)["id"]
    except Exception as exc:  # noqa: BLE001 - a benchmark counts every failure
        out["errors"].append(f"create: {type(exc).__name__}: {exc}")
        conn.close()
        return
    for index in range(questions):
        film = rng.choice(films)
        first = last = None
        body = b""
        try:
            async for at, status, data in conn.request("POST", f"/v1/sessions/{sid}/questions",
                                                       {"question": f"who directed {film}"}):
                if status != 200:
                    out["errors"].append(f"ask: HTTP {status}: {data[:200]!r}")
                    break
                first = at if first is None else first
                last = at
                body += data
            events = parse_sse(body.decode())
        except Exception as exc:  # noqa: BLE001
            out["errors"].append(f"ask: {type(exc).__name__}: {exc}")
            continue
        if first is None or not events or events[-1]["event"] != "done" or events[-1]["data"]["status"] != "done":
            out["errors"].append(f"ask: stream ended {events[-1] if events else 'empty'}")
            continue
        out["ttfe"].append(first)
        out["ttfe_by_index"][index].append(first)
        out["latency"].append(last)
        out["events"] += len(events)
        out["streamed"][sid] += [e["data"]["id"] for e in events if e["event"] == "message"]
        answer = next(e["data"] for e in events if e["event"] == "answer")
        out["answers"].append((film, {v["label"] for v in answer["values"]}))
    conn.close()


def stored_messages(db: Path) -> dict[str, list[str]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT session_id, envelope_id FROM messages ORDER BY session_id, turn, seq").fetchall()
    finally:
        conn.close()
    out: dict[str, list[str]] = defaultdict(list)
    for sid, env_id in rows:
        out[sid].append(env_id)
    return out


def stored_messages_postgres(url: str) -> dict[str, list[str]]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT session_id, envelope_id FROM messages ORDER BY session_id, turn, seq").fetchall()
    out: dict[str, list[str]] = defaultdict(list)
    for sid, env_id in rows:
        out[sid].append(env_id)
    return out


async def load(urls: list[str], films: dict[str, set[str]], sessions: int, questions: int, seed: int) -> dict:
    """Session ``i`` goes to worker ``i mod len(urls)``."""
    out: dict = {"errors": [], "latency": [], "ttfe": [], "events": 0, "streamed": defaultdict(list), "answers": [],
                 "ttfe_by_index": defaultdict(list)}
    started = time.perf_counter()
    await asyncio.gather(*(one_session(urls[i % len(urls)], list(films), questions, random.Random(seed + i), out)
                           for i in range(sessions)))
    out["seconds"] = time.perf_counter() - started
    return out


def kill_round(home: Path, db: Path, kill_after: int) -> dict:
    first = ServerProcess(home, db).wait_ready()
    seen: list[str] = []
    with httpx.Client(base_url=first.url, timeout=60) as http:
        sid = http.post("/v1/sessions").json()["id"]
        buffer = ""
        try:
            with http.stream("POST", f"/v1/sessions/{sid}/questions", json={"question": "slow 400"}) as response:
                for text in response.iter_text():
                    buffer += text
                    while "\n\n" in buffer:
                        block, buffer = buffer.split("\n\n", 1)
                        for event in parse_sse(block + "\n\n"):
                            if event["event"] == "message":
                                seen.append(event["data"]["id"])
                    if len(seen) >= kill_after and first.proc.poll() is None:
                        first.proc.send_signal(signal.SIGKILL)
        except httpx.HTTPError:
            pass
    first.stop()
    conn = sqlite3.connect(db)
    integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    conn.close()
    stored = stored_messages(db)[sid]
    second = ServerProcess(home, db).wait_ready()
    try:
        with httpx.Client(base_url=second.url, timeout=60) as http:
            status_after_kill = [t["status"] for t in http.get(f"/v1/sessions/{sid}").json()["turns"]]
            name = next(iter(json.loads((home / "script.json").read_text())["rules"]))["match"]
            events = parse_sse(http.post(f"/v1/sessions/{sid}/questions", json={"question": f"who directed {name}"}).text)
            status_after_resume = [t["status"] for t in http.get(f"/v1/sessions/{sid}").json()["turns"]]
    finally:
        second.stop()
    return {
        "streamed_before_kill": len(seen),
        "stored_after_kill": len(stored),
        "streamed_but_lost": len([m for m in seen if m not in set(stored)]),
        "stored_in_streamed_order": stored[:len(seen)] == seen,
        "integrity_check": integrity,
        "turn_status_after_kill": status_after_kill,
        "resumed_on_fresh_server": events[-1]["data"]["status"] if events else None,
        "turn_status_after_resume": status_after_resume,
    }


def summary(result: dict, stored: dict[str, list[str]], films: dict[str, set[str]], asked: int,
            exit_codes: list[int]) -> dict:
    streamed = result["streamed"]
    lost = sum(len([m for m in ids if m not in set(stored.get(sid, []))]) for sid, ids in streamed.items())
    out_of_order = sum(1 for sid, ids in streamed.items() if stored.get(sid, []) != ids)
    correct = sum(1 for film, labels in result["answers"] if labels == films[film])
    ttfe = result["ttfe"] or [float("nan")]
    latency = result["latency"] or [float("nan")]
    return {
        "questions": asked, "answered": len(result["answers"]), "correct_answers": correct,
        "errors": len(result["errors"]), "error_samples": result["errors"][:5],
        "messages_streamed": sum(len(v) for v in streamed.values()), "messages_lost": lost,
        "sessions_whose_store_differs_from_stream": out_of_order, "sse_events": result["events"],
        "time_to_first_event_ms": {"p50": round(percentile(ttfe, 0.5) * 1000, 1),
                                   "p95": round(percentile(ttfe, 0.95) * 1000, 1),
                                   "p99": round(percentile(ttfe, 0.99) * 1000, 1), "max": round(max(ttfe) * 1000, 1)},
        "time_to_first_event_ms_by_question": {  # the first questions all arrive at once
            f"question_{i + 1}": {"p50": round(percentile(v, 0.5) * 1000, 1), "p95": round(percentile(v, 0.95) * 1000, 1)}
            for i, v in sorted(result["ttfe_by_index"].items())},
        "question_latency_ms": {"p50": round(percentile(latency, 0.5) * 1000, 1),
                                "p95": round(percentile(latency, 0.95) * 1000, 1),
                                "mean": round(statistics.mean(latency) * 1000, 1)},
        "load_seconds": round(result["seconds"], 2),
        "throughput_questions_per_s": round(len(result["answers"]) / result["seconds"], 1),
        "throughput_events_per_s": round(result["events"] / result["seconds"], 1),
        "server_exit_codes_after_sigterm": exit_codes,
    }


def run_load(home: Path, sessions_target: Path | str, workers: int, env: dict[str, str], films: dict[str, set[str]],
             args: argparse.Namespace) -> tuple[dict, list[int]]:
    """``workers`` serve processes on one store (started side by side), the load spread over them."""
    servers = [ServerProcess(home, sessions_target, env=env, log=home / f"worker-{len(str(sessions_target))}-{i}.log")
               for i in range(workers)]
    try:
        for server in servers:
            server.wait_ready()
        result = asyncio.run(load([s.url for s in servers], films, args.sessions, args.questions, args.seed))
    finally:
        exit_codes = [server.stop() for server in servers]
    return result, exit_codes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--films", type=int, default=30)
    parser.add_argument("--kill-after", type=int, default=30)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--max-active", type=int, default=None, help="KGTEAM_MAX_ACTIVE (default: the server's)")
    parser.add_argument("--workers", type=int, default=2, help="serve processes sharing the PostgreSQL store")
    parser.add_argument("--sessions-url", default=None,
                        help="a postgresql:// database for the multi-worker run (its messages table must be empty)")
    parser.add_argument("--postgres", action="store_true",
                        help="also run --workers processes on a throwaway PostgreSQL server started here")
    parser.add_argument("--skip-sqlite", action="store_true", help="leave out the one-process SQLite run")
    args = parser.parse_args()
    films = pick_films(args.films, args.seed)
    asked = args.sessions * args.questions
    report: dict = {"sessions": args.sessions, "questions_per_session": args.questions, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        t0 = time.perf_counter()
        install_demo_kg(home, embed=False)
        report["demo_kg_install_s"] = round(time.perf_counter() - t0, 1)
        (home / "script.json").write_text(json.dumps(script_for(list(films))), encoding="utf-8")
        (home / "team.yaml").write_text(TEAM.format(script="script.json", kg="metaqa"), encoding="utf-8")
        env = {"KGTEAM_RATE_LIMIT": "0", "KGTEAM_MAX_RUNNING": "0", **({"KGTEAM_MAX_ACTIVE": str(args.max_active)}
                                                                     if args.max_active is not None else {})}
        if not args.skip_sqlite:
            db = home / "load.sqlite"
            result, codes = run_load(home, db, 1, env, films, args)
            report["sqlite_1_worker"] = summary(result, stored_messages(db), films, asked, codes)
        if args.postgres or args.sessions_url:
            server = None
            try:
                if args.sessions_url:
                    url = args.sessions_url
                else:
                    sys.path.insert(0, str(ROOT / "tests" / "sessions"))
                    from pg_server import start_postgres

                    server = start_postgres(durable=True)
                    url = server.create_database("load")
                result, codes = run_load(home, url, args.workers, env, films, args)
                report[f"postgres_{args.workers}_workers"] = summary(result, stored_messages_postgres(url), films,
                                                                     asked, codes)
            finally:
                if server is not None:
                    server.stop()
        if not args.skip_sqlite:
            report["kill_9"] = kill_round(home, home / "kill.sqlite", args.kill_after)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
