"""A stand-in for a hosted chat model: an OpenAI-compatible `/v1/chat/completions` on 127.0.0.1.

The web chat's tests need a run that is still going when the stop button is pressed, and no
real model runs here. This server answers every call at once with `{}` (which no role accepts,
so the deterministic scorers decide: the answers are the ones `--model none` gives, and the
answer lists the fallbacks), except calls whose conversation contains SLOW_MARKER: those wait
until the client goes away or `hold_s` passes, like a model that takes its time.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SLOW_MARKER = "slowly"


class StandInModel:
    def __init__(self, hold_s: float = 60.0):
        self.hold_s = hold_s
        self.calls = 0
        self.slow_calls = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802 - the stdlib's name
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
                model.calls += 1
                if SLOW_MARKER in text:
                    model.slow_calls += 1
                    self._hold()
                    return
                reply = {
                    "id": f"stand-in-{model.calls}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "stand-in"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": "{}"}}],
                    "usage": {"prompt_tokens": len(text) // 4, "completion_tokens": 1,
                              "total_tokens": len(text) // 4 + 1},
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _hold(self):
                """Wait without answering; stop early once the client has hung up."""
                self.connection.settimeout(0.2)
                deadline = time.monotonic() + model.hold_s
                while time.monotonic() < deadline:
                    try:
                        if self.connection.recv(1) == b"":
                            return  # the client closed the connection: the call was cancelled
                    except TimeoutError:
                        continue
                    except OSError:
                        return
                self.send_error(504, "stand-in model held the call too long")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> StandInModel:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
