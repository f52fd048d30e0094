"""A real ``kgteam serve`` for tests and benchmarks, and an SSE parser."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve_roles  # noqa: E402


def app_client(service: Any, key: str | None = None, **settings: Any) -> httpx.AsyncClient:
    """An httpx client on the ASGI app in-process (no socket); ``settings`` are ``ServeSettings``."""
    from kgteam.serve import ServeSettings, create_app

    app = create_app(service, ServeSettings(**settings))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(transport=transport, base_url="http://kgteam.test", headers=headers, timeout=30)


def parse_sse(text: str) -> list[dict[str, Any]]:
    """``[{"id": 1, "event": "turn", "data": {...}}, ...]``; keep-alive comments skipped."""
    events = []
    for block in text.split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.splitlines():
            if line.startswith(":"):
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        if "data" in fields:
            data = fields["data"]
            events.append({"id": int(fields["id"]) if "id" in fields else None, "event": fields.get("event"),
                           "data": data if data == "[DONE]" else json.loads(data)})
    return events


def sse_events(response: httpx.Response) -> Iterator[tuple[float, dict[str, Any]]]:
    """Parse SSE frames as they arrive: (seconds since the request, event)."""
    import time

    started = time.monotonic()
    buffer = ""
    for text in response.iter_text():
        buffer += text
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            for event in parse_sse(block + "\n\n"):
                yield time.monotonic() - started, event


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """A real ``kgteam serve`` (with the test roles) on a free port; stopped by PID."""

    def __init__(self, home: Path, sessions: Path | str, env: dict[str, str] | None = None, port: int | None = None,
                 log: Path | None = None):
        """``sessions``: a SQLite file (the log goes beside it) or a store URL (then ``log`` is needed)."""
        import os
        import subprocess

        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        if log is None and not isinstance(sessions, Path):
            raise ValueError("a store URL needs a log path")
        self.log = log or Path(sessions).with_suffix(f".{self.port}.log")
        self._out = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(serve_roles.__file__)), "serve", "--team", str(home / "team.yaml"),
             "--port", str(self.port), "--sessions", str(sessions), "--home", str(home)],
            stdout=self._out, stderr=subprocess.STDOUT, cwd=home,
            env={**os.environ, "KGTEAM_HOME": str(home), "PYTHONUNBUFFERED": "1", **(env or {})})

    def wait_ready(self, timeout: float = 60) -> ServerProcess:
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"kgteam serve exited with {self.proc.returncode}: {self.log.read_text()}")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"kgteam serve did not come up: {self.log.read_text()}")

    def stop(self, sig: int | None = None) -> int:
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(sig or signal.SIGTERM)
        try:
            return self.proc.wait(timeout=20)
        finally:
            self._out.close()
