"""The web chat's files, without a browser: shipped in the package, self-contained, no HTML sinks."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STATIC = REPO / "kgteam" / "serve" / "static"
FILES = sorted(p for p in STATIC.rglob("*") if p.is_file())


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """setuptools' package-data globs: '*' stays inside one folder, '**/' spans any number of them."""
    out = ""
    for part in re.split(r"(\*\*/|\*|\?)", pattern):
        out += {"**/": "(?:.*/)?", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part))
    return re.compile(out + r"\Z")


def test_every_static_file_is_package_data():
    """A non-editable install carries the chat: each file matches a package-data pattern of `kgteam`."""
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["kgteam"]
    assert {p.name for p in FILES} >= {"index.html", "app.js", "style.css"}
    assert _glob_regex("serve/static/**/*").match("serve/static/app.js")
    assert not _glob_regex("serve/*").match("serve/static/app.js")
    for path in FILES:
        rel = path.relative_to(REPO / "kgteam").as_posix()
        assert any(_glob_regex(p).match(rel) for p in patterns), f"{rel} is not in [tool.setuptools.package-data] kgteam"


def test_modules_never_parse_data_as_html():
    """Text goes in with textContent / text nodes; these sinks would turn a KG label into markup."""
    sinks = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(|"
                       r"createContextualFragment|srcdoc")
    for path in FILES:
        if path.suffix in (".js", ".html"):
            hits = [f"{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
                    if sinks.search(line)]
            assert not hits, f"{path.name} uses an HTML sink: {hits}"


def test_nothing_is_fetched_from_elsewhere():
    """No CDN, no remote font: every script, style and import is one of the shipped files."""
    names = {p.name for p in FILES}
    for path in FILES:
        text = path.read_text()
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), f"{path.name} loads a remote file"
        assert not re.search(r"@import\s+url\(", text), f"{path.name} imports remote CSS"
        for target in re.findall(r"""(?:from|import)\s+["']\./([\w.-]+)["']""", text):
            assert target in names, f"{path.name} imports {target}, which is not shipped"
    html = (STATIC / "index.html").read_text()
    assert "<script>" not in html and " style=" not in html  # nothing inline: the page's CSP forbids it
    assert "script-src 'self'" in html
