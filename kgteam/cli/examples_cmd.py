"""``kgteam examples``: list a KG's example bank (what ``kgteam tune`` taught it) and remove examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kgteam.cli.errors import fail


def examples(
    name: Annotated[str, typer.Argument(help="the loaded KG (see `kgteam kgs`)")],
    remove: Annotated[list[str] | None, typer.Option("--remove", help="remove this example (by id; repeatable) "
                                                                      "and re-train the reader")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the bank as JSON lines")] = False,
    home: Annotated[Path | None, typer.Option("--home", help="KG home (default: $KGTEAM_HOME or ~/.kgteam)")] = None,
) -> None:
    """The KG's example bank: each example's question, gold answers and the reading that reaches them."""
    from kgteam.cli.tune_cmd import save_reader
    from kgteam.tools.example_bank import BankError, read_bank
    from kgteam.tools.kg import kg_folder

    try:
        folder = kg_folder(name, home=home)
        bank = read_bank(folder)
    except (BankError, OSError, ValueError) as exc:
        raise fail(str(exc)) from None
    if bank is None:
        raise fail(f"KG {name!r} has no example bank (teach it with `kgteam tune {name} --examples FILE`)")
    if remove:
        unknown = sorted(set(remove) - {e.id for e in bank.examples})
        if unknown:
            raise fail(f"no example {', '.join(map(repr, unknown))} in the bank of {name!r}", 2)
        bank.examples = [e for e in bank.examples if e.id not in set(remove)]
        save_reader(bank, folder)
        typer.echo(f"removed {len(remove)}; the bank holds {len(bank.examples)}")
        return
    if as_json:
        for e in bank.examples:
            gold = e.readings[0] if e.readings else None
            typer.echo(json.dumps({"id": e.id, "question": e.question, "answers": e.answers,
                                   "reading": gold.model_dump(include={"entity", "steps"}) if gold else None,
                                   "readings": len(e.readings), "candidates": len(e.candidates),
                                   "join": e.join.model_dump() if e.join else None},
                                  ensure_ascii=False))
        return
    table = Table(title=f"example bank of KG '{name}' ({len(bank.examples)} examples)", box=None, header_style="dim")
    for column in ("id", "question", "reading", "answers"):
        table.add_column(column)
    for e in bank.examples:
        gold = e.readings[0] if e.readings else None
        reading = (" / ".join(("^" if s.direction == "in" else "") + (s.label or s.predicate) for s in gold.steps)
                   if gold else "(none reaches the answers)")
        if e.join is not None:  # two named entities: their join is the reading that answers
            reading = (f"join of two entities, {'right' if e.join.right else f'F1 {e.join.f1:.2f}'} "
                       f"(confidence {e.join.confidence:.2f})")
        answers = ", ".join(e.answers[:3]) + (" ..." if len(e.answers) > 3 else "")
        table.add_row(Text(e.id), Text(e.question), Text(reading), Text(answers))  # KG text, not markup
    Console().print(table)


def register(app: typer.Typer) -> None:
    app.command("examples")(examples)
