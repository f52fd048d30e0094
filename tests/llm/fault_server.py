"""A real OpenAI-compatible chat server on 127.0.0.1 that misbehaves on purpose.

``FaultServer(mode)`` answers ``POST /v1/chat/completions`` the way a broken or overloaded
model server does: it hangs, drips its reply, sends an HTML page with status 200, a 500, a 429
with ``Retry-After``, malformed JSON, a completion with no choices, a truncated body, a reset
connection, the right JSON under the wrong content-type, a huge body, or a valid reply. The
model tests and ``benchmarks/model_faults.py`` drive kgteam's client against it over real HTTP.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = ("valid", "hang", "slow_drip", "html_200", "http_500", "429_retry_after", "malformed_json",
         "empty_choices", "truncated_body", "connection_reset", "wrong_content_type", "huge_body")
HUGE_BYTES = 9 * 1024 * 1024  # above the client's 8 MiB cap on a chat completion
HTML_PAGE = (b"<!DOCTYPE html><html><head><title>Sign in - Corporate Proxy</title></head>"
             b"<body><form>user <input name=u></form></body></html>")


def completion(text: str, *, choices: bool = True) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fault", "object": "chat.completion", "created": int(time.time()), "model": "fault-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
        if choices else [],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
    }


class FaultServer:
    """One mode for every request; ``reply`` is the assistant text of the well-formed replies."""

    def __init__(self, mode: str, reply: str = "ok", *, drip_s: float = 0.6, retry_after_s: float = 0.3):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; one of {MODES}")
        self.mode, self.reply, self.drip_s, self.retry_after_s = mode, reply, drip_s, retry_after_s
        self.requests = 0
        self._released = threading.Event()  # lets hanging handlers go when the server stops
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with owner._lock:
                    owner.requests += 1
                    n = owner.requests
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    owner._answer(self, n)

        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # ------------------------------------------------------------------ replies
    def _answer(self, h: BaseHTTPRequestHandler, n: int) -> None:
        mode = self.mode
        good = json.dumps(completion(self.reply)).encode()
        if mode == "valid":
            self._send(h, 200, good)
        elif mode == "hang":
            self._released.wait()  # no status line, no headers, nothing, until the server stops
        elif mode == "slow_drip":
            self._head(h, 200, len(good))
            pieces = 12
            for i in range(pieces):
                h.wfile.write(good[i * len(good) // pieces:(i + 1) * len(good) // pieces])
                h.wfile.flush()
                time.sleep(self.drip_s / pieces)
        elif mode == "html_200":
            self._send(h, 200, HTML_PAGE, "text/html; charset=utf-8")
        elif mode == "http_500":
            self._send(h, 500, json.dumps({"error": {"message": "CUDA out of memory", "type": "server_error"}}).encode())
        elif mode == "429_retry_after":
            if n == 1:
                self._send(h, 429, json.dumps({"error": {"message": "rate limited"}}).encode(),
                           headers={"Retry-After": f"{self.retry_after_s:g}"})
            else:
                self._send(h, 200, good)
        elif mode == "malformed_json":
            self._send(h, 200, b'{"id": "x", "choices": [{"message": {"content": "ok"}, }')
        elif mode == "empty_choices":
            self._send(h, 200, json.dumps(completion(self.reply, choices=False)).encode())
        elif mode == "truncated_body":
            self._head(h, 200, len(good))
            h.wfile.write(good[: len(good) // 3])
            h.wfile.flush()
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
        elif mode == "connection_reset":
            # SO_LINGER with a zero timeout: close() sends RST instead of FIN
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.close_connection = True
            h.connection.close()
        elif mode == "wrong_content_type":
            self._send(h, 200, good, "text/plain")
        elif mode == "huge_body":
            body = json.dumps(completion("x" * HUGE_BYTES)).encode()
            self._send(h, 200, body)

    @staticmethod
    def _head(h: BaseHTTPRequestHandler, status: int, length: int, ctype: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        h.send_response(status)
        h.send_header("content-type", ctype)
        h.send_header("content-length", str(length))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()

    def _send(self, h: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self._head(h, status, len(body), ctype, headers)
        h.wfile.write(body)
        h.wfile.flush()

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._released.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
