"""A KG replaced by `kgteam load` while open: run_sparql (a separate worker process that opens the
store by path) must never silently read the new KG while the other tools read the old one."""

from __future__ import annotations

import pytest

from kgteam.tools.kg import open_kg
from kgteam.tools.kg_tools import KGTools
from kgteam.tools.loading import build_kg
from kgteam.tools.types import ToolError

OLD = "Alpha|directed_by|Old Director\n"
NEW = "Alpha|directed_by|New Director\n"
QUERY = ("SELECT ?l WHERE { ?f <http://example.org/metaqa/r/directed_by> ?d . "
         "?d <http://www.w3.org/2000/01/rdf-schema#label> ?l }")


@pytest.fixture
def home(tmp_path):
    (tmp_path / "old.txt").write_text(OLD, encoding="utf-8")
    (tmp_path / "new.txt").write_text(NEW, encoding="utf-8")
    build_kg([tmp_path / "old.txt"], "swap", home=tmp_path, format="metaqa", progress=False)
    return tmp_path


async def _directors(tools: KGTools) -> list[str]:
    return [row["l"].value for row in (await tools.run_sparql(QUERY)).rows]


async def test_run_sparql_after_reload_is_an_error_not_the_new_kg(home):
    kg = open_kg("swap", home)
    tools = KGTools(kg.store, kg.labels)
    try:
        build_kg([home / "new.txt"], "swap", home=home, format="metaqa", progress=False)  # replaces it
        try:
            assert await _directors(tools) == ["Old Director"]  # consistent with the other tools
        except ToolError as exc:
            assert "replaced" in str(exc) and "reopen" in str(exc)
        neighbours = await tools.labels_for(["http://example.org/metaqa/e/Old_Director"])
        assert neighbours  # the other tools still read the old KG
    finally:
        tools.close()
    with open_kg("swap", home) as fresh:  # reopening gives the new KG everywhere
        again = KGTools(fresh.store, fresh.labels)
        try:
            assert await _directors(again) == ["New Director"]
        finally:
            again.close()


async def test_worker_started_before_reload_keeps_the_old_kg(home):
    kg = open_kg("swap", home)
    tools = KGTools(kg.store, kg.labels)
    try:
        assert await _directors(tools) == ["Old Director"]  # starts the worker on the old store
        build_kg([home / "new.txt"], "swap", home=home, format="metaqa", progress=False)
        assert await _directors(tools) == ["Old Director"]
    finally:
        tools.close()
