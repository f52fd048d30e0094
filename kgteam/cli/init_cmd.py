"""``kgteam init [PATH]``: write a commented starter team file that validates as written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from kgteam.cli.errors import fail
from kgteam.config.defaults import DEMO_KG


def init(
    path: Annotated[Path, typer.Argument(help="team file to write")] = Path("team.yaml"),
    playbook: Annotated[str, typer.Option("--playbook", help="an installed playbook (an unknown name is "
                                          "refused with the list of installed ones)")] = "triad",
    kg: Annotated[str, typer.Option("--kg", help="an installed KG name or a KG folder")] = DEMO_KG,
    model: Annotated[str, typer.Option("--model", "-m", help="'openai' (model and URL from the environment), "
                                       "'openai:MODEL', 'openai:MODEL@BASE_URL', 'local', 'none' or "
                                       "'scripted:FILE'")] = "openai",
    force: Annotated[bool, typer.Option("--force", help="overwrite an existing file")] = False,
) -> None:
    """Write a starter team file with comments: model, KG, playbook, budgets and role settings."""
    from kgteam.config.loader import TeamConfigError, load_team
    from kgteam.config.starter import starter_team

    if path.is_dir():
        raise fail(f"{path} is a folder; give a file path such as {path / 'team.yaml'}", 2) from None
    if path.exists() and not force:
        raise fail(f"{path} exists; use --force to overwrite it", 2) from None
    try:
        text = starter_team(path, playbook=playbook, kg=kg, model=model)
    except TeamConfigError as exc:  # the playbook is not installed
        raise fail("; ".join(i.message for i in exc.issues), 2) from None
    except ValueError as exc:  # a --model form kgteam does not know
        raise fail(f"--model {exc}", 2) from None
    folder = path.parent if str(path.parent) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        try:
            load_team(tmp)  # never leave a file behind that `kgteam validate` would refuse
        except TeamConfigError as exc:
            os.unlink(tmp)
            raise fail(f"the starter file would not validate (a kgteam bug): {exc}", 1) from None
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        raise fail(f"cannot write {path}: {exc.strerror or exc}", 2) from None
    typer.echo(f"wrote {path}; check it with: kgteam validate {path}")


def register(app: typer.Typer) -> None:
    """Adds ``init`` to the ``kgteam`` app."""
    app.command("init")(init)
