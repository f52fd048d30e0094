"""The model-free floor of a team on every KG we have: ``--model none``, seeded samples, JSON out.

Per set: Hits@1 (the first answer value is a gold answer; "I don't know" is a miss),
hallucinated (answered with a wrong first value), missing (said "I don't know"), grounded share,
seconds per question. KGs are built into a temporary (or given) KGTEAM home from
``shared/data`` (WC2014 and PathQuestion are internal-only: never copied into the repository),
plus the small KG written for kgteam's tests (``tests/data/kgs/atelier``).

    .venv/bin/python benchmarks/floor.py --n 200 --seed 0 > floor.json
    .venv/bin/python benchmarks/floor.py --sets pq:2H pq:3H --n 50
    .venv/bin/python benchmarks/floor.py --n 200 --tune 200   # with lexicons learned from other questions
    .venv/bin/python benchmarks/floor.py --team examples/teams/kerag.yaml --sets wc2014:C own:atelier:joins
    .venv/bin/python benchmarks/floor.py --model local --n 20   # the embedded model instead of none
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kgteam.eval.datasets import (
    PATHQUESTION_BASE,
    WC2014_BASE,
    DatasetItem,
    default_data_dir,
    load_dataset,
    sample,
)
from kgteam.eval.metrics import Predicted, match_item

ROOT = Path(__file__).resolve().parents[1]
OWN_KGS = ROOT / "tests" / "data" / "kgs"

# dataset spec -> (KG name, KB file relative to the data folder or an own-KG folder, format, base IRI)
SETS: dict[str, tuple[str, str, str, str | None]] = {
    "metaqa-consistent:1-hop": ("metaqa", "metaqa/kb.txt", "metaqa", None),
    "metaqa-consistent:2-hop": ("metaqa", "metaqa/kb.txt", "metaqa", None),
    "metaqa-consistent:3-hop": ("metaqa", "metaqa/kb.txt", "metaqa", None),
    "wc2014:P1": ("wc2014", "wc2014/WC2014.txt", "tsv", WC2014_BASE),
    "wc2014:P2": ("wc2014", "wc2014/WC2014.txt", "tsv", WC2014_BASE),
    "wc2014:C": ("wc2014", "wc2014/WC2014.txt", "tsv", WC2014_BASE),
    "pq:2H": ("pq2h", "pathquestion/2H-kb.txt", "tsv", PATHQUESTION_BASE),
    "pq:3H": ("pq3h", "pathquestion/3H-kb.txt", "tsv", PATHQUESTION_BASE),
}
DEFAULT_SETS = [s for s in SETS if s != "wc2014:C"] + ["own:atelier"]  # own:atelier:joins for two-entity questions


def own_set(name: str) -> tuple[Path, Path]:
    """``atelier`` -> its KG and ``questions.jsonl``; ``atelier:joins`` -> its KG and ``joins.jsonl``."""
    name, _, part = name.partition(":")
    folder = OWN_KGS / name
    kg = next(iter(sorted(folder.glob("*.ttl"))), None)
    questions = folder / f"{part or 'questions'}.jsonl"
    if kg is None or not questions.is_file():
        raise SystemExit(f"own KG {name!r}: expected a .ttl and {questions.name} in {folder}")
    return kg, questions


def ensure_kg(name: str, sources: list[Path], fmt: str | None, base: str | None, home: Path) -> None:
    from kgteam.tools.loading import build_kg

    if (home / "kgs" / name / "manifest.json").exists():
        return
    kwargs: dict[str, Any] = {"home": home, "progress": False}
    if fmt:
        kwargs["format"] = fmt
    if base:
        kwargs["base_iri"] = base
    build_kg(sources, name, **kwargs)


def load_set(spec: str, data: Path, home: Path, n: int, seed: int) -> tuple[str, list[DatasetItem]] | str:
    """The KG (built into ``home`` once) and the seeded questions of a set, or why it was skipped."""
    if spec.startswith("own:"):
        kg_file, questions = own_set(spec.split(":", 1)[1])
        name = spec.split(":")[1]
        ensure_kg(name, [kg_file], None, None, home)
        return name, sample(load_dataset(str(questions)), n, seed)
    kg_name, kb, fmt, base = SETS[spec]
    if not (data / kb).exists():
        return f"{kb} not available"
    ensure_kg(kg_name, [data / kb], fmt, base, home)
    return kg_name, sample(load_dataset(spec, data), n, seed)


def first_hit(answer: Any, item: DatasetItem) -> bool:
    if not answer.values or answer.status != "answered":
        return False
    first = answer.values[0]
    pred = Predicted(label=first.label, iri=first.iri)
    return any(match_item(pred, gold) for gold in item.answers)


async def run_set(spec: str, items: list[DatasetItem], kg_name: str, home: Path, team_file: Path | None,
                  model: str = "none") -> dict[str, Any]:
    from kgteam.cli.team_setup import choose_team
    from kgteam.config.schema import KGSpec
    from kgteam.team_builder import open_team

    spec_team, _ = choose_team(team_file, model=model)
    spec_team = spec_team.model_copy(update={"kg": KGSpec(name=kg_name)})
    hits = halluc = missing = grounded = wrong_grounded = errors = 0
    seconds: list[float] = []
    wrong: list[dict[str, Any]] = []
    with open_team(spec_team, home=home) as runner:
        for item in items:
            t0 = time.perf_counter()
            answer = await runner.ask(item.question)
            seconds.append(time.perf_counter() - t0)
            hit = first_hit(answer, item)
            hits += hit
            grounded += answer.grounded
            if answer.status == "error":
                errors += 1
            elif answer.status != "answered" or not answer.values:
                missing += 1
            elif not hit:
                halluc += 1
                wrong_grounded += answer.grounded
                if len(wrong) < 5:
                    wrong.append({"question": item.question, "answer": answer.values[0].label,
                                  "gold": [g.label for g in item.answers[:3]]})
    n = len(items)
    return {
        "questions": n, "hits_at_1": round(hits / n, 4) if n else None,
        "hallucinated": round(halluc / n, 4) if n else None, "missing": round(missing / n, 4) if n else None,
        "errors": errors, "grounded": round(grounded / n, 4) if n else None,
        "wrong_and_grounded": round(wrong_grounded / n, 4) if n else None,
        "seconds_mean": round(statistics.fmean(seconds), 3) if seconds else None,
        "wrong_examples": wrong,
    }


def prepare_lexicons(specs: list[str], data: Path, home: Path, n: int, seed: int, tune: int) -> dict[str, Any]:
    """Per KG: a lexicon learned from ``tune`` examples per set that are *not* in the evaluated
    sample (``kgteam tune``'s code), or no lexicon at all when ``tune`` is 0 (zero-shot)."""
    from kgteam.eval.tuning import derive_lexicon
    from kgteam.roles.semantic.layer import SemanticLayer
    from kgteam.roles.semantic.similarity import embedder_similarity
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.lexicon import LEXICON_FILE, Lexicon, write_lexicon

    by_kg: dict[str, list[DatasetItem]] = {}
    for spec in specs:
        loaded = load_set(spec, data, home, None, seed)  # type: ignore[arg-type]
        if isinstance(loaded, str):
            continue
        kg_name, items = loaded
        evaluated = {id(it) for it in sample(items, n, seed)}
        rest = [it for it in items if id(it) not in evaluated]
        by_kg.setdefault(kg_name, []).extend(sample(rest, tune, seed + 1) if tune else [])
    report: dict[str, Any] = {}
    for kg_name, examples in by_kg.items():
        kg = open_kg(kg_name, home=home)
        (kg.path / LEXICON_FILE).unlink(missing_ok=True)
        if examples:
            tools = KGTools.from_kg(kg, lexicon=Lexicon())
            layer = SemanticLayer(tools.toolbox(), embedder_similarity(tools.embedder))
            lexicon, found = asyncio.run(derive_lexicon(layer, examples))
            write_lexicon(lexicon, kg.path)
            report[kg_name] = {"examples": len(examples), "phrases": [f"{p.phrase} -> {p.label}" for p in found.learned]}
            tools.close()
        else:
            kg.close()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="questions per set (seeded sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sets", nargs="*", default=DEFAULT_SETS,
                        help=f"datasets: {', '.join([*SETS, 'own:NAME'])}")
    parser.add_argument("--team", type=Path, default=None, help="team file (default: the built-in Triad team)")
    parser.add_argument("--home", type=Path, default=None, help="KGTEAM home to build/reuse KGs in (default: temp)")
    parser.add_argument("--model", default="none", help="model flag as on the CLI (default none: the floor; "
                                                         "local: the embedded SmolLM2 server)")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--tune", type=int, default=0, help="learn each KG's lexicon from this many examples per set "
                                                             "outside the evaluated sample (0: zero-shot, no lexicon)")
    args = parser.parse_args(argv)
    data = args.data_dir or default_data_dir()
    out: dict[str, Any] = {"benchmark": "floor", "model": args.model, "team": str(args.team or "built-in triad"),
                           "n": args.n, "seed": args.seed, "results": {}}
    with tempfile.TemporaryDirectory(prefix="kgteam-floor-") as tmp:
        home = args.home or Path(tmp)
        out["tuned"] = prepare_lexicons(args.sets, data, home, args.n, args.seed, args.tune)
        for spec in args.sets:
            started = time.perf_counter()
            loaded = load_set(spec, data, home, args.n, args.seed)
            if isinstance(loaded, str):
                out["results"][spec] = {"skipped": loaded}
                continue
            kg_name, items = loaded
            result = asyncio.run(run_set(spec, items, kg_name, home, args.team, args.model))
            result["seconds_total"] = round(time.perf_counter() - started, 1)
            out["results"][spec] = result
            print(f"{spec}: hits@1 {result['hits_at_1']} hallucinated {result['hallucinated']} "
                  f"missing {result['missing']}", file=sys.stderr, flush=True)
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
