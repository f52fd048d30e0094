"""``kgteam datasets list`` and ``kgteam datasets get NAME``: the public KGQA sets, fetched from their
public sources into ``<home>/datasets``, where ``kgteam eval`` finds them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from kgteam.cli.errors import fail

HOME_HELP = "kgteam home holding datasets/ (default: $KGTEAM_HOME or ~/.kgteam)"

datasets_app = typer.Typer(help="Public KGQA datasets (MetaQA, PathQuestion, WC2014, QALD-9/10, LC-QuAD 1.0): "
                                "list them, fetch one into the kgteam home.", no_args_is_help=True)


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


@datasets_app.command("list")
def list_command(
    home: Annotated[Path | None, typer.Option("--home", help=HOME_HELP)] = None,
) -> None:
    """Each dataset: its licence, whether it is here, its size, and the eval names it serves."""
    from kgteam.eval.catalogue import datasets_dir, load_catalogue
    from kgteam.eval.download import local_state
    from kgteam.eval.items import DatasetError

    try:
        catalogue = load_catalogue()
    except DatasetError as exc:
        raise fail(str(exc), 2) from None
    root = datasets_dir(home)
    table = Table(title=f"datasets in {root}", title_justify="left")
    for column in ("name", "licence", "here", "size", "eval names"):
        table.add_column(column)
    for name, entry in catalogue.items():
        present, _ = local_state(entry, root)
        here = "yes" if present == len(entry.files) else ("no" if present == 0 else f"{present}/{len(entry.files)} files")
        table.add_row(name, entry.licence, here, _size(entry.size), ", ".join(entry.provides))
    Console(highlight=False, width=200).print(table)


@datasets_app.command("get")
def get_command(
    name: Annotated[str, typer.Argument(help="a dataset from `kgteam datasets list`")],
    force: Annotated[bool, typer.Option("--force", help="download again even when a verified copy is there")] = False,
    home: Annotated[Path | None, typer.Option("--home", help=HOME_HELP)] = None,
) -> None:
    """Show the licence, then download each file, check its sha256 pin and put it in place."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    from kgteam.eval.catalogue import catalogue_entry, datasets_dir
    from kgteam.eval.download import get_dataset
    from kgteam.eval.items import DatasetError

    err = Console(stderr=True, highlight=False)
    try:
        entry = catalogue_entry(name)
    except DatasetError as exc:
        raise fail(str(exc), 2) from None
    root = datasets_dir(home)
    err.print(f"{name}: {entry.title}")
    err.print(f"licence: {entry.licence} <{entry.licence_url}>")
    if entry.licence_note:
        err.print(entry.licence_note)
    err.print(f"{len(entry.files)} file(s), {_size(entry.size)}, from {entry.homepage or 'the URLs in the catalogue'}"
              f" into {root}")
    tasks: dict[str, Any] = {}
    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  console=err, transient=True) as progress:

        def on_bytes(f: Any, done: int, total: int | None) -> None:
            if f.path not in tasks:
                tasks[f.path] = progress.add_task(f.path, total=total)
            progress.update(tasks[f.path], completed=done)

        try:
            results = get_dataset(name.lower(), entry, root, force=force, on_bytes=on_bytes)
        except DatasetError as exc:
            raise fail(str(exc)) from None
    for f, outcome in results:
        typer.echo(f"{outcome:<10} {root / f.path}")
    typer.echo(f"{name}: {len(results)} file(s) in place, each matching its sha256 pin; eval names: "
               f"{', '.join(entry.provides)}")


def register(app: typer.Typer) -> None:
    app.add_typer(datasets_app, name="datasets")
