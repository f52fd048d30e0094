"""``kgteam roles``: each role described by its own docstring and its real settings, and the
settings tables in docs/roles.md equal to what the code says."""

from __future__ import annotations

import inspect
import json
import re
import sys
from pathlib import Path

from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.config import registry
from kgteam.config.role_settings import settings_markdown

ROOT = Path(__file__).resolve().parents[2]


def _roles_json() -> list[dict]:
    """The roles that load here (an installed entry point whose module is absent is listed with its error)."""
    result = CliRunner().invoke(app, ["roles", "--json"])
    assert result.exit_code == 0, result.output
    return [r for r in json.loads(result.output) if not r["error"]]


def test_each_role_has_its_own_docstring():
    roles = {r["name"]: r for r in _roles_json()}
    assert {"generalist", "decision_maker", "advisor", "contextualizer"} <= set(roles)
    for name, role in roles.items():
        cls = registry.role_class(name)
        doc = cls.__dict__.get("__doc__") or sys.modules[cls.__module__].__doc__  # the role's module is the role
        assert role["doc"] == inspect.cleandoc(doc).split("\n\n")[0].replace("\n", " "), name
    assert len({r["doc"] for r in roles.values()}) == len(roles)  # not one shared base-class doc


def test_settings_carry_type_default_and_range_from_the_settings_model():
    roles = {r["name"]: r for r in _roles_json()}
    for name, role in roles.items():
        model = registry.role_class(name).settings_model
        assert set(role["settings"]) == set(model.model_fields), name
    generalist = roles["generalist"]["settings"]
    field = registry.role_class("generalist").settings_model.model_fields["max_repairs"]
    assert generalist["max_repairs"]["type"] == "int"
    assert generalist["max_repairs"]["default"] == field.default
    assert generalist["max_repairs"]["range"] == "≥ 0, ≤ 3"
    assert generalist["use_model"]["type"] == "bool"
    nested = generalist["semantic"]
    assert nested["type"] == "SemanticSettings" and "scoring" in nested["settings"]
    assert nested["settings"]["scoring"]["settings"]["temperature"]["range"] == "> 0"


def test_docs_roles_md_lists_every_builtin_roles_settings_as_the_code_has_them():
    text = (ROOT / "docs" / "roles.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- role-settings:begin[^\n]*-->\n(.*?)<!-- role-settings:end -->", text, re.S)
    assert block, "docs/roles.md lost its generated settings block"
    expected = settings_markdown(registry.role_settings_models(package="kgteam"))
    assert block.group(1) == expected, "regenerate with: kgteam roles --markdown"


def test_markdown_output_covers_every_installed_role():
    result = CliRunner().invoke(app, ["roles", "--markdown"])
    assert result.exit_code == 0
    assert result.output == settings_markdown(registry.role_settings_models())  # plugins too
    assert "| `k_entities` | int | `2` | ≥ 1, ≤ 10 |" in result.output
