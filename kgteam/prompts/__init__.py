"""Prompt templates shipped as text files, so wording can change without touching role code.

A template file holds a ``### system`` section and a ``### user`` section; ``{name}``
placeholders are filled by :meth:`PromptTemplate.render`. A role's templates live in a
``prompts/`` folder of the role's own package (so a plugin role ships its prompts beside its
code); templates shared by the package itself (the eval judge) live here. Text that comes from
the KG, the web or the user goes through :func:`fence` (``kgteam.llm.fencing``), which marks it
as data so an instruction inside a label is quoted, not obeyed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from string import Formatter

from kgteam.llm.base import ChatMessage
from kgteam.llm.fencing import fence, one_line
from kgteam.protocols.errors import KgteamError

_SECTION = re.compile(r"^### (system|user)\s*$", re.MULTILINE)
PROMPT_FOLDER = "prompts"
__all__ = ["PromptNotFound", "PromptTemplate", "fence", "load_prompt", "load_template", "one_line", "render"]


class PromptNotFound(KgteamError, LookupError):
    """A role names a template that is not shipped beside it."""


@dataclass(frozen=True)
class PromptTemplate:
    """One template: ``{"system": ..., "user": ...}`` sections read from a ``.txt`` file."""

    name: str
    sections: tuple[tuple[str, str], ...]
    source: str  # where it was read from, for error messages

    @classmethod
    def parse(cls, name: str, text: str, source: str) -> PromptTemplate:
        parts = _SECTION.split(text)
        sections: dict[str, str] = {}
        for i in range(1, len(parts) - 1, 2):
            sections[parts[i]] = parts[i + 1].strip("\n")
        if "user" not in sections:
            raise PromptNotFound(f"prompt {name!r} ({source}) has no '### user' section")
        return cls(name, tuple(sections.items()), source)

    @property
    def placeholders(self) -> set[str]:
        """Names the template expects; tests keep templates and roles in step with it."""
        found: set[str] = set()
        for _, body in self.sections:
            found |= {f for _, f, _, _ in Formatter().parse(body) if f}
        return found

    def render(self, **values: object) -> list[ChatMessage]:
        """Fill the template; a missing placeholder is a bug, so it raises ``KeyError``."""
        sections = dict(self.sections)
        messages: list[ChatMessage] = []
        if sections.get("system"):
            messages.append({"role": "system", "content": sections["system"].format(**values)})
        messages.append({"role": "user", "content": sections["user"].format(**values)})
        return messages


@lru_cache(maxsize=256)
def load_template(package: str, name: str) -> PromptTemplate:
    """``<package>/prompts/<name>.txt`` (or ``<package>/<name>.txt`` for this package's own)."""
    root = resources.files(package)
    for candidate in (root.joinpath(PROMPT_FOLDER, f"{name}.txt"), root.joinpath(f"{name}.txt")):
        if candidate.is_file():
            return PromptTemplate.parse(name, candidate.read_text(encoding="utf-8"), f"{package}:{candidate.name}")
    raise PromptNotFound(f"no prompt template {name!r} in package {package!r} (looked in {PROMPT_FOLDER}/)")


def load_prompt(name: str) -> dict[str, str]:
    """Sections of one of this package's shared templates (e.g. the eval judge)."""
    return dict(load_template(__package__, name).sections)


def render(name: str, **values: object) -> list[ChatMessage]:
    """Fill one of this package's shared templates."""
    return load_template(__package__, name).render(**values)
