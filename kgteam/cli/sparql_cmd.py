"""``kgteam sparql``: look inside a loaded KG with a read-only query, through the same guard the roles use.

Every IRI in the result is shown with its name, as the roles and answers call it (``labels_for``),
unless ``--no-labels``. Prefixes the KG's own data files declared (``@prefix ex: ...``, kept in its
manifest) may be used without a ``PREFIX`` line: the missing declarations are added before the guard.
The table shows KG values as data (:func:`~kgteam.protocols.display.display_text`: one line, control
characters escaped, capped); ``--json`` gives them exact (JSON escapes every control character).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kgteam.cli.errors import fail
from kgteam.protocols.display import display_text
from kgteam.protocols.errors import KgteamError

if TYPE_CHECKING:
    from kgteam.tools.types import SparqlResult


def sparql(
    name: Annotated[str, typer.Argument(help="the loaded KG (see `kgteam kgs`)")],
    query: Annotated[str, typer.Argument(help="SELECT / ASK / CONSTRUCT / DESCRIBE; '-' reads it from stdin")],
    limit: Annotated[int, typer.Option("--limit", min=1, help="row cap (the KG's own cap applies too)")] = 50,
    timeout_s: Annotated[float, typer.Option("--timeout", min=0.1, help="seconds")] = 10.0,
    as_json: Annotated[bool, typer.Option("--json", help="rows as JSON (SPARQL JSON terms)")] = False,
    no_labels: Annotated[bool, typer.Option("--no-labels", help="IRIs only: no name column per IRI column")]
    = False,
    home: Annotated[Path | None, typer.Option("--home", help="KG home (default: $KGTEAM_HOME or ~/.kgteam)")] = None,
) -> None:
    """Run a read-only SPARQL query on a KG. Updates, LOAD and SERVICE are refused, as for the roles.

    The KG's own prefixes (from its Turtle/TriG files) need no PREFIX line."""
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.naming import naming_of
    from kgteam.tools.sparql_prefixes import missing_prefixes, with_prefixes
    from kgteam.tools.types import ToolError

    text = sys.stdin.read() if query == "-" else query
    if not text.strip():
        raise fail("empty query", 2)
    try:
        kg = open_kg(name, home=home)
    except (ToolError, OSError) as exc:
        raise fail(f"cannot open KG {name!r}: {exc}") from None
    # no embedder: nothing here needs one
    tools = KGTools(kg.store, kg.labels, default_timeout_s=timeout_s, naming=naming_of(kg.manifest))
    known = kg.manifest.get("prefixes") or {}
    added = missing_prefixes(text, known)
    text = with_prefixes(text, known)

    async def run() -> tuple[SparqlResult, dict[str, str]]:
        res = await tools.run_sparql(text, limit=limit, timeout_s=timeout_s)
        if no_labels:
            return res, {}
        iris = sorted({t.value for row in res.rows for t in row.values() if t.type == "uri"})
        return res, (await tools.labels_for(iris) if iris else {})

    try:
        result, names = asyncio.run(run())
    except KgteamError as exc:  # a ToolError, or the endpoint of an endpoint KG failing (EndpointUnavailable)
        note = (f" (the KG's prefixes {', '.join(f'{p}:' for p in added)} were declared on "
                f"{len(added)} line(s) added before the query)") if added else ""
        raise fail(f"{exc}{note}", 2) from None
    except KeyboardInterrupt:
        raise fail("interrupted", 130) from None
    finally:
        kg.close()
    if as_json:
        rows = [{k: v.model_dump(exclude_none=True) for k, v in row.items()} for row in result.rows]
        typer.echo(json.dumps({"query": result.query, "variables": result.variables, "rows": rows,
                               "boolean": result.boolean, "truncated": result.truncated,
                               "truncated_by": result.truncated_by, "names": names}, indent=1))
        return
    if result.boolean is not None:
        typer.echo("true" if result.boolean else "false")
        return
    table = Table(box=None, header_style="dim")
    named = set() if no_labels else {
        v for v in result.variables if any(v in row and row[v].type == "uri" for row in result.rows)}
    for var in result.variables:
        table.add_column(var)
        if var in named:
            table.add_column(f"{var} name")
    for row in result.rows:
        cells: list[Text] = []  # KG text, not markup, and shown as data: never a line break or a control code
        for v in result.variables:
            term = row.get(v)
            cells.append(Text(display_text(term.value) if term else ""))
            if v in named:
                name = names.get(term.value, "") if term is not None and term.type == "uri" else ""
                cells.append(Text(display_text(name)))
        table.add_row(*cells)
    Console().print(table)
    more = ""
    if result.truncated:
        more = (f" (cut at the {tools.max_result_bytes}-byte result cap)" if result.truncated_by == "bytes"
                else " (cut at the row cap: --limit)")
    typer.echo(f"{len(result.rows)} rows in {result.elapsed_s:.3f}s{more}")


def register(app: typer.Typer) -> None:
    app.command("sparql")(sparql)
