"""An OpenAI-compatible facade: ``POST /v1/chat/completions`` (streaming or not) and ``GET /v1/models``.

Any chat client can talk to the team: the model name is the team's name, the last user message
is the question. The session is the ``X-Session-Id`` header or the ``user`` field (created on
first use), else a new one; clients resend the whole conversation, but the team reads its
history from the session, so send the same session id for follow-ups. The answer's evidence,
cost and stop reason ride along in a ``kgteam`` field that OpenAI clients pass through.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from kgteam.protocols.display import TEXT_CHARS, display_text
from kgteam.protocols.payloads import Answer
from kgteam.serve.deps import Svc, Who
from kgteam.serve.errors import ApiError
from kgteam.serve.events import answer_json
from kgteam.serve.runs import QuestionRun, off_loop
from kgteam.serve.schemas import ChatCompletionRequest, ErrorBody, ModelList
from kgteam.serve.sse import KEEPALIVE, KEEPALIVE_S, frame, sse_response

router = APIRouter(prefix="/v1", tags=["openai"])
STARTED = int(time.time())


def _question(body: ChatCompletionRequest) -> str:
    for message in reversed(body.messages):
        if message.role != "user":
            continue
        content = message.content
        if isinstance(content, list):  # content parts: the text ones
            content = " ".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
        if content and content.strip():
            return content.strip()
    raise ApiError(400, "no_question", "messages: no user message with text (the last one is the question)")


def _usage(answer: Answer | None) -> dict[str, int]:
    cost = answer.cost if answer is not None else None
    prompt = cost.prompt_tokens if cost else 0
    completion = cost.completion_tokens if cost else 0
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _extension(run: QuestionRun) -> dict[str, Any]:
    return {"session": run.session_id, "turn": run.turn, "status": run.status,
            "answer": answer_json(run.answer) if run.answer is not None else None}


def _content(run: QuestionRun) -> str:
    if run.answer is not None:  # the chat's content: the answer's text, shown as data (KG labels)
        return display_text(run.answer.text, TEXT_CHARS)
    return "The question did not finish: the server stopped while it was running." if run.status == "interrupted" \
        else "The question failed on the server."


@router.get("/models", response_model=ModelList)
def models(who: Who, svc: Svc) -> dict:
    """The served team, as the one model."""
    return {"object": "list", "data": [{"id": svc.name, "object": "model", "created": STARTED, "owned_by": "kgteam"}]}


@router.post("/chat/completions", responses={404: {"model": ErrorBody}, 409: {"model": ErrorBody}})
async def chat_completions(body: ChatCompletionRequest, request: Request, who: Who,
                           svc: Svc) -> Response:
    if body.model not in (None, "", svc.name):
        raise ApiError(404, "model_not_found", f"no model {body.model!r}: this server serves the team {svc.name!r} "
                                               "(GET /v1/models)")
    question = _question(body)
    session_id = await off_loop(svc.store, svc.session_for_chat, request.headers.get("x-session-id") or body.user,
                                who.owner)
    run = await svc.ask(session_id, who.owner, question)
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    headers = {"X-Session-Id": session_id}
    if not body.stream:
        await run.done.wait()
        message = {"role": "assistant", "content": _content(run)}
        return JSONResponse({
            "id": completion_id, "object": "chat.completion", "created": created, "model": svc.name,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": _usage(run.answer), "kgteam": _extension(run),
        }, headers=headers)

    include_usage = bool(body.stream_options and body.stream_options.include_usage)

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        return frame(None, {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                            "model": svc.name, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                            **extra})

    async def frames() -> AsyncIterator[str]:
        yield chunk({"role": "assistant", "content": ""})
        async for item in run.events(KEEPALIVE_S):  # the roles' messages are not chat content
            if item is None:
                yield KEEPALIVE
        yield chunk({"content": _content(run)})
        yield chunk({}, "stop", kgteam=_extension(run))
        if include_usage:
            yield frame(None, {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                               "model": svc.name, "choices": [], "usage": _usage(run.answer)})
        yield frame(None, "[DONE]")

    return sse_response(frames(), headers=headers)
