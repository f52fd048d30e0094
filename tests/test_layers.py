"""Architecture rules that keep the runtime swappable: checked on the source, not by convention."""

import ast
import functools
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


@functools.cache
def _tree(path: Path) -> ast.Module:
    """Each source file parsed once for all the rules below (parsing is most of their time)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _imported_modules(path: Path) -> set[str]:
    """Every module a file names, relative imports resolved and ``from a import b`` also read as
    ``a.b`` (b may be a submodule), at any depth of the file (imports inside functions count)."""
    package = ["kgteam", *path.relative_to(PACKAGE).parent.parts]
    names: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
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


PLAYBOOKS = sorted(p.parent.name for p in (PACKAGE / "roles").glob("*/playbook.yaml"))


def test_the_playbooks_are_found():
    assert {"triad", "kerag", "r3", "adaptive"} <= set(PLAYBOOKS)


def test_no_playbook_imports_another_playbook():
    """Playbooks share code through the semantic layer (``roles/semantic``) and the role base, never
    through each other: R3 or adaptive RAG reaching into ``roles/kerag`` ties them to KERAG's
    internals. (Adaptive RAG runs a KG sub-team by playbook name, through the team builder.)"""
    violations = []
    for playbook in PLAYBOOKS:
        for path in (PACKAGE / "roles" / playbook).rglob("*.py"):
            for name in _imported_modules(path):
                parts = name.split(".")
                if parts[:2] == ["kgteam", "roles"] and len(parts) > 2 and parts[2] in PLAYBOOKS and parts[2] != playbook:
                    violations.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not violations, violations
