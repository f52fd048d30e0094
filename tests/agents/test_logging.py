"""structlog configured for JSON lines."""

import io
import json
import logging

import structlog

from kgteam.agents.logging import configure_logging


def test_json_logs_and_level_filter():
    out = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level, logging.getLogger("autogen_core").level)
    try:
        configure_logging("INFO", json=True, stream=out)
        log = structlog.get_logger("kgteam.test")
        log.debug("hidden")
        log.info("answered", session_id="s1", llm_calls=3)
        (line,) = out.getvalue().strip().splitlines()
        record = json.loads(line)
        assert record["event"] == "answered" and record["session_id"] == "s1" and record["level"] == "info"
        assert "timestamp" in record
        assert logging.getLogger("autogen_core").level == logging.WARNING
    finally:
        structlog.reset_defaults()
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.getLogger("autogen_core").setLevel(saved[2])
