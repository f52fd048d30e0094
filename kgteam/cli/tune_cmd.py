"""``kgteam tune``: learn a KG's relation lexicon from example question/answer pairs."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kgteam.cli.errors import fail


def tune(
    name: Annotated[str, typer.Argument(help="the loaded KG to tune (see `kgteam kgs`)")],
    examples: Annotated[str, typer.Option("--examples", "-e", help="question/answer pairs: a JSONL/TSV file the "
                                                                    "eval reader reads, or a dataset name")],
    n: Annotated[int | None, typer.Option("--n", min=1, help="use a seeded sample of this many examples")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    min_count: Annotated[int, typer.Option("--min-count", min=1, help="examples a phrase must name a "
                                                                      "relation in")] = 3,
    min_precision: Annotated[float, typer.Option("--min-precision", min=0.0, max=1.0,
                                                 help="share of its namings that must agree")] = 0.75,
    replace: Annotated[bool, typer.Option("--replace", help="replace the KG's lexicon instead of adding "
                                                            "to it")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="show what would be learned; write nothing")] = False,
    home: Annotated[Path | None, typer.Option("--home", help="KG home (default: $KGTEAM_HOME or ~/.kgteam)")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
) -> None:
    """Learn words for the KG's relations from example questions with known answers.

    The phrases go to ``lexicon.json`` in the KG folder (the KG is not changed); the semantic
    layer reads them like ``skos:altLabel``. Tune on examples you will not evaluate on.
    """
    from kgteam.eval.datasets import DatasetError, load_dataset, sample
    from kgteam.eval.tuning import derive_lexicon
    from kgteam.roles.semantic.layer import SemanticLayer
    from kgteam.roles.semantic.similarity import embedder_similarity
    from kgteam.tools.embedding.base import EmbeddingError
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.lexicon import Lexicon, LexiconError, read_lexicon, write_lexicon
    from kgteam.tools.types import ToolError

    try:
        items = load_dataset(examples)
    except (DatasetError, OSError, ValueError) as exc:
        raise fail(f"cannot read the examples {examples!r}: {exc}", 2) from None
    items = sample(items, n, seed)
    if not items:
        raise fail(f"no examples in {examples!r}", 2)
    try:
        kg = open_kg(name, home=home)
    except (ToolError, OSError) as exc:
        raise fail(f"cannot open KG {name!r}: {exc}") from None
    try:
        old = None if replace else read_lexicon(kg.path)
        tools = KGTools.from_kg(kg, lexicon=old or Lexicon())
    except (LexiconError, EmbeddingError) as exc:
        kg.close()
        hint = " (fix or delete it, or pass --replace)" if isinstance(exc, LexiconError) else ""
        raise fail(f"{exc}{hint}") from None
    started = time.perf_counter()
    console = Console(stderr=True)
    try:
        layer = SemanticLayer(tools.toolbox(), embedder_similarity(tools.embedder))
        with contextlib.nullcontext() if quiet else console.status("tuning", spinner="dots") as status:
            def progress(done: int, total: int) -> None:
                if status is not None:
                    status.update(f"tuning: example {done}/{total}")

            learned, report = asyncio.run(derive_lexicon(layer, items, min_count=min_count,
                                                         min_precision=min_precision, progress=progress))
    except KeyboardInterrupt:
        raise fail("interrupted; the lexicon was left as it was", 130) from None
    except (ToolError, EmbeddingError) as exc:
        raise fail(f"tuning stopped: {exc}; the lexicon was left as it was") from None
    finally:
        tools.close()
    learned = learned.model_copy(update={"source": f"kgteam tune --examples {examples} (n={len(items)}, "
                                                   f"seed={seed})"})
    table = Table(title=f"learned for KG '{name}'", box=None, header_style="dim")
    for column in ("phrase", "relation", "examples", "agreement"):
        table.add_column(column)
    for p in report.learned:
        table.add_row(Text(p.phrase), Text(p.label), str(p.count), f"{p.precision:.2f}")  # KG text, not markup
    Console().print(table)
    typer.echo(f"{report.examples} examples: {report.linked} linked, {report.reached} reachable in the KG, "
               f"{report.best_was_right} already read right; {len(report.learned)} phrases learned "
               f"in {time.perf_counter() - started:,.1f}s")
    if dry_run:
        typer.echo("dry run: nothing written")
        return
    final = learned if replace or old is None else old.merged(learned)
    try:
        file = write_lexicon(final, kg.path)
    except OSError as exc:
        raise fail(f"cannot write the lexicon into {kg.path}: {exc}") from None
    typer.echo(f"lexicon written to {file} ({sum(len(v) for v in final.relations.values())} phrases)")


def register(app: typer.Typer) -> None:
    app.command("tune")(tune)
