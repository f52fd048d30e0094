"""The ``kgteam`` command. Each sub-command lives in its own module and registers itself here."""

from __future__ import annotations

import importlib

import typer

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
    "kgteam.cli.trace_cmd",
    "kgteam.cli.eval_cmd",
)

for _module_name in COMMAND_MODULES:
    importlib.import_module(_module_name).register(app)


def main() -> None:
    app()
