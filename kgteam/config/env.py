"""``${ENV}`` references in team YAML: secrets and endpoints stay out of files checked into git."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from kgteam.protocols.errors import KgteamError

# ${NAME} or ${NAME:-default}; "$${" escapes a literal "${".
_REF = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class MissingEnvVar(KgteamError, KeyError):
    """An ``${NAME}`` reference without default whose variable is not set."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name

    def __str__(self) -> str:
        return f"environment variable {self.name!r} is not set (write ${{{self.name}:-default}} for a default)"


def has_env_refs(text: str) -> bool:
    return "${" in text


def expand_env(text: str, environ: Mapping[str, str] | None = None) -> str:
    """Replace every reference in ``text``; raise :class:`MissingEnvVar` for the first unset one."""
    env = os.environ if environ is None else environ

    def _sub(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise MissingEnvVar(name)
            return default
        return value

    return _REF.sub(_sub, text)
