"""``kgteam eval``, ``kgteam report`` and ``kgteam diagnose``: run, report and explain evaluations."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from kgteam.cli.team_setup import CORPUS_HELP, MODEL_HELP, check_corpus, choose_team, ensure_kg

console = Console(stderr=True)


def _fail(message: str) -> NoReturn:
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(2)


def _load_items(dataset: str, limit: int | None, seed: int, data_dir: Path | None,
                where: list[str] | None, home: Path | None = None) -> list[Any]:
    from kgteam.eval.datasets import PACKAGED_SAMPLE, DatasetError, load_dataset, sample, slice_by

    conds: dict[str, str] = {}
    for cond in where or []:
        key, eq, value = cond.partition("=")
        if not eq or not key.strip():
            _fail(f"--where {cond!r} is not TAG=VALUE (e.g. --where hops=2)")
        conds[key.strip()] = value.strip()
    try:
        items = load_dataset(dataset, data_dir, home=home)
    except DatasetError as exc:
        _fail(str(exc))
    if items and items[0].extra.get("source") == PACKAGED_SAMPLE:
        console.print(f"note: {dataset} is the {len(items)}-question sample shipped with kgteam; "
                      "`kgteam datasets get metaqa` fetches the full set")
    if conds:
        everything, items = items, slice_by(items, **conds)
        if not items:
            tags = sorted({k for it in everything for k in it.tags})
            _fail(f"no question of {dataset} ({len(everything)}) matches --where "
                  f"{' '.join(f'{k}={v}' for k, v in conds.items())} (tags: {', '.join(tags) or 'none'})")
    items = sample(items, limit, seed)
    if not items:
        _fail(f"no questions selected from {dataset} (--limit {limit})")
    return items


ANSWERS_HELP = ("also write one row per question (question, gold, answer, grade, stop reason, cost) to this "
                "file: .csv or .jsonl, the suffix picks the format")


def _check_answers_path(path: Path | None) -> None:
    if path is None:
        return
    from kgteam.eval.answers_file import answers_format

    try:
        answers_format(path)
    except ValueError as exc:
        _fail(str(exc))
    _check_writable(path, "--answers")


def _write_answers(path: Path, runs: list[Path], only_ids: set[str] | None = None) -> None:
    from kgteam.eval.answers_file import write_answers
    from kgteam.eval.report import load_runs

    loaded = load_runs(runs)
    if only_ids is not None:  # eval: the questions of this selection, as the summary counts them
        for run in loaded:
            run.records = [r for r in run.records if r.id in only_ids]
    try:
        count = write_answers(path, loaded)
    except (OSError, ValueError) as exc:
        _fail(f"cannot write {path}: {getattr(exc, 'strerror', None) or exc}")
    console.print(f"answers: {path} ({count} rows)")


def _check_writable(out: Path, flag: str = "--out") -> None:
    """Make the output's folder and prove a file can be written there, before any expensive step."""
    folder = out.parent if str(out.parent) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".kgteam-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        _fail(f"cannot write {out}: {exc.strerror or exc}")
    if out.exists() and out.is_dir():
        _fail(f"{flag} {out} is a folder; give a file path such as {out / ('answers.csv' if flag == '--answers' else 'run.jsonl')}")


def _open_tools(kg: str, stack: contextlib.ExitStack, *, max_rows: int = 10_000, timeout_s: float = 10.0,
                home: Path | None = None) -> Any:
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.lexicon import LexiconError
    from kgteam.tools.types import ToolError

    try:
        graph = open_kg(kg, home=home)
    except (ToolError, OSError) as exc:  # KGNotFoundError is both
        _fail(f"cannot open KG {kg!r}: {exc}")
    stack.callback(graph.close)
    try:  # with its vectors and lexicon, if it has them
        tools = KGTools.from_kg(graph, max_rows=max_rows, default_timeout_s=timeout_s)
    except LexiconError as exc:
        _fail(str(exc))
    return tools


def _judge_model(spec: Any, stack: contextlib.ExitStack) -> Any:
    """The judge uses the team's default model (a separate instance, so its calls are not the team's)."""
    from kgteam import team_builder as factory

    models = factory.build_models(spec, stack)
    return models[0] if isinstance(models, tuple) else models


def _default_out(dataset: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in Path(dataset).stem if dataset)
    return Path("runs") / f"{safe}-{stamp}.jsonl"


def _print_summary(summary: dict[str, Any]) -> None:
    keys = ("n", "accuracy", "hallucination", "missing", "truthfulness", "exact_match", "f1", "hits1", "groundedness",
            "wrong_grounded", "ece", "wrong_at_90", "wrong_at_90_stated", "brier", "calibrated_n",
            "verifiability", "verifiability_na", "ungrounded_verdicts", "llm_calls_mean", "tokens_mean",
            "seconds_mean", "errors")
    if summary.get("open_ended_n"):
        keys = (*keys, "rouge_l", "factual_precision", "open_ended_n")
    console.print(" ".join(f"{k}={summary[k]:.3f}" if isinstance(summary.get(k), float) else f"{k}={summary.get(k)}"
                           for k in keys))


# what must stay the same for the records of one run file to be comparable
RESUME_KEYS = ("dataset", "team", "model", "kg", "seed", "limit", "where", "judge")


def _resume_meta(out: Path, old: dict[str, Any], new: dict[str, Any], *, force: bool) -> dict[str, Any]:
    """Refuse to resume a run made with another setup (mixed records would be meaningless)."""
    diffs = [f"{k}: {old[k]!r} in the run file, {new[k]!r} now" for k in RESUME_KEYS
             if k in old and (sorted(old[k]) if k == "where" and old[k] else old[k]) != new[k]]
    if diffs and not force:
        _fail(f"{out} was made with another setup, resuming would mix them:\n  " + "\n  ".join(diffs)
              + "\nuse a new --out, or --force-resume to append anyway")
    if not old:
        return new
    resumed = [*old.get("resumed", []), {"at": new["started"], "argv": new["argv"],
                                         **({"forced_differences": diffs} if diffs else {})}]
    return {**old, "resumed": resumed}


def register(app: typer.Typer) -> None:
    """Adds ``eval``, ``report`` and ``diagnose``."""

    @app.command("eval")
    def eval_command(
        dataset: Annotated[str, typer.Argument(help="metaqa:1-hop, metaqa-consistent:2-hop, wc2014:P1, pq:2H, "
                                               "qald9:test:en, qald10:en, lcquad1:test, claims:KG[:N[:SEED]], "
                                               "or a file")],
        team: Annotated[Path | None, typer.Option("--team", help="team YAML (default: the built-in Triad team)")] = None,
        model: Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP)] = None,
        limit: Annotated[int | None, typer.Option("--limit", min=0, help="seeded sample of N questions")] = None,
        seed: Annotated[int, typer.Option("--seed")] = 0,
        concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 4,
        out: Annotated[Path | None, typer.Option("--out", help="run file (JSONL); an existing file is resumed")] = None,
        kg_flags: Annotated[list[str] | None, typer.Option("--kg", help="KG name or folder (overrides the team file's "
                                                           "kg); repeat it to read several KGs at once")] = None,
        corpus: Annotated[str | None, typer.Option("--corpus", help=CORPUS_HELP)] = None,
        judge: Annotated[bool, typer.Option("--judge/--no-judge", help="LLM judge (team's model) for undecided grades")] = False,
        timeout_s: Annotated[float | None, typer.Option("--timeout", help="wall-clock limit per question (seconds)")] = None,
        retry_errors: Annotated[bool, typer.Option("--retry-errors", help="on resume, redo questions that errored")] = False,
        where: Annotated[list[str] | None, typer.Option("--where", help="slice by tag, e.g. --where hops=2")] = None,
        data_dir: Annotated[Path | None, typer.Option("--data-dir", envvar="KGTEAM_DATA_DIR")] = None,
        diagnose_only: Annotated[bool, typer.Option("--diagnose", help="retrieval diagnostics only (no LLM); needs --kg")] = False,
        report_dir: Annotated[Path | None, typer.Option("--report", help="also write a report to this folder")] = None,
        force_resume: Annotated[bool, typer.Option("--force-resume", help="resume even if the run file was made "
                                                   "with another dataset/team/model/KG/seed/limit")] = False,
        home: Annotated[Path | None, typer.Option("--home", help="kgteam home: KGs and sessions (default "
                                                  "$KGTEAM_HOME or ~/.kgteam)")] = None,
        answers: Annotated[Path | None, typer.Option("--answers", help=ANSWERS_HELP)] = None,
    ) -> None:
        """Run a team over a dataset: one JSONL record per question, resumable, with grades and cost."""
        several = kg_flags if kg_flags and len(kg_flags) > 1 else None
        kg = kg_flags[0] if kg_flags and not several else None
        _check_answers_path(answers)  # before anything runs
        if corpus is not None:
            check_corpus(corpus, home)
        items = _load_items(dataset, limit, seed, data_dir, where, home)
        if diagnose_only:
            if not kg:
                console.print("[red]error:[/red] --diagnose needs one --kg NAME")
                raise typer.Exit(2)
            _run_diagnostics(items, kg, out, max_hops=3, top_n=10, budget=300, concurrency=concurrency, home=home)
            return
        from kgteam.eval.report import latest_records, summarize, write_report
        from kgteam.eval.runner import read_meta, read_run, run_eval, write_meta
        from kgteam.team_builder import TeamBuildError, build_team

        spec, _ = choose_team(team, model=model, kg=several, corpus=corpus, home=home)  # invalid files exit 2
        if not kg:  # the built-in team's demo KG is installed on first use, as for `ask`
            ensure_kg(spec, home, say=lambda text: console.print(text))
        out = out or _default_out(dataset)
        _check_writable(out)  # before the team is built: a missing folder is made, a read-only one refused
        try:
            previous = read_run(out)  # fail before anything runs when the file to resume is corrupt
        except ValueError as exc:
            _fail(f"cannot resume {out}: {exc}")
        meta = {"dataset": dataset, "team": str(team) if team else "built-in triad", "limit": limit, "seed": seed,
                "where": sorted(where or []), "concurrency": concurrency,
                "kg": kg or spec.kg_title, "judge": judge,
                **({"corpus": corpus} if corpus else {}),
                "model": getattr(spec.model, "model", None) or getattr(spec.model, "provider", None),
                "started": datetime.now(UTC).isoformat(timespec="seconds"), "argv": sys.argv[1:]}
        if previous:
            meta = _resume_meta(out, read_meta(out), meta, force=force_resume)
        with contextlib.ExitStack() as stack:
            tools = _open_tools(kg, stack, home=home) if kg else None
            try:
                runner = build_team(spec, stack=stack, tools=tools, home=home)
            except TeamBuildError as exc:
                console.print(f"[red]error:[/red] cannot build team {spec.name!r}: {exc}")
                raise typer.Exit(2) from None
            # the team's own model (one local server, not two); judge calls are not counted as the team's
            judge_model = (getattr(runner, "model", None) or _judge_model(spec, stack)) if judge else None
            write_meta(out, meta)
            console.print(f"run file: {out} ({len(items)} questions)")
            summary = asyncio.run(run_eval(items, runner, out, concurrency=concurrency, judge_model=judge_model,
                                           tools=getattr(runner, "kg", None) or tools, timeout_s=timeout_s,
                                           retry_errors=retry_errors))
        console.print(f"done {summary.done}, skipped (resumed) {summary.skipped}, errors {summary.errors}")
        ids = {it.id for it in items}
        # one record per id, the latest (a --retry-errors rerun appends a new record after the old error)
        _print_summary(summarize(latest_records([r for r in read_run(out) if r.id in ids])))
        if report_dir:
            console.print(f"report: {write_report([out], report_dir)}")
        if answers:
            _write_answers(answers, [out], only_ids=ids)

    @app.command("report")
    def report_command(
        runs: Annotated[list[Path], typer.Argument(help="one or more run files (compared side by side)")],
        out: Annotated[Path, typer.Option("--out", help="folder for report.md and the PNG plots")] = Path("report"),
        title: Annotated[str, typer.Option("--title")] = "kgteam evaluation",
        answers: Annotated[Path | None, typer.Option("--answers", help=ANSWERS_HELP)] = None,
    ) -> None:
        """Markdown report with tables (overall, by hop, by question type, failures) and PNG plots."""
        from kgteam.eval.report import write_report

        _check_answers_path(answers)
        for run in runs:
            if not run.exists():
                console.print(f"[red]error:[/red] run file not found: {run}")
                raise typer.Exit(2)
        try:
            path = write_report(runs, out, title=title)
        except ValueError as exc:  # a corrupt run file (an invalid record before the last line)
            _fail(str(exc))
        typer.echo(str(path))
        if answers:
            _write_answers(answers, runs)

    @app.command("diagnose")
    def diagnose_command(
        dataset: Annotated[str, typer.Argument(help="dataset name or file (needs topic entities with IRIs)")],
        kg: Annotated[str, typer.Option("--kg", help="KG name or folder")],
        limit: Annotated[int, typer.Option("--limit", min=0)] = 200,
        seed: Annotated[int, typer.Option("--seed")] = 0,
        max_hops: Annotated[int, typer.Option("--max-hops", min=1, max=3)] = 3,
        top_n: Annotated[int, typer.Option("--top-n", help="relation paths kept per topic and hop by KERAG's "
                                                       "schema filter")] = 10,
        budget: Annotated[int, typer.Option("--budget", help="triple budget of the filtered neighbourhood")] = 300,
        concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 2,
        where: Annotated[list[str] | None, typer.Option("--where")] = None,
        data_dir: Annotated[Path | None, typer.Option("--data-dir", envvar="KGTEAM_DATA_DIR")] = None,
        out: Annotated[Path | None, typer.Option("--out", help="per-question diagnostics (JSONL)")] = None,
        home: Annotated[Path | None, typer.Option("--home", help="kgteam home: KGs and sessions (default "
                                                  "$KGTEAM_HOME or ~/.kgteam)")] = None,
    ) -> None:
        """Retrieval ceiling without any LLM: linking rank, h-hop answer recall, filtered recall, gold query."""
        items = _load_items(dataset, limit, seed, data_dir, where, home)
        _run_diagnostics(items, kg, out, max_hops=max_hops, top_n=top_n, budget=budget, concurrency=concurrency,
                         home=home)


def _run_diagnostics(items: list[Any], kg: str, out: Path | None, *, max_hops: int, top_n: int, budget: int,
                     concurrency: int, home: Path | None = None) -> None:
    from rich.progress import Progress

    from kgteam.eval.diagnostics import DiagnosticsConfig, diagnose, summarize_diagnostics

    cfg = DiagnosticsConfig(max_hops=max_hops, top_n=top_n, triple_budget=budget)
    if out is not None:
        _check_writable(out)
    with contextlib.ExitStack() as stack:
        tools = _open_tools(kg, stack, max_rows=cfg.max_triples + 1, timeout_s=cfg.timeout_s, home=home)
        fh = stack.enter_context(open(out, "w", encoding="utf-8")) if out else None
        progress = stack.enter_context(Progress(console=console))
        task = progress.add_task("diagnose", total=len(items))

        def on_item(d: Any) -> None:
            progress.advance(task)
            if fh:
                fh.write(d.model_dump_json() + "\n")
                fh.flush()

        results = asyncio.run(diagnose(tools, items, cfg, concurrency=concurrency, on_item=on_item))
    typer.echo(json.dumps(summarize_diagnostics(results, budget=cfg.triple_budget), indent=2))
