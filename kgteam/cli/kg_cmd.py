"""``kgteam kg``: add reviewed triples to a KG, register a SPARQL endpoint as a KG, export a KG for a server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kgteam.cli.errors import fail

kg_app = typer.Typer(help="Change an installed KG by hand (only ever from a file a person reviewed).",
                     no_args_is_help=True)


@kg_app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="the installed KG (see `kgteam list`)")],
    file: Annotated[Path, typer.Argument(help="reviewed triples, one JSON object per line (`kgteam ask --proposals`)")],
    home: Annotated[Path | None, typer.Option("--home", help="kgteam home (default $KGTEAM_HOME or ~/.kgteam)")] = None,
    force: Annotated[bool, typer.Option("--force", help="also add triples that do not fit their relation's "
                                                        "domain or range in the KG")] = False,
) -> None:
    """Add the triples of a reviewed file to a KG. Every line is checked first; a bad line changes
    nothing, and neither does a triple that does not fit its relation's domain or range (unless --force)."""
    from rich.markup import escape

    from kgteam.tools.loading.additions import add_reviewed_triples
    from kgteam.tools.loading.errors import LoadError

    console = Console(highlight=False)
    try:
        report = add_reviewed_triples(name, file, home=home, force=force)
    except LoadError as exc:
        raise fail(str(exc)) from None
    for p in report.planned:  # what is (or would be) added, line by line
        mark = ("[red]refused[/]" if not force else "[yellow]forced[/]") if p.refused else (
            "[dim]already in the KG[/]" if p.already else "[green]add[/]")
        console.print(f"  {file.name}:{p.number} {mark}  {escape(p.line())}"
                      + (f"  [dim]({escape(p.refused)})[/]" if p.refused else ""))
    if not report.written:
        raise fail(f"{len(report.refused)} triple(s) do not fit the KG and nothing was written: delete those lines "
                   f"from {file}, or add them anyway with --force")
    console.print(f"added {report.added} triple(s) to {name}"
                  + (f" ({report.already} already there)" if report.already else "")
                  + (f"; new entities: {', '.join(report.new_entities)}" if report.new_entities else ""))
    console.print(f"[dim]the file is kept as {report.kept_as}[/]")


@kg_app.command("connect")
def connect(
    name: Annotated[str, typer.Argument(help="the name the KG gets (then `--kg NAME` everywhere)")],
    url: Annotated[str, typer.Argument(help="the SPARQL query endpoint, e.g. http://127.0.0.1:7878/query")],
    label_predicates: Annotated[list[str] | None, typer.Option(
        "--label-predicate", help="IRI of a predicate whose literals name things (beyond rdfs:label, "
                                  "skos:prefLabel, schema:name, foaf:name, dcterms:title); repeatable")] = None,
    graph: Annotated[str | None, typer.Option("--graph", help="the graph the data is in, sent as "
                                                               "default-graph-uri (Virtuoso)")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="seconds any one request may take")] = 60.0,
    page_size: Annotated[int, typer.Option("--page-size", help="rows per request; at most the server's row "
                                                               "cap (Virtuoso: ResultSetMaxRows)")] = 10_000,
    home: Annotated[Path | None, typer.Option("--home", help="kgteam home (default $KGTEAM_HOME or ~/.kgteam)")] = None,
    replace: Annotated[bool, typer.Option("--replace", help="replace a loaded KG of that name (its store is "
                                                            "deleted)")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress line")] = False,
) -> None:
    """Register a SPARQL endpoint as KG NAME: its label index is built by streaming the endpoint's
    naming triples in pages; the triples stay on the server."""
    import sys
    import time

    from kgteam.tools.loading.endpoint import connect_endpoint
    from kgteam.tools.loading.errors import LoadError

    started = time.perf_counter()

    def progress(what: str, rows: int) -> None:
        rate = rows / max(time.perf_counter() - started, 1e-9)
        sys.stderr.write(f"\rconnecting {name}: {rows:,} {what} read ({rate:,.0f}/s)   ")
        sys.stderr.flush()

    try:
        m = connect_endpoint(name, url, home=home, default_graph=graph, timeout_s=timeout, page_size=page_size,
                             label_predicates=label_predicates or (), progress=None if quiet else progress,
                             replace=replace)
    except LoadError as exc:
        if not quiet:
            sys.stderr.write("\n")
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise fail(f"interrupted; nothing was registered as {name!r}", 130) from None
    if not quiet:
        sys.stderr.write("\n")
    c = m.counts
    seconds = time.perf_counter() - started
    triples = f"{c.triples:,} triples" if c.triples else "triples not counted (the server did not count in time)"
    typer.echo(f"KG '{name}' connected to {url}: {triples}, {c.label_triples:,} label triples read, "
               f"{c.entities:,} named entities, {c.relations:,} relations in {seconds:,.1f}s; "
               f"use it with --kg {name}")


@kg_app.command("export")
def export(
    name: Annotated[str, typer.Argument(help="the installed KG (see `kgteam kgs`)")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="the file to write (default NAME.nt or NAME.nq; "
                                                                 "'-' for stdout)")] = None,
    format: Annotated[str, typer.Option("--format", "-f", help="nt (the default graph, what kgteam loads "
                                                               "into) or nq (every graph)")] = "nt",
    home: Annotated[Path | None, typer.Option("--home", help="kgteam home (default $KGTEAM_HOME or ~/.kgteam)")] = None,
) -> None:
    """Write a KG's triples to a file a SPARQL server loads (Oxigraph, Virtuoso, QLever; docs/endpoints.md)."""
    from kgteam.tools.kg import KGNotFoundError, kg_folder
    from kgteam.tools.loading.errors import LoadError
    from kgteam.tools.loading.export import export_kg

    try:
        folder = kg_folder(name, home)
    except KGNotFoundError as exc:
        raise fail(str(exc)) from None
    target = None if out is not None and str(out) == "-" else (out or Path(f"{name}.{format}"))
    try:
        n = export_kg(folder, target, format)
    except LoadError as exc:
        raise fail(str(exc)) from None
    if target is not None:
        typer.echo(f"KG '{name}': {n:,} triples written to {target} ({format})", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(kg_app, name="kg")
