"""``kgteam tune``: learn a KG's relation lexicon from example question/answer pairs."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kgteam.cli.errors import fail
from kgteam.protocols.errors import KgteamError


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
    lexicon: Annotated[bool, typer.Option("--lexicon/--no-lexicon", help="learn phrases for relations")] = True,
    reader: Annotated[bool, typer.Option("--reader/--no-reader", help="record the examples' readings in the "
                                                                      "KG's example bank and train its reader")] = True,
    home: Annotated[Path | None, typer.Option("--home", help="KG home (default: $KGTEAM_HOME or ~/.kgteam)")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
) -> None:
    """Learn a KG from example questions with known answers: words for its relations and a trained reader.

    The phrases go to ``lexicon.json`` in the KG folder; the semantic layer reads them like
    ``skos:altLabel``. The examples with the readings that reach their answers go to the KG's
    example bank (``examples.json``, see ``kgteam examples``) and a reader trained on it to
    ``reader.json``; every playbook's semantic layer then scores readings with it. The KG itself is
    not changed. Tune on examples you will not evaluate on.
    """
    if not lexicon and not reader:
        raise fail("nothing to learn: --no-lexicon and --no-reader together", 2)
    from kgteam.eval.datasets import DatasetError, load_dataset, sample
    from kgteam.eval.tune_cache import KGReadCache, TuneMemo
    from kgteam.eval.tune_worker import SecondReader
    from kgteam.tools.embedding.base import EmbeddingError
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.lexicon import Lexicon, LexiconError, read_lexicon

    try:
        items = load_dataset(examples)
    except (DatasetError, OSError, ValueError) as exc:
        raise fail(f"cannot read the examples {examples!r}: {exc}", 2) from None
    items = sample(items, n, seed)
    if not items:
        raise fail(f"no examples in {examples!r}", 2)
    kg = _open(name, home)
    try:
        old = None if replace else read_lexicon(kg.path)
        tools = KGTools.from_kg(kg, lexicon=old or Lexicon(), reader=None)  # learn from the hand scorer
    except (LexiconError, EmbeddingError) as exc:
        kg.close()
        hint = " (fix or delete it, or pass --replace)" if isinstance(exc, LexiconError) else ""
        raise fail(f"{exc}{hint}") from None
    started = time.perf_counter()
    # what both passes ask alike (the same KG, read twice): kept for the run, not per pass; and a
    # second process reading every other chunk of the examples on a second core (None: one process)
    second = SecondReader.start(name, home, items, old or Lexicon())
    shared = {"memo": TuneMemo(), "cache": KGReadCache(), "embedder": tools.embedder, "second": second}
    try:
        _learn(name, home, kg.path, items, tools, old, shared, examples=examples, seed=seed, min_count=min_count,
               min_precision=min_precision, replace=replace, dry_run=dry_run, lexicon=lexicon, reader=reader,
               quiet=quiet, started=started)
    finally:
        if second is not None:
            second.close()


def _learn(name: str, home: Path | None, kg_path: Path, items: list, tools: Any, old: Any, shared: dict[str, Any], *,
           examples: str, seed: int, min_count: int, min_precision: float, replace: bool, dry_run: bool,
           lexicon: bool, reader: bool, quiet: bool, started: float) -> None:
    """The lexicon pass (``tools`` read with the KG's lexicon before this run, ``old``), then the
    bank pass with the lexicon learned (:func:`_teach`)."""
    from kgteam.eval.tuning import learned_lexicon, lexicon_evidence
    from kgteam.roles.semantic.layer import SemanticLayer
    from kgteam.roles.semantic.similarity import embedder_similarity
    from kgteam.tools.lexicon import Lexicon, read_lexicon, write_lexicon

    console = Console(stderr=True)
    source = f"kgteam tune --examples {examples} (n={len(items)}, seed={seed})"
    if not lexicon:
        tools.close()
        _teach(name, home, items, read_lexicon(kg_path), replace=replace, dry_run=dry_run, quiet=quiet,
               source=source, **shared)
        return
    second, memo = shared["second"], shared["memo"]
    try:
        layer = SemanticLayer(shared["cache"].toolbox(tools.toolbox()), embedder_similarity(tools.embedder))
        with contextlib.nullcontext() if quiet else console.status("tuning", spinner="dots") as status:
            def progress(done: int, total: int) -> None:
                if status is not None:
                    done += second.done() if second is not None else 0
                    status.update(f"tuning: example {min(done, len(items))}/{len(items)}")

            def here(part: list) -> list:
                return asyncio.run(lexicon_evidence(layer, part, progress=progress, memo=memo))

            evidence = second.read(("lexicon", {}), items, here) if second is not None else here(items)
            learned, report = learned_lexicon(evidence, min_count=min_count, min_precision=min_precision)
    except KeyboardInterrupt:
        raise fail("interrupted; the lexicon was left as it was", 130) from None
    except KgteamError as exc:  # a ToolError (EmbeddingError), or an endpoint KG's endpoint failing
        raise fail(f"tuning stopped: {exc}; the lexicon was left as it was") from None
    finally:
        tools.close()
    learned = learned.model_copy(update={"source": source})
    table = Table(title=f"learned for KG '{name}'", box=None, header_style="dim")
    for column in ("phrase", "relation", "examples", "agreement"):
        table.add_column(column)
    for p in report.learned:
        table.add_row(Text(p.phrase), Text(p.label), str(p.count), f"{p.precision:.2f}")  # KG text, not markup
    Console().print(table)
    typer.echo(f"{report.examples} examples: {report.linked} linked, {report.reached} reachable in the KG, "
               f"{report.best_was_right} already read right; {len(report.learned)} phrases learned "
               f"in {time.perf_counter() - started:,.1f}s")
    final = learned if replace or old is None else old.merged(learned)
    if dry_run:
        if not reader:
            typer.echo("dry run: nothing written")
    else:
        try:
            file = write_lexicon(final, kg_path)
        except OSError as exc:
            raise fail(f"cannot write the lexicon into {kg_path}: {exc}") from None
        typer.echo(f"lexicon written to {file} ({sum(len(v) for v in final.relations.values())} phrases)")
    if reader:
        memo.lexicon_changed(old or Lexicon(), final)  # readings the new phrases cannot change are kept
        _teach(name, home, items, final, replace=replace, dry_run=dry_run, quiet=quiet, source=source, **shared)


def _open(name: str, home: Path | None) -> Any:
    """The installed KG, or a clear error naming it."""
    from kgteam.tools.kg import open_kg
    from kgteam.tools.types import ToolError

    try:
        return open_kg(name, home=home)
    except (ToolError, OSError) as exc:
        raise fail(f"cannot open KG {name!r}: {exc}") from None


def _teach(name: str, home: Path | None, items: list, lexicon: object, *, replace: bool, dry_run: bool,
           quiet: bool, source: str, memo: Any = None, cache: Any = None, embedder: Any = None,
           second: Any = None) -> None:
    """Record the examples' readings in the KG's bank (read with ``lexicon``), train its reader on the
    whole bank, report the cross-fitted held-out score, and write both (unless ``dry_run``).

    ``memo``, ``cache`` and ``embedder``: the lexicon pass's (``TuneMemo``, ``KGReadCache``), so this
    pass reuses what it asked the KG and embedded rather than asking again; ``second``: the
    ``SecondReader`` reading its share of the examples."""
    from kgteam.eval.teaching import record_examples
    from kgteam.roles.semantic.layer import SemanticLayer
    from kgteam.roles.semantic.similarity import embedder_similarity
    from kgteam.tools.embedding.base import EmbeddingError
    from kgteam.tools.example_bank import BankError, ExampleBank, read_bank
    from kgteam.tools.kg_tools import KGTools

    started = time.perf_counter()
    kg = _open(name, home)
    try:
        before = None if replace else read_bank(kg.path)
        more = {} if embedder is None else {"embedder": embedder}
        tools = KGTools.from_kg(kg, lexicon=lexicon, reader=None, **more)  # the hand scorer reads the examples
    except (BankError, EmbeddingError) as exc:
        kg.close()
        raise fail(f"{exc} (fix or delete it, or pass --replace)") from None
    console = Console(stderr=True)
    try:
        box = tools.toolbox() if cache is None else cache.toolbox(tools.toolbox())
        layer = SemanticLayer(box, embedder_similarity(tools.embedder), reader=None)
        with contextlib.nullcontext() if quiet else console.status("reading examples", spinner="dots") as status:
            def progress(done: int, total: int) -> None:
                if status is not None:
                    done += second.done() if second is not None else 0
                    status.update(f"reading examples: {min(done, len(items))}/{len(items)}")

            def here(part: list) -> list:
                return asyncio.run(record_examples(layer, part, progress=progress, memo=memo))

            recorded = second.read(("bank", lexicon, {}), items, here) if second is not None else here(items)
            bank = ExampleBank(examples=[e for e in recorded if e is not None])
    except KeyboardInterrupt:
        raise fail("interrupted; the example bank was left as it was", 130) from None
    except KgteamError as exc:  # a ToolError (EmbeddingError), or an endpoint KG's endpoint failing
        raise fail(f"reading the examples stopped: {exc}; the example bank was left as it was") from None
    finally:
        tools.close()
    bank.source = source
    read = len(bank.examples)
    reached = sum(1 for e in bank.examples if e.readings)
    if before is not None:
        bank = before.merged(bank)
    save_reader(bank, kg.path, dry_run=dry_run)
    typer.echo(f"{read} examples read: {reached} with a reading that reaches their answers; "
               f"the bank holds {len(bank.examples)} ({time.perf_counter() - started:,.1f}s)")


_CONVENTION_SAID = {
    "no_topic": "without the entity asked about",
    "free_walks": "with walks back to the node a step came from",
    "free_walks_no_topic": "without the entity asked about and with walks back to the node a step came from",
}


def save_reader(bank: object, folder: Path, *, dry_run: bool = False) -> None:
    """Train the reader on ``bank``, say its cross-fitted held-out score, and write bank and reader."""
    from kgteam.roles.semantic.reader import teach
    from kgteam.tools.example_bank import READER_FILE, write_bank, write_json

    reader, held = teach(bank.examples)  # type: ignore[attr-defined]
    if held.scored:
        typer.echo(f"held out (5 folds by topic, {held.scored} examples): reading Hits@1 {held.hand_rate:.3f} "
                   f"hand scorer -> {held.reader_rate:.3f} trained reader")
    else:
        typer.echo("too few examples for a held-out score (10 or more are needed)")
    typer.echo(f"reader trained on {reader.stats.get('examples', 0)} examples "
               f"({reader.stats.get('features', 0)} features) in {reader.stats.get('seconds', 0.0):.2f}s"
               + ("; confidence refit on held-out readings" if reader.calibration else ""))
    if "held_out_unanswered_stated" in reader.stats:
        typer.echo(f"asked as if their entity lacked what they ask ({len(held.unanswered)} examples), "
                   f"{reader.stats['held_out_unanswered_stated']:.1%} would still get an answer (held out)")
    joins = reader.stats.get("joins", 0)
    if joins:
        typer.echo(f"{joins} examples were read as a join of two entities: their joins were right {reader.stats['joins_right']:.0%} "
                   "of the time; " + ("joins' confidence refit on them" if reader.join_calibration
                                      else "too few to refit their confidence (30 or more are needed)"))
    if reader.convention != "default":
        better, worse = reader.stats["conventions"][reader.convention]
        typer.echo(f"the examples count a chain's answers {_CONVENTION_SAID[reader.convention]} ({better} examples "
                   f"read better so, {worse} worse): chains on this KG will too")
    if dry_run:
        typer.echo("dry run: nothing written")
        return
    try:
        write_bank(bank, folder)  # type: ignore[arg-type]
        file = write_json(reader.to_json(), folder / READER_FILE)
    except OSError as exc:
        raise fail(f"cannot write the example bank into {folder}: {exc}") from None
    typer.echo(f"example bank and reader written to {folder} ({file.name})")


def register(app: typer.Typer) -> None:
    app.command("tune")(tune)
