"""The ASGI app: routes, limits, JSON errors, OpenAPI, and the web chat's static files at ``/``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from kgteam.serve import routes_catalog, routes_openai, routes_sessions
from kgteam.serve.access import Access
from kgteam.serve.body_limit import BodyLimit
from kgteam.serve.errors import install_error_handlers
from kgteam.serve.service import TeamService
from kgteam.serve.settings import ServeSettings

STATIC = Path(__file__).with_name("static")

NO_WEB_CHAT = """<!doctype html><meta charset="utf-8"><title>kgteam serve</title>
<p>kgteam serve is running. The web chat is not part of this build; the API is described at
<a href="/docs">/docs</a> (<a href="/openapi.json">OpenAPI</a>).</p>"""


def create_app(service: TeamService, settings: ServeSettings | None = None) -> FastAPI:
    """The app for one served team. Works without its lifespan (tests drive it in-process); the
    lifespan only stops running questions when the server shuts down."""
    from kgteam import __version__

    settings = settings or service.settings

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await service.runs.shutdown()

    app = FastAPI(title="kgteam", version=__version__, lifespan=lifespan,
                  description="Ask a team of LLM roles over a knowledge graph; every answer streams its "
                              "roles' messages, tool calls and budget use, and carries its evidence. "
                              "See docs/serve.md.")
    app.state.service = service
    app.state.access = Access(settings)
    install_error_handlers(app)
    app.include_router(routes_catalog.router)
    app.include_router(routes_sessions.router)
    app.include_router(routes_openai.router)
    if (STATIC / "index.html").is_file():
        app.mount("/", StaticFiles(directory=STATIC, html=True), name="web")
    else:
        @app.get("/", include_in_schema=False)
        def index() -> HTMLResponse:
            return HTMLResponse(NO_WEB_CHAT)
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes)
    return app
