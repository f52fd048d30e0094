"""Architecture rules that keep the runtime swappable: checked on the source, not by convention."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "kgteam"

# layer -> kgteam layers it must not import (imports only point downwards)
FORBIDDEN = {
    "protocols": {"tools", "llm", "roles", "agents", "config", "cli", "server", "eval", "prompts"},
    "llm": {"tools", "roles", "agents", "config", "cli", "server", "eval"},
    "tools": {"llm", "roles", "agents", "config", "cli", "server", "eval"},
    "roles": {"agents", "config", "cli", "server", "eval"},
    "sessions": {"tools", "llm", "roles", "agents", "config", "cli", "server", "eval"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _modules():
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        yield (rel.parts[0] if len(rel.parts) > 1 else ""), path


def test_layers_only_import_downwards():
    violations = []
    for layer, path in _modules():
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] == "kgteam" and len(parts) > 1 and parts[1] in FORBIDDEN.get(layer, set()):
                violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not violations, violations


def test_only_agents_imports_autogen():
    offenders = [
        str(path.relative_to(PACKAGE))
        for layer, path in _modules()
        if layer != "agents" and any(n.split(".")[0].startswith("autogen") for n in _imports(path))
    ]
    assert not offenders, offenders
