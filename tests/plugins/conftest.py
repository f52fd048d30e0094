"""Installs the example plugin with pip, like a user would, into a folder of its own that only this test
process (and the commands it starts) can see.

It never goes into the shared venv: the other xdist worker builds teams at the same time, and every team
loads each installed tool, so a plugin half-installed there broke unrelated tests."""

from __future__ import annotations

import os
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
    work = tmp_path_factory.mktemp("plugin")
    src = work / PLUGIN_DIR.name
    site = work / "site"
    shutil.copytree(PLUGIN_DIR, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    done = _pip("install", "--no-deps", "--no-build-isolation", "--no-index", "-q", "--target", str(site), str(src))
    if done.returncode != 0:
        if "bdist_wheel" in done.stderr:
            pytest.skip("the venv cannot build wheels offline (pip install wheel)")
        pytest.fail(f"pip install failed:\n{done.stdout}\n{done.stderr}")
    old_path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), old_path) if p)
    sys.path.insert(0, str(site))
    registry.refresh()
    try:
        yield src
    finally:
        sys.path.remove(str(site))
        if old_path is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_path
        for name in [m for m in sys.modules if m == "kgteam_answer_formatter" or m.startswith("kgteam_answer_formatter.")]:
            sys.modules.pop(name)
        registry.refresh()
