"""``kgteam kg add NAME FILE``: write reviewed triples (from ``kgteam ask --proposals``) into a KG."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kgteam.cli.errors import fail

kg_app = typer.Typer(help="Change an installed KG by hand (only ever from a file a person reviewed).",
                     no_args_is_help=True)


@kg_app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="the installed KG (see `kgteam list`)")],
    file: Annotated[Path, typer.Argument(help="reviewed triples, one JSON object per line (`kgteam ask --proposals`)")],
    home: Annotated[Path | None, typer.Option("--home", help="kgteam home (default $KGTEAM_HOME or ~/.kgteam)")] = None,
) -> None:
    """Add the triples of a reviewed file to a KG. Every line is checked first; a bad line changes nothing."""
    from kgteam.tools.loading.additions import add_reviewed_triples
    from kgteam.tools.loading.errors import LoadError

    console = Console(highlight=False)
    try:
        report = add_reviewed_triples(name, file, home=home)
    except LoadError as exc:
        raise fail(str(exc)) from None
    console.print(f"added {report.added} triple(s) to {name}"
                  + (f" ({report.already} already there)" if report.already else "")
                  + (f"; new entities: {', '.join(report.new_entities)}" if report.new_entities else ""))
    console.print(f"[dim]the file is kept as {report.kept_as}[/]")


def register(app: typer.Typer) -> None:
    app.add_typer(kg_app, name="kg")
