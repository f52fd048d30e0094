"""Prompt templates shipped as text files, so wording can change without touching role code.

A template file holds a ``### system`` section and a ``### user`` section; ``{name}``
placeholders are filled with :func:`render`. Text that comes from the KG, the web or the user
goes through :func:`fence`, which marks it as data so a prompt-injection inside a label is quoted,
not obeyed.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from string import Formatter

from kgteam.llm.base import ChatMessage

_SECTION = re.compile(r"^### (system|user)\s*$", re.MULTILINE)


@lru_cache(maxsize=64)
def load_prompt(name: str) -> dict[str, str]:
    """``{"system": ..., "user": ...}`` for ``kgteam/prompts/<name>.txt``."""
    text = resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    parts = _SECTION.split(text)
    sections: dict[str, str] = {}
    for i in range(1, len(parts) - 1, 2):
        sections[parts[i]] = parts[i + 1].strip("\n")
    if "user" not in sections:
        raise ValueError(f"prompt {name!r} has no '### user' section")
    return sections


def placeholders(name: str) -> set[str]:
    """Names a template expects; tests use this to keep templates and roles in step."""
    found: set[str] = set()
    for body in load_prompt(name).values():
        found |= {field for _, field, _, _ in Formatter().parse(body) if field}
    return found


def render(name: str, **values: object) -> list[ChatMessage]:
    """Fill a template; a missing placeholder is a bug, so it raises ``KeyError``."""
    sections = load_prompt(name)
    messages: list[ChatMessage] = []
    if sections.get("system"):
        messages.append({"role": "system", "content": sections["system"].format(**values)})
    messages.append({"role": "user", "content": sections["user"].format(**values)})
    return messages


def fence(text: str, *, tag: str = "data") -> str:
    """Quote untrusted text (KG labels, documents, user history) between explicit markers."""
    cleaned = str(text).replace("<<<", "< < <").replace(">>>", "> > >")
    return f"<<<{tag}\n{cleaned}\n{tag}>>>"
