"""The ``kgteam`` command. Each sub-command lives in its own module and registers itself here."""

from __future__ import annotations

import importlib
from typing import Annotated

import typer
import typer.core

from kgteam.agents.logging import configure_logging


def _flags_show_no_value_type() -> None:
    """Typer's rich help prints a ``<bool>`` type beside flags (``--json <bool>``), which reads as
    if ``--json true`` were accepted; it is not (a flag takes no value). Show flags bare, as
    click's plain help does."""
    original = typer.core.TyperOption.display_type_rich

    def display_type_rich(self: typer.core.TyperOption, ctx: typer.Context) -> str | None:
        if self.is_flag or self.count:
            return None
        return original(self, ctx)

    typer.core.TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_show_no_value_type()

app = typer.Typer(
    name="kgteam",
    help="Answer questions over knowledge graphs with a team of LLM roles.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

# One module per command family; each exposes ``register(app)``.
COMMAND_MODULES = (
    "kgteam.cli.load_cmd",
    "kgteam.cli.ask_cmd",
    "kgteam.cli.chat_cmd",
    "kgteam.cli.demo_cmd",
    "kgteam.cli.team_cmds",
    "kgteam.cli.init_cmd",
    "kgteam.cli.trace_cmd",
    "kgteam.cli.eval_cmd",
    "kgteam.cli.calibrate_cmd",
    "kgteam.cli.claims_cmd",
    "kgteam.cli.tune_cmd",
    "kgteam.cli.examples_cmd",
    "kgteam.cli.sparql_cmd",
    "kgteam.cli.kg_cmd",
    "kgteam.cli.corpus_cmd",
    "kgteam.cli.datasets_cmd",
    "kgteam.cli.serve_cmd",
    "kgteam.cli.mcp_cmd",
)


def _show_version(value: bool) -> None:
    if value:
        from kgteam import __version__

        typer.echo(f"kgteam {__version__}")
        raise typer.Exit()


@app.callback()
def _global_options(
    version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                          help="print kgteam's version and exit")] = False,
    log_level: Annotated[str, typer.Option(
        "--log-level", envvar="KGTEAM_LOG_LEVEL",
        help="structlog level on stderr: DEBUG shows every tool and LLM call, INFO each question")] = "WARNING",
    log_format: Annotated[str, typer.Option(
        "--log-format", envvar="KGTEAM_LOG_FORMAT", help="json (one object per line) or console")] = "json",
) -> None:
    """Answer questions over knowledge graphs with a team of LLM roles."""
    if log_format not in ("json", "console"):
        raise typer.BadParameter("use json or console", param_hint="--log-format")
    try:
        configure_logging(log_level, json=log_format == "json")
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--log-level") from exc


for _module_name in COMMAND_MODULES:
    importlib.import_module(_module_name).register(app)


def main() -> None:
    app()
