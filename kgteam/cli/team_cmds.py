"""``kgteam validate FILE`` and ``kgteam roles``: check a team file, list what is installed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from kgteam.config import registry
from kgteam.config.loader import TeamConfigError, load_team
from kgteam.config.resolve import resolve_team


def validate(
    file: Annotated[Path, typer.Argument(help="team YAML file")],
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable result")] = False,
) -> None:
    """Check a team file: structure, env references, installed roles/backends, routes. Exit 1 on errors."""
    console = Console(highlight=False, soft_wrap=True)
    try:
        spec = load_team(file)
    except TeamConfigError as exc:
        if as_json:
            typer.echo(json.dumps({"ok": False, "issues": [vars(i) for i in exc.issues]}, indent=2))
        else:
            typer.secho(f"{file}: {len(exc.issues)} error(s)", fg="red", bold=True)
            for issue in exc.issues:
                typer.echo(f"  {issue}")
        raise typer.Exit(1) from None
    team = resolve_team(spec)
    if as_json:
        typer.echo(json.dumps({"ok": True, "name": spec.name, "roles": {k: v.role for k, v in team.roles.items()},
                               "routes": len(team.routes), "entry": team.entry, "answer_role": team.answer_role},
                              indent=2))
        return
    console.print(f"[bold green]OK[/] {file}: team [bold]{spec.name}[/]"
                  + (f" — {spec.description}" if spec.description else ""))
    model = spec.model
    console.print(f"  model: {model.provider}" + (f" {model.model}" if model.model else "")
                  + (f" @ {model.base_url}" if model.base_url else ""))
    kg = spec.kg
    where = kg.name or kg.path or kg.endpoint
    console.print(f"  kg: {kg.backend} {where}" + (f" (labels: {kg.labels.backend})" if kg.labels else ""))
    roles = ", ".join(f"{inst}" + (f"={r.role}" if r.role != inst else "") for inst, r in team.roles.items())
    console.print(f"  roles ({len(team.roles)}): {roles}")
    source = f"playbook {spec.playbook}" if spec.playbook else "explicit"
    console.print(f"  routes: {len(team.routes)} ({source}); entry: {team.entry or '-'}; "
                  f"answer role: {team.answer_role or '-'}")
    b = team.budgets
    console.print(f"  budgets: depth {b.max_depth}, breadth {b.max_breadth}, retries {b.max_retries}, "
                  f"turns {b.max_turns}, llm calls {b.max_llm_calls}, tokens {b.max_tokens}, timeout {b.timeout_s}s")


def roles(as_json: Annotated[bool, typer.Option("--json", help="machine-readable list")] = False) -> None:
    """List installed roles (built-in and plugins) with the payload kinds they consume and produce."""
    infos = registry.describe_roles()
    if as_json:
        typer.echo(json.dumps([vars(i) for i in infos], indent=2))
        return
    table = Table(title="installed roles")
    for col in ("role", "consumes", "produces", "tools", "package"):
        table.add_column(col)
    for info in infos:
        if info.error:
            table.add_row(info.name, f"[red]unavailable: {info.error}[/]", "", "", info.package)
        else:
            table.add_row(info.name, ", ".join(info.consumes), ", ".join(info.produces), ", ".join(info.tools),
                          info.package)
    Console(width=160).print(table)


def register(app: typer.Typer) -> None:
    """Adds ``validate`` and ``roles`` to the ``kgteam`` app."""
    app.command("validate")(validate)
    app.command("roles")(roles)
