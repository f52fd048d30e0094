"""How a command says it failed: one red line on stderr and an exit code, never a traceback."""

from __future__ import annotations

import typer


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``error: message`` and return the Exit to raise (``raise fail(...) from None``)."""
    typer.secho(f"error: {message}", fg="red", err=True)
    return typer.Exit(code)
