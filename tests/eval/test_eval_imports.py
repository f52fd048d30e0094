"""The eval modules import each other without a circle: every import counts, also one inside a
function, since a function-level import is how a circle hides until the wrong module is loaded first."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

EVAL = Path(__file__).resolve().parents[2] / "kgteam" / "eval"


def _eval_imports(path: Path) -> set[str]:
    """The ``kgteam.eval`` modules one file imports, at any depth of the file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kgteam.eval."):
            found.add(node.module.removeprefix("kgteam.eval."))
        elif isinstance(node, ast.ImportFrom) and node.module == "kgteam.eval":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("kgteam.eval.") for a in node.names if a.name.startswith("kgteam.eval.")}
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle in ``graph`` (as the list of modules round it), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_checker_finds_a_circle_through_a_function_level_import(tmp_path):
    (tmp_path / "a.py").write_text("from kgteam.eval.b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from kgteam.eval.a import y\n")
    graph = {p.stem: _eval_imports(p) for p in tmp_path.glob("*.py")}
    assert _cycle(graph) == ["a", "b", "a"]


def test_the_eval_package_has_no_import_circle():
    graph = {p.stem: _eval_imports(p) for p in EVAL.glob("*.py")}
    assert {"items", "metrics"} <= graph["datasets"]  # the scanner sees the imports
    assert "datasets" not in graph["metrics"] and "datasets" not in graph["claims"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


@pytest.mark.parametrize("first", ["claims", "datasets", "metrics"])
def test_each_module_imports_first_in_a_fresh_interpreter(first):
    """Loaded first, each module brings up the others it needs without a half-initialised module."""
    code = (f"import kgteam.eval.{first}\n"
            "from kgteam.eval.claims import load_claims\n"
            "from kgteam.eval.datasets import DatasetItem, load_dataset, typed_golds\n"
            "from kgteam.eval.metrics import normalize\n"
            "from kgteam.eval.items import GoldAnswer\n"
            "assert typed_golds([GoldAnswer(label='3')], 'number', 'x')[0].datatype.endswith('decimal')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=EVAL.parents[1])
    assert done.returncode == 0, done.stderr
