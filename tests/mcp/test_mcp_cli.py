"""``kgteam mcp``'s own refusals: each said in one line, before any team is built."""

from __future__ import annotations

import socket
import sys

from typer.testing import CliRunner

from kgteam.cli.app import app

runner = CliRunner()


def test_without_the_sdk_the_message_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)  # what `import mcp` meets when the extra is not installed
    result = runner.invoke(app, ["mcp", "--model", "none"])
    assert result.exit_code == 2
    assert "pip install 'kgteam[mcp]'" in result.output and "Traceback" not in result.output


def test_an_unknown_transport_is_refused():
    result = runner.invoke(app, ["mcp", "--transport", "sse", "--model", "none"])
    assert result.exit_code == 2 and "use stdio or http" in result.output


def test_a_taken_port_is_said_at_once(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = runner.invoke(app, ["mcp", "--transport", "http", "--port", str(port), "--model", "none",
                                     "--home", str(tmp_path)])
    assert result.exit_code == 1 and f"port {port} on 127.0.0.1 is already in use" in result.output
    assert not (tmp_path / "kgs").exists()  # refused before the demo KG would be installed
