"""``kgteam corpus add|list|rm``: local document corpora for the ``web_search`` tool."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from kgteam.cli.errors import fail
from kgteam.cli.load_cmd import _terminate_as_interrupt
from kgteam.tools.embedding.base import EmbeddingError
from kgteam.tools.web.chunking import DEFAULT_CHUNK_CHARS, DEFAULT_OVERLAP

corpus_app = typer.Typer(help="Local document corpora that web_search searches (BM25 + dense, hybrid).",
                         no_args_is_help=True)

HOME_HELP = "kgteam home holding corpora/ (default: $KGTEAM_HOME or ~/.kgteam)"
_PHASES = {"read": "reading files", "index": "BM25 index", "embed": "embedding chunks"}
_UNITS = {"read": "files", "index": "chunks", "embed": "chunks"}


class _Bar:
    """One rich bar per build phase, on stderr (the ``kgteam load`` look)."""

    def __init__(self, name: str) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                  TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                                  console=Console(stderr=True))
        self._name = name
        self._tasks: dict[str, object] = {}

    def __enter__(self) -> _Bar:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def __call__(self, phase: str, done: int, total: int) -> None:
        task = self._tasks.get(phase)
        if task is None:
            task = self._tasks[phase] = self._progress.add_task(
                f"{self._name}: {_PHASES.get(phase, phase)}", total=max(total, 1), detail="")
        self._progress.update(task, completed=done, total=max(total, 1),  # type: ignore[arg-type]
                              detail=f"{done:,}/{total:,} {_UNITS.get(phase, '')}")


def add(
    name: Annotated[str, typer.Argument(help="corpus name (folder under <home>/corpora)")],
    files: Annotated[list[Path], typer.Argument(help="files: .txt .md .html .jsonl (title/url/text) .csv",
                                                show_default=False)],
    chunk_chars: Annotated[int, typer.Option("--chunk-chars", help="largest chunk, in characters (100-1500)")]
    = DEFAULT_CHUNK_CHARS,
    overlap: Annotated[int, typer.Option("--overlap", help="characters of whole sentences a chunk repeats from "
                                                           "the one before (at most half a chunk)")] = DEFAULT_OVERLAP,
    text_column: Annotated[str, typer.Option("--text-column", help="CSV: the column holding the text")] = "text",
    title_column: Annotated[str | None, typer.Option("--title-column", help="CSV: the title column "
                                                                            "(default: 'title' if present)")] = None,
    url_column: Annotated[str | None, typer.Option("--url-column", help="CSV: the URL column "
                                                                        "(default: 'url' if present)")] = None,
    no_embed: Annotated[bool, typer.Option("--no-embed", help="BM25 only: no dense index")] = False,
    home: Annotated[Path | None, typer.Option("--home", help=HOME_HELP)] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
) -> None:
    """Build (or rebuild) a corpus from files: chunks, BM25 and dense indexes. The old one stays until it succeeds."""
    from kgteam.tools.web import CorpusError, build_corpus
    from kgteam.tools.web.readers import CsvColumns

    started = time.perf_counter()
    columns = CsvColumns(text=text_column, title=title_column, url=url_column)
    try:
        with _terminate_as_interrupt():
            if quiet:
                manifest = build_corpus(name, files, home=home, chunk_chars=chunk_chars, overlap=overlap,
                                        csv_columns=columns, embed=not no_embed)
            else:
                with _Bar(name) as bar:
                    manifest = build_corpus(name, files, home=home, chunk_chars=chunk_chars, overlap=overlap,
                                            csv_columns=columns, embed=not no_embed, progress=bar)
    except (CorpusError, EmbeddingError) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise fail(f"interrupted; corpus '{name}' was left as it was", 130) from None
    except OSError as exc:
        raise fail(f"corpus build failed: {exc}") from None
    dense = (f"dense index {manifest.vectors.embedder} ({manifest.vectors.kind})" if manifest.vectors
             else "no dense index (BM25 only)")
    typer.echo(f"corpus '{manifest.name}' ready at {manifest.path}: {manifest.documents:,} documents, "
               f"{manifest.chunks:,} chunks, {dense}, {manifest.disk_bytes / 1e6:,.1f} MB "
               f"in {time.perf_counter() - started:,.1f}s")


def list_(
    home: Annotated[Path | None, typer.Option("--home", help=HOME_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the manifests as JSON")] = False,
) -> None:
    """List the corpora, with their counts and sources."""
    from kgteam.tools.web import corpora_dir, list_corpora

    found = list_corpora(home)
    if as_json:
        typer.echo(json.dumps([m.model_dump(mode="json") for m in found], indent=2))
        return
    if not found:
        typer.echo(f"no corpora in {corpora_dir(home)}; create one with `kgteam corpus add NAME FILES...`")
        return
    table = Table(title=f"corpora in {corpora_dir(home)}")
    for column in ("name", "documents", "chunks", "dense", "size", "created", "sources"):
        table.add_column(column, justify="right" if column in {"documents", "chunks", "size"} else "left")
    for m in found:
        table.add_row(m.name, f"{m.documents:,}", f"{m.chunks:,}", m.vectors.embedder if m.vectors else "-",
                      f"{m.disk_bytes / 1e6:,.1f} MB", m.created_at, ", ".join(Path(s.path).name for s in m.sources))
    Console(highlight=False, width=200).print(table)


def rm(
    name: Annotated[str, typer.Argument(help="the corpus to delete")],
    home: Annotated[Path | None, typer.Option("--home", help=HOME_HELP)] = None,
) -> None:
    """Delete a corpus."""
    from kgteam.tools.web import CorpusError, remove_corpus

    try:
        path = remove_corpus(name, home)
    except CorpusError as exc:
        raise fail(str(exc)) from None
    typer.echo(f"corpus '{name}' removed ({path})")


corpus_app.command("add")(add)
corpus_app.command("list")(list_)
corpus_app.command("rm")(rm)


def register(app: typer.Typer) -> None:
    """Adds ``kgteam corpus`` to the ``kgteam`` app."""
    app.add_typer(corpus_app, name="corpus")
