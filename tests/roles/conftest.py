"""Real small KGs for the role tests: a hand-written MetaQA-format KB and the bundled demo KG."""

from __future__ import annotations

import pytest
from roles_helpers import SMALL_KB

from kgteam.tools.kg_tools import KGTools


@pytest.fixture(scope="session")
def small_tools(tmp_path_factory: pytest.TempPathFactory) -> KGTools:
    from kgteam.tools.kg import open_kg
    from kgteam.tools.loading.builder import build_kg

    home = tmp_path_factory.mktemp("roles_kg_home")
    src = home / "small_kb.txt"
    src.write_text(SMALL_KB, encoding="utf-8")
    build_kg([src], "small", home=home, format="metaqa", progress=False)
    tools = KGTools.from_kg(open_kg("small", home=home))
    yield tools
    tools.close()


@pytest.fixture(scope="session")
def demo_tools(demo_kg_home) -> KGTools:
    """The bundled MetaQA demo KG (installed once per run, shared with tests/tools)."""
    from kgteam.tools.kg import DEMO_KG_NAME, open_kg

    tools = KGTools.from_kg(open_kg(DEMO_KG_NAME, home=demo_kg_home))
    yield tools
    tools.close()


@pytest.fixture(scope="session")
def isles_home(tmp_path_factory: pytest.TempPathFactory):
    """A home holding the isles KG (tests/data/kgs/isles), built once per session."""
    from pathlib import Path

    from kgteam.tools.loading.builder import build_kg

    home = tmp_path_factory.mktemp("isles_home")
    build_kg([Path(__file__).resolve().parents[1] / "data" / "kgs" / "isles" / "isles.ttl"], "isles", home=home,
             progress=False)
    return home
