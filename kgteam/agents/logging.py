"""structlog setup: JSON lines for machines (default), a console renderer for people."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog


def configure_logging(level: str | int = "INFO", json: bool = True, stream: TextIO | None = None) -> None:
    """Configure structlog and the stdlib root logger once per process.

    Logs go to stderr so stdout stays clean for answers and JSON output. AutoGen's own loggers
    are held at WARNING: at INFO they log every message they route.
    """
    numeric = logging.getLevelName(level.upper()) if isinstance(level, str) else int(level)
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    out = stream or sys.stderr
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=numeric, stream=out, format="%(message)s", force=True)
    for name in ("autogen_core", "autogen_agentchat", "autogen_core.events"):
        logging.getLogger(name).setLevel(max(numeric, logging.WARNING))


def quiet_by_default() -> None:
    """A library must not print: unless the host application configured structlog itself,
    kgteam's loggers stay silent below WARNING (and cost next to nothing on the hot path).
    ``configure_logging`` (the CLI's ``--log-level``) replaces this."""
    if structlog.is_configured():
        return
    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.dev.ConsoleRenderer(colors=False)],
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
