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


async def test_each_question_logs_start_and_outcome_with_cost():
    from agents_playbook import Exploder, any_reply_model

    from kgteam.agents.team import TeamRunner
    from kgteam.protocols.routes import Route

    team = TeamRunner(roles={"exploder": Exploder()}, routes=[Route(kind="question", to=["exploder"])],
                      model=any_reply_model(), tools=None)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))  # as --log-level INFO
    try:
        with structlog.testing.capture_logs() as logs:
            answer = await team.ask("boom?", session_id="log-s1")
    finally:
        structlog.reset_defaults()
    started = [e for e in logs if e["event"] == "question_started"]
    finished = [e for e in logs if e["event"] == "question_finished"]
    assert started and started[0]["session_id"] == "log-s1" and started[0]["question"] == "boom?"
    assert finished and finished[0]["status"] == answer.status == "error"
    assert finished[0]["stopped_by"] == "error" and "kaboom" in finished[0]["error"]
    assert {"llm_calls", "tokens", "seconds"} <= finished[0].keys()


def test_library_is_quiet_unless_configured(capsys):
    from kgteam.agents.logging import quiet_by_default

    structlog.reset_defaults()
    try:
        quiet_by_default()
        log = structlog.get_logger("kgteam.test")
        log.debug("hidden")
        log.info("hidden too")
        log.warning("shown")
        captured = capsys.readouterr()
        assert captured.out == "" and "hidden" not in captured.err and "shown" in captured.err
        configure_logging("DEBUG", json=True, stream=io.StringIO())  # an explicit setting wins
        quiet_by_default()
        assert structlog.get_config()["wrapper_class"] is not None
    finally:
        structlog.reset_defaults()
