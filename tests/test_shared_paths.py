"""Tests find the shared data in one place (tests/shared_paths.py): ``KGTEAM_DATA_DIR``, else
``<repo>/../shared/data``. A test that worked out the folder itself could look in another place
(``<repo>/shared/data``, the working directory) and pass or skip for a reason nobody sees."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import shared_paths

TESTS = Path(__file__).resolve().parent
# the tests of the product's own lookup (default_data_dir) may name it; nothing else may
ALLOWED = {"shared_paths.py", "test_shared_paths.py", "test_cli_eval_errors.py", "test_packaged_sample.py"}
COMPUTED = re.compile(r"""["']shared["']\s*/\s*["']data["']|/shared/data["']|default_data_dir\(\)|shared_data_dir\(""")


def test_no_test_computes_the_shared_data_folder_itself():
    offenders = [f"{p.relative_to(TESTS)}:{n}" for p in TESTS.rglob("*.py") if p.name not in ALLOWED
                 and "data" not in p.relative_to(TESTS).parts[:1]
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1) if COMPUTED.search(line)]
    assert not offenders, offenders


def test_the_one_place_is_the_env_var_else_beside_the_checkout(monkeypatch, tmp_path):
    try:
        monkeypatch.delenv("KGTEAM_DATA_DIR", raising=False)
        found = importlib.reload(shared_paths).SHARED_DATA
        assert found == TESTS.parent.parent / "shared" / "data"
        monkeypatch.setenv("KGTEAM_DATA_DIR", str(tmp_path))
        found = importlib.reload(shared_paths).SHARED_DATA
        assert found == tmp_path
    finally:
        monkeypatch.undo()
        importlib.reload(shared_paths)
