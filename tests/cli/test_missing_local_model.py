"""Plain ``kgteam ask`` without the local extra: the error names every way on, not only the install line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.llm import local_server


def test_ask_without_llama_cpp_names_model_none_and_the_llm_variables(team_file, tmp_path, monkeypatch):
    for var in ("KGTEAM_LLM_BASE_URL", "KGTEAM_LLM_MODEL", "KGTEAM_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)  # nothing configured: the embedded model is the default
    monkeypatch.setattr(local_server, "llama_cpp_available", lambda: False)
    result = CliRunner().invoke(app, ["ask", "who directed Kismet", "--kg", "mini", "--db", str(tmp_path / "s.db")],
                                env={"COLUMNS": "400"})
    assert result.exit_code != 0
    said = " ".join(result.output.split())
    assert "llama-cpp-python is not installed" in said and "pip install 'kgteam[local]'" in said
    assert "--model none" in said
    assert all(v in said for v in ("KGTEAM_LLM_BASE_URL", "KGTEAM_LLM_MODEL", "KGTEAM_LLM_API_KEY"))
    assert "Traceback" not in result.output


def test_a_missing_model_package_names_the_same_ways_on(monkeypatch):
    monkeypatch.setattr(local_server, "SMOLLM2_PACKAGE", "kgteam_no_such_model_package")
    with pytest.raises(local_server.LocalServerError, match=r"--model none.*KGTEAM_LLM_BASE_URL"):
        local_server.smollm2_path()
