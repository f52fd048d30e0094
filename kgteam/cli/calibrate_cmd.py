"""``kgteam calibrate``: fit a confidence -> probability map from eval run files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console(stderr=True)


def register(app: typer.Typer) -> None:
    """Adds ``calibrate``."""

    @app.command("calibrate")
    def calibrate_command(
        runs: Annotated[list[Path], typer.Argument(help="run files written by `kgteam eval --out` to fit on")],
        out: Annotated[Path, typer.Option("--out", help="the map, as JSON: breakpoints and what it was fitted on")],
        holdout: Annotated[list[Path] | None, typer.Option(
            "--holdout", help="run file(s) the map is not fitted on, to measure it on (repeatable)")] = None,
        bins: Annotated[int, typer.Option("--bins", min=2, max=100, help="equal-width bins of the ECE")] = 10,
        min_width: Annotated[float, typer.Option(
            "--min-width", min=0.0, max=1.0,
            help="merge steps of the map narrower than this span of scores (the shipped map: 0.01)")] = 0.0,
        min_share: Annotated[float, typer.Option(
            "--min-share", min=0.0, max=1.0, help="merge steps resting on less than this share of the pairs")] = 0.0,
    ) -> None:
        """Fit an isotonic map from answer confidence to the probability of being right; print ECE before/after."""
        from kgteam.eval.calibration import (
            CalibrationInputError,
            ece_before_after,
            fit_isotonic,
            pairs_from_runs,
        )

        try:
            pairs = pairs_from_runs(runs)
            held = pairs_from_runs(holdout) if holdout else []
        except CalibrationInputError as exc:
            console.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2) from None
        mapping = fit_isotonic(pairs, sets=[str(r) for r in runs], min_width=min_width, min_share=min_share)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            mapping.dump(out)
        except OSError as exc:
            console.print(f"[red]error:[/red] cannot write {out}: {exc.strerror or exc}")
            raise typer.Exit(2) from None
        before, after = ece_before_after(mapping, pairs, bins)
        result: dict[str, object] = {"out": str(out), "fitted_on": len(pairs), "breakpoints": len(mapping.xs),
                                     "in_sample": {"n": len(pairs), "ece_before": before, "ece_after": after}}
        if held:
            h_before, h_after = ece_before_after(mapping, held, bins)
            result["holdout"] = {"n": len(held), "ece_before": h_before, "ece_after": h_after}
        typer.echo(json.dumps(result, indent=2))
