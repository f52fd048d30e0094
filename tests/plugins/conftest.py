"""Installs the example plugin into the venv for the module (pip, like a user would) and removes it after."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kgteam.config import registry

PLUGIN_DIR = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "kgteam-answer-formatter"
DIST = "kgteam-answer-formatter"


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory):
    if _pip("show", DIST).returncode == 0:
        pytest.skip(f"{DIST} is already installed in this environment; not touching it")
    src = tmp_path_factory.mktemp("plugin") / PLUGIN_DIR.name
    shutil.copytree(PLUGIN_DIR, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    done = _pip("install", "--no-deps", "--no-build-isolation", "--no-index", "-q", str(src))
    if done.returncode != 0:
        if "bdist_wheel" in done.stderr:
            pytest.skip("the venv cannot build wheels offline (pip install wheel)")
        pytest.fail(f"pip install failed:\n{done.stdout}\n{done.stderr}")
    registry.refresh()
    try:
        yield src
    finally:
        _pip("uninstall", "-y", "-q", DIST)
        sys.modules.pop("kgteam_answer_formatter", None)
        registry.refresh()
