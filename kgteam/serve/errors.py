"""Every error as ``{"error": {"code", "message"}}`` with a proper status; never a traceback.

``type`` repeats the code so OpenAI clients, which read ``error.type``, show it too.
"""

from __future__ import annotations

import contextlib
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = structlog.get_logger("kgteam.serve")

_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
          409: "conflict", 413: "request_too_large", 415: "unsupported_media_type", 422: "invalid_request",
          429: "rate_limited", 503: "unavailable"}


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "type": code}}


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=status, headers=headers)


def _where(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p != "body"] or ["body"]
    return ".".join(parts)


def validation_message(exc: RequestValidationError) -> str:
    """``question: String should have at most 4000 characters`` — one clause per problem."""
    problems = []
    for err in exc.errors()[:5]:
        msg = str(err.get("msg", "invalid"))
        if err.get("type") == "json_invalid":
            problems.append("the body is not valid JSON")
        else:
            problems.append(f"{_where(tuple(err.get('loc', ())))}: {msg}")
    return "; ".join(problems) or "invalid request"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, "invalid_request", validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _CODES.get(exc.status_code, "error")
        message = str(exc.detail) if exc.detail else code.replace("_", " ")
        if exc.status_code == 404 and message == "Not Found":
            message = f"no such endpoint: {request.method} {request.url.path} (see /docs)"
        elif exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path} (see /docs)"
        return error_response(exc.status_code, code, message, dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        with contextlib.suppress(Exception):  # a broken log sink must not cost the client its JSON answer
            log.exception("request_failed", method=request.method, path=request.url.path)
        return error_response(500, "internal_error",
                              f"the server failed on {request.method} {request.url.path} "
                              f"({type(exc).__name__}); the server log has the details")
