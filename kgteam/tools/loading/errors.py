"""The one error a load raises for bad input, always pointing at the file and line."""

from __future__ import annotations

from pathlib import Path

from kgteam.protocols.errors import KgteamError


class LoadError(KgteamError):
    """Bad input or an impossible load. ``str()`` reads ``file:line: problem`` (line when known)."""

    def __init__(self, problem: str, *, file: str | Path | None = None, line: int | None = None) -> None:
        self.problem = problem
        self.file = str(file) if file is not None else None
        self.line = line
        super().__init__(self.location_message())

    def location_message(self) -> str:
        where = self.file or ""
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        return f"{where}: {self.problem}" if where else self.problem
