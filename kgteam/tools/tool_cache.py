"""One question's memory of its read-only tool calls: the same call twice runs once.

Roles of a team ask the KG the same things within one question (the same label search from two
spans, the same schema query for two candidate paths, the same end set for the planner and the
answer check). A :class:`ToolCache` lives as long as one question (the runner makes one per run)
and is shared by every role's toolbox, so a repeated call, or one made while an identical call is
still running, waits for the first and gets its result. Only tools marked ``cacheable`` (the KG's
read-only tools) use it; a failed call is not kept, so asking again retries.

Tool results are read-only to their callers. The first caller gets the result itself (copying
every result cost a third of a question's CPU); each reuse gets its own deep copy, so a role that
edits a reused result cannot change what another role reads.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Awaitable, Callable
from typing import Any


def call_key(tool: str, arguments: dict[str, Any]) -> str:
    """The identity of a call: the tool and its validated arguments (argument order ignored)."""
    return json.dumps([tool, arguments], sort_keys=True, default=repr, ensure_ascii=False)


class ToolCache:
    """Results of one question's tool calls, by :func:`call_key`; ``calls`` ran, ``hits`` were reused."""

    def __init__(self) -> None:
        self._results: dict[str, asyncio.Future[Any]] = {}
        self.calls = 0
        self.hits = 0

    def __len__(self) -> int:
        return len(self._results)

    async def run(self, key: str, call: Callable[[], Awaitable[Any]]) -> Any:
        """The result of ``call`` for ``key``: run now, or reused (a copy) from an earlier or running call."""
        pending = self._results.get(key)
        if pending is not None:
            try:
                result = await asyncio.shield(pending)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not pending.cancelled() or (task is not None and task.cancelling()):
                    raise  # this caller itself was cancelled
                return await self.run(key, call)  # the first caller was: ask again ourselves
            self.hits += 1
            return copy.deepcopy(result)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._results[key] = future
        self.calls += 1
        try:
            result = await call()
        except BaseException as exc:
            self._results.pop(key, None)  # not kept: the next identical call runs again
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # retrieved: no "never retrieved" warning when nobody waited
            raise
        future.set_result(result)
        return result
