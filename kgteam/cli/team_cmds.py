"""``kgteam validate FILE...`` and ``kgteam roles``: check a team file, list what is installed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from kgteam.config import registry
from kgteam.config.loader import TeamConfigError, load_team
from kgteam.config.resolve import resolve_team


def validate(
    files: Annotated[list[Path], typer.Argument(help="team YAML file(s)")],
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable result")] = False,
) -> None:
    """Check team files: structure, env references, installed roles/backends and their options, routes.

    Each file is reported; exit 1 if any is invalid."""
    console = Console(highlight=False, soft_wrap=True)
    results = [_validate_one(file, console, as_json) for file in files]
    if as_json:
        out: dict[str, Any] = results[0] if len(results) == 1 else {
            "ok": all(r["ok"] for r in results), "files": results}
        typer.echo(json.dumps(out, indent=2))
    if not all(r["ok"] for r in results):
        raise typer.Exit(1)


def _validate_one(file: Path, console: Console, as_json: bool) -> dict[str, Any]:
    """Checks one file; prints the human report unless ``as_json``; returns the JSON result."""
    try:
        spec = load_team(file)
    except TeamConfigError as exc:
        if not as_json:
            typer.secho(f"{file}: {len(exc.issues)} error(s)", fg="red", bold=True)
            for issue in exc.issues:
                typer.echo(f"  {issue}")
        return {"file": str(file), "ok": False, "issues": [vars(i) for i in exc.issues]}
    team = resolve_team(spec)
    result = {"file": str(file), "ok": True, "name": spec.name, "roles": {k: v.role for k, v in team.roles.items()},
              "routes": len(team.routes), "entry": team.entry, "answer_role": team.answer_role}
    if as_json:
        return result
    # Everything below comes from the user's file: escape it so "[x]" is shown, not taken as markup.
    console.print(f"[bold green]OK[/] {escape(str(file))}: team [bold]{escape(spec.name)}[/]"
                  + (f" — {escape(spec.description)}" if spec.description else ""))
    model = spec.model
    console.print(Text(f"  model: {model.provider}" + (f" {model.model}" if model.model else "")
                       + (f" @ {model.base_url}" if model.base_url else "")))
    kg = spec.kg
    where = kg.name or kg.path or kg.endpoint
    console.print(Text(f"  kg: {kg.backend} {where}" + (f" (labels: {kg.labels.backend})" if kg.labels else "")))
    roles = ", ".join(f"{inst}" + (f"={r.role}" if r.role != inst else "") for inst, r in team.roles.items())
    console.print(Text(f"  roles ({len(team.roles)}): {roles}"))
    source = f"playbook {spec.playbook}" if spec.playbook else "explicit"
    console.print(Text(f"  routes: {len(team.routes)} ({source}); entry: {team.entry or '-'}; "
                       f"answer role: {team.answer_role or '-'}"))
    b = team.budgets
    console.print(f"  budgets: depth {b.max_depth}, breadth {b.max_breadth}, retries {b.max_retries}, "
                  f"turns {b.max_turns}, llm calls {b.max_llm_calls}, tokens {b.max_tokens}, timeout {b.timeout_s}s")
    return result


def roles(
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable list, with each role's settings "
                                          "(type, default, range, description)")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="each role's settings as Markdown tables "
                                           "(docs/roles.md is this output for the built-in roles)")] = False,
) -> None:
    """List installed roles (built-in and plugins): what they consume, produce and read, their tools."""
    if markdown:
        from kgteam.config.role_settings import settings_markdown

        typer.echo(settings_markdown(registry.role_settings_models()), nl=False)
        return
    infos = registry.describe_roles()
    if as_json:
        typer.echo(json.dumps([vars(i) for i in infos], indent=2, default=_jsonable))
        return
    table = Table(title="installed roles")
    for col in ("role", "consumes", "produces", "reads", "tools", "settings (--json)", "package"):
        table.add_column(col, no_wrap=col in ("role", "package"))
    for info in infos:
        if info.error:
            table.add_row(Text(info.name), Text(f"unavailable: {info.error}", style="red"), "", "", "", "",
                          Text(info.package))
        else:
            table.add_row(Text(info.name), ", ".join(info.consumes), ", ".join(info.produces), ", ".join(info.reads),
                          ", ".join(info.tools), str(len(info.settings or {})), Text(info.package))
    Console(width=160).print(table)


def register(app: typer.Typer) -> None:
    """Adds ``validate`` and ``roles`` to the ``kgteam`` app."""
    app.command("validate")(validate)
    app.command("roles")(roles)


def _jsonable(value: object) -> object:
    """Settings defaults may be pydantic models (nested settings): their JSON form."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return str(value)
