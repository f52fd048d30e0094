"""``kgteam ask`` against a misbehaving model server: a hang or an HTML page ends with exit 1 and
a message that names the model, once; never exit 0 with a silent "I don't know", never a traceback."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fault_server import FaultServer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mini_team import MINI_GRAPH  # noqa: E402

runner = CliRunner()
WIDE = {"COLUMNS": "400"}  # one panel line per message, so counting a message's repeats is exact

TEAM = """\
name: faulty
model:
  provider: openai
  model: fault-model
  base_url: {base_url}
  timeout_s: {model_timeout}
  max_retries: 0
""" + MINI_GRAPH.replace("{", "{{").replace("}", "}}") + """\
budgets:
  timeout_s: {run_timeout}
"""


def ask(tmp_path: Path, server: FaultServer, *, model_timeout: float, run_timeout: float) -> tuple[int, str]:
    team = tmp_path / "faulty.yaml"
    team.write_text(TEAM.format(base_url=server.base_url, model_timeout=model_timeout, run_timeout=run_timeout),
                    encoding="utf-8")
    result = runner.invoke(app, ["ask", "who directed Kismet", "--team", str(team),
                                 "--db", str(tmp_path / "s.sqlite")], env=WIDE)
    assert "Traceback" not in result.output
    return result.exit_code, result.output


@pytest.fixture
def mini_home(team_file: Path) -> Path:  # team_file points KGTEAM_HOME at the six-triple KG "mini"
    return team_file.parent


def test_a_model_that_hangs_past_its_timeout_is_an_error_naming_it_once(mini_home, tmp_path):
    with FaultServer("hang") as server:
        started = time.monotonic()
        code, out = ask(tmp_path, server, model_timeout=0.5, run_timeout=30)
    assert time.monotonic() - started < 10
    assert code == 1, out
    said = f"the model 'fault-model' at {server.base_url} did not answer within 0.5 s"
    assert out.count(said) == 1, out  # in the answer text, not repeated on an "error:" line
    assert "I don't know" not in out


def test_a_model_still_silent_when_the_run_budget_ends_is_named_not_an_i_dont_know(mini_home, tmp_path):
    with FaultServer("hang") as server:
        started = time.monotonic()
        code, out = ask(tmp_path, server, model_timeout=60, run_timeout=1.5)
    assert time.monotonic() - started < 10
    assert code == 1, out
    assert f"the model 'fault-model' at {server.base_url} did not answer role 't_linker' within" in out
    assert "timeout_s=1.5 s" in out and "stopped by: timeout_s" in out
    assert "I don't know" not in out


def test_an_html_page_with_status_200_is_named_as_such(mini_home, tmp_path):
    with FaultServer("html_200") as server:
        code, out = ask(tmp_path, server, model_timeout=5, run_timeout=30)
    assert code == 1, out
    assert out.count("returned an HTML page titled 'Sign in - Corporate Proxy'") == 1, out
    assert "no choices" not in out


def test_a_valid_server_answers(mini_home, tmp_path):
    with FaultServer("valid", reply=json.dumps({"mention": "Kismet"})) as server:
        code, out = ask(tmp_path, server, model_timeout=5, run_timeout=30)
    assert code == 0, out
    assert "William Dieterle" in out
