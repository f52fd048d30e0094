"""How a command says it failed: one red line on stderr and an exit code, never a traceback."""

from __future__ import annotations

import typer

from kgteam.protocols.display import TEXT_CHARS, display_text


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``error: message`` and return the Exit to raise (``raise fail(...) from None``). The message
    often quotes input (a path, an IRI, a server's reply): it is shown as data, on one line."""
    typer.secho(f"error: {display_text(message, TEXT_CHARS)}", fg="red", err=True)
    return typer.Exit(code)
