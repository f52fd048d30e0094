"""Server-sent events: the frames and the streaming response (``KEEPALIVE`` is sent after
``KEEPALIVE_S`` of silence: proxies drop idle streams)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi.responses import StreamingResponse

KEEPALIVE_S = 15.0
KEEPALIVE = ": keep-alive\n\n"
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"}


def frame(event: str | None, data: Any, event_id: int | None = None) -> str:
    """One SSE frame; ``data`` is JSON on one line (no newline can split it)."""
    lines = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    if event is not None:
        lines.append(f"event: {event}")
    lines.append("data: " + (data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)))
    return "\n".join(lines) + "\n\n"


def sse_response(frames: AsyncIterator[str], headers: dict[str, str] | None = None) -> StreamingResponse:
    return StreamingResponse(frames, media_type="text/event-stream",
                             headers={**HEADERS, **(headers or {})})
