"""``/v1/sessions``: create, list, read, delete; ask with streamed events; cancel; the trace."""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, Query, Response

from kgteam.serve.deps import Svc, Who
from kgteam.serve.schemas import (
    Cancelled,
    ErrorBody,
    NewQuestion,
    NewSession,
    SessionCreated,
    SessionDetail,
    SessionList,
)
from kgteam.serve.sse import KEEPALIVE, KEEPALIVE_S, frame, sse_response

router = APIRouter(prefix="/v1/sessions", tags=["sessions"])

NOT_FOUND = {404: {"model": ErrorBody, "description": "no such session (or another API key's)"}}
STREAM_DOC = {
    200: {"content": {"text/event-stream": {}},
          "description": "events `turn`, `message`, `tool_call`, `budget`, `answer`, `error`, then `done` (always last)"},
    409: {"model": ErrorBody, "description": "the session already has a question running"},
    **NOT_FOUND,
}


@router.post("", status_code=201, response_model=SessionCreated)
def create_session(who: Who, svc: Svc, body: NewSession | None = None) -> dict:
    return svc.create(who.owner, title=body.title if body else None)


@router.get("", response_model=SessionList)
def list_sessions(who: Who, svc: Svc, limit: int = Query(100, ge=1, le=1000)) -> dict:
    """The caller's sessions, most recently updated first."""
    return {"sessions": svc.list(who.owner, limit)}


@router.get("/{session_id}", response_model=SessionDetail, responses=NOT_FOUND)
def get_session(session_id: str, who: Who, svc: Svc) -> dict:
    return svc.detail(session_id, who.owner)


@router.delete("/{session_id}", status_code=204, responses=NOT_FOUND)
def delete_session(session_id: str, who: Who, svc: Svc) -> Response:
    svc.delete(session_id, who.owner)
    return Response(status_code=204)


@router.post("/{session_id}/questions", responses=STREAM_DOC, response_class=Response)
async def ask(session_id: str, body: NewQuestion, who: Who,
              svc: Svc) -> Response:
    """Ask in the session; the answer streams as server-sent events. The run goes on if the
    client disconnects (its answer is stored); ``/cancel`` stops it."""
    run = await svc.ask(session_id, who.owner, body.question)

    async def frames() -> AsyncIterator[str]:
        n = 0
        async for item in run.events(KEEPALIVE_S):
            if item is None:
                yield KEEPALIVE
                continue
            n += 1
            yield frame(*item, n)

    return sse_response(frames(), headers={"X-Session-Id": session_id})


@router.post("/{session_id}/cancel", response_model=Cancelled, responses=NOT_FOUND)
async def cancel(session_id: str, who: Who, svc: Svc) -> dict:
    """Stop the running question: its stream ends with ``done`` status ``cancelled``."""
    return {"cancelled": await svc.cancel(session_id, who.owner)}


@router.get("/{session_id}/trace", response_class=Response,
            responses={200: {"content": {"application/x-ndjson": {}}}, **NOT_FOUND})
def trace(session_id: str, who: Who, svc: Svc) -> Response:
    """Every persisted message and event of the session, one JSON object per line (as ``kgteam trace --jsonl``)."""
    return Response("".join(svc.trace_lines(session_id, who.owner)), media_type="application/x-ndjson")
