"""The one error a load raises for bad input, always pointing at the file and line."""

from __future__ import annotations

from pathlib import Path

from kgteam.protocols.display import TEXT_CHARS, display_text
from kgteam.protocols.errors import KgteamError


class LoadError(KgteamError):
    """Bad input or an impossible load. ``str()`` reads ``file:line: problem`` (line when known), on one
    line: the problem often quotes the input (an IRI with ``\\u0001`` or a newline in it), shown as data."""

    def __init__(self, problem: str, *, file: str | Path | None = None, line: int | None = None) -> None:
        self.problem = display_text(problem, TEXT_CHARS)
        self.file = str(file) if file is not None else None
        self.line = line
        super().__init__(self.location_message())

    def location_message(self) -> str:
        where = self.file or ""
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        return display_text(f"{where}: {self.problem}", TEXT_CHARS) if where else self.problem
