"""Server-sent events: the frames, and a streaming response that keeps idle connections alive."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi.responses import StreamingResponse

KEEPALIVE_S = 15.0
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


async def with_keepalive(frames: AsyncIterator[str], every_s: float = KEEPALIVE_S) -> AsyncIterator[str]:
    """``frames``, with a comment line after each ``every_s`` of silence (proxies drop idle streams)."""
    iterator = frames.__aiter__()
    pending: asyncio.Task[str] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(iterator.__anext__())
            done, _ = await asyncio.wait({pending}, timeout=every_s)
            if not done:
                yield ": keep-alive\n\n"
                continue
            try:
                item = pending.result()
            except StopAsyncIteration:
                return
            finally:
                pending = None
            yield item
    finally:
        if pending is not None:
            pending.cancel()


def sse_response(frames: AsyncIterator[str], headers: dict[str, str] | None = None) -> StreamingResponse:
    return StreamingResponse(with_keepalive(frames), media_type="text/event-stream",
                             headers={**HEADERS, **(headers or {})})
