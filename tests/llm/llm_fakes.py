"""A tiny real OpenAI-compatible chat server on 127.0.0.1 that answers from a script.

Each queued step is a status code, a JSON body (or a chat reply text), optional headers and an
optional delay, so retry, timeout and permanent-error paths run over real HTTP through the
``openai`` client. Every request body is recorded for assertions.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Step:
    status: int = 200
    text: str | None = "ok"
    body: dict[str, Any] | str | None = None  # overrides the chat completion built from ``text``
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    usage: bool = True


def completion_body(text: str, *, usage: bool = True, model: str = "fake-model") -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    return body


class FakeOpenAIServer:
    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.default = Step()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}, {})
                else:
                    self._send(404, {"error": {"message": "not found"}}, {})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    payload = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    payload = {"_raw": raw.decode(errors="replace")}
                with owner._lock:
                    owner.requests.append(payload)
                    owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                    step = owner.steps.pop(0) if owner.steps else owner.default
                if step.delay_s:
                    time.sleep(step.delay_s)
                body: Any = step.body
                if body is None:
                    if step.status == 200:
                        body = completion_body(step.text or "", usage=step.usage)
                    else:
                        body = {"error": {"message": f"scripted error {step.status}", "type": "test"}}
                # the client may have given up (timeout test)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._send(step.status, body, step.headers)

            def _send(self, status: int, body: Any, headers: dict[str, str]) -> None:
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *steps: Step) -> FakeOpenAIServer:
        self.steps.extend(steps)
        return self

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
