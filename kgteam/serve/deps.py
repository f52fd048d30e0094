"""FastAPI dependencies: the service the app serves, and the checked caller of a request."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from kgteam.serve.access import Caller
from kgteam.serve.service import TeamService


async def service(request: Request) -> TeamService:  # async: no thread hop
    return request.app.state.service  # type: ignore[no-any-return]


async def caller(request: Request) -> Caller:
    """Authenticated and within its rate limit (else 401 / 429)."""
    return request.app.state.access.caller(request)  # type: ignore[no-any-return]


Who = Annotated[Caller, Depends(caller)]
Svc = Annotated[TeamService, Depends(service)]
