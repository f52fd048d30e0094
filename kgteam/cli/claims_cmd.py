"""``kgteam claims``: draw a seeded, KG-checked claim set from any loaded KG into a JSONL file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console(stderr=True)


def register(app: typer.Typer) -> None:
    @app.command("claims")
    def claims_command(
        kg: Annotated[str, typer.Argument(help="KG name or folder")],
        n: Annotated[int, typer.Option("--n", min=1, help="claims to draw (a third each: supported, refuted, "
                                                          "not enough info, when the KG has them)")] = 300,
        seed: Annotated[int, typer.Option("--seed")] = 0,
        max_hops: Annotated[int, typer.Option("--max-hops", min=1, max=3)] = 3,
        out: Annotated[Path | None, typer.Option("--out", help="claims file (JSONL); without it the claims "
                                                 "go to stdout and the statistics to stderr")] = None,
        home: Annotated[Path | None, typer.Option("--home", help="kgteam home: KGs and sessions (default "
                                                  "$KGTEAM_HOME or ~/.kgteam)")] = None,
    ) -> None:
        """Claims from 1-3-hop paths of a KG, each re-checked on it; `kgteam eval claims:KG` draws the same set."""
        from kgteam.eval.claims import ClaimSettings, claim_row, claim_stats, generate_claims, run_sync
        from kgteam.protocols.errors import KgteamError
        from kgteam.tools.kg import open_kg
        from kgteam.tools.kg_tools import KGTools

        if out is not None:
            if out.is_dir():
                console.print(f"[red]error:[/red] --out {out} is a folder; give a file such as {out / 'claims.jsonl'}")
                raise typer.Exit(2)
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.touch()
            except OSError as exc:
                console.print(f"[red]error:[/red] cannot write {out}: {exc.strerror or exc}")
                raise typer.Exit(2) from None
        try:
            graph = open_kg(kg, home=home)
            tools = KGTools.from_kg(graph, embedder=None)
        except (KgteamError, OSError) as exc:
            console.print(f"[red]error:[/red] cannot open KG {kg!r}: {exc}")
            raise typer.Exit(2) from None
        try:
            items = run_sync(generate_claims(tools, ClaimSettings(n=n, seed=seed, max_hops=max_hops), kg=graph.name))
        finally:
            tools.close()
        lines = [json.dumps(claim_row(it), ensure_ascii=False) for it in items]
        stats = json.dumps(claim_stats(items))
        if out is None:
            sys.stdout.write("".join(line + "\n" for line in lines))
            console.print(stats)
            return
        out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        console.print(f"claims: {out} ({len(items)})")
        typer.echo(stats)
