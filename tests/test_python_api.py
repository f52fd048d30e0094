"""docs/python.md runs as written, quietly, and the API's errors are clear."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "python.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def _printed() -> list[str]:
    """The lines the doc says its first example prints (the first ```text block)."""
    return re.findall(r"```text\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)[0].splitlines()


def test_the_documented_examples_run_and_print_only_their_output(tmp_path):
    shutil.copy(ROOT / "tests" / "data" / "orchard.ttl", tmp_path / "orchard.ttl")
    first, second = _blocks()
    (tmp_path / "first.py").write_text(first, encoding="utf-8")
    (tmp_path / "second.py").write_text(second, encoding="utf-8")
    out = subprocess.run([sys.executable, "first.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines == _printed(), "docs/python.md must show what its example prints"  # the confidence too
    assert lines[0].startswith("Bo Lark answered ")
    assert "Young Oak | tended by | Bo Lark" in lines[1]
    assert lines[2] == "0 LLM calls; stopped by done"
    assert lines[3].startswith("unknown guess:")
    assert len(lines) == 4  # quiet: no log lines on stdout
    out = subprocess.run([sys.executable, "second.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Ada Quill | history: 1")
    assert "user -> question" in out.stdout and out.stdout.rstrip().splitlines()[-1].split(" -> ")[1].startswith(
        "answer")


def test_ask_inside_a_running_loop_says_to_await(tmp_path):
    import asyncio

    from kgteam import Team
    from kgteam.tools.loading import build_kg

    build_kg([ROOT / "tests" / "data" / "orchard.ttl"], "orchard", home=tmp_path, progress=False, embed=False)
    with Team.default(kg="orchard", model="none", home=tmp_path) as team:
        async def inside() -> None:
            with pytest.raises(RuntimeError, match="await team.aask"):
                team.ask("who is the gardener of Old Elm")
            assert (await team.aask("who is the gardener of Old Elm")).text == "Ada Quill"

        asyncio.run(inside())
    with pytest.raises(ValueError, match="expected none, local"):
        Team.default(kg="orchard", model="gpt", home=tmp_path)
