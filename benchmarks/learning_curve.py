"""Learning curve of the trained reader: model-free Hits@1, wrong-stated and ECE against the number
of examples in the KG's bank, with training time (issue 23). Prints JSON.

The evaluated questions are the set's usual sample (``--limit``, ``--seed``: the questions
``kgteam eval`` asks); the examples come from the rest of the set, or from ``--examples-from``,
and never share a topic entity with them (PathQuestion repeats a fact in paraphrases: a split by
line would leak). ``--bank FILE`` keeps the recorded examples for the next run. ``--folds K`` (the small atelier set) evaluates every
question once, with a reader trained on the other folds. The KG folder is copied to a scratch home
first: the installed KG is never written.

    KGTEAM_DATA_DIR=/work/shared/data python benchmarks/learning_curve.py metaqa:1-hop --kg metaqa \\
        --home /tmp/kgh --sizes 0,25,100,400 --limit 200 --bank /tmp/metaqa1-pool.json
    python benchmarks/learning_curve.py tests/data/kgs/atelier/questions.jsonl --kg atelier --home /tmp/kgh --folds 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kgteam.eval.datasets import DatasetItem, load_dataset, sample
from kgteam.eval.runner import read_run
from kgteam.eval.teaching import record_bank
from kgteam.roles.semantic.layer import SemanticLayer
from kgteam.roles.semantic.reader import teach
from kgteam.roles.semantic.similarity import embedder_similarity
from kgteam.tools.example_bank import READER_FILE, ExampleBank, write_bank, write_json
from kgteam.tools.kg import open_kg
from kgteam.tools.kg_tools import KGTools

_METRIC = re.compile(r"\b(hits1|hallucination|ece|seconds_mean|n)=([0-9.]+)")


def topic(item: DatasetItem) -> str:
    """What a question is about, for the split: all its topic entities together. A paraphrase of
    the same fact names the same ones; a question about a position and a club shares no topic
    with one about that position and a country (keyed by the first entity alone, the four
    positions of WC2014 C would all fall on the evaluated side, leaving no example of them)."""
    if item.topic_entities:
        return "|".join(sorted((t.iri or t.label).lower() for t in item.topic_entities))
    return item.question.lower()


def evaluate(items: list[DatasetItem], kg: str, home: Path, work: Path, out: Path | None = None) -> dict[str, float]:
    """``kgteam eval --model none`` over ``items`` (a file of their own); its summary metrics (the
    run file is ``out``, kept, when given)."""
    file = work / "eval.jsonl"
    file.write_text("".join(json.dumps(i.model_dump(exclude_none=True)) + "\n" for i in items), encoding="utf-8")
    out = out or work / f"run-{time.monotonic_ns()}.jsonl"
    out.unlink(missing_ok=True)  # a kept run file of an earlier call is not resumed
    done = subprocess.run([sys.executable, "-m", "kgteam", "eval", str(file), "--model", "none", "--kg", kg,
                           "--home", str(home), "--seed", "0", "--concurrency", "1", "--out", str(out)],
                          capture_output=True, text=True, check=False)
    found = {k: float(v) for k, v in _METRIC.findall(re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr))}
    if "hits1" not in found:
        raise SystemExit(f"eval failed: {done.stdout[-500:]} {done.stderr[-1500:]}")
    found.update(confident_misses(out))
    return found


def confident_misses(run: Path) -> dict[str, float]:
    """Wrong stated answers said with confidence >= 0.9 (share of the run), and how many of the
    stated confidences came through the KG's own map rather than the playbook's."""
    records = read_run(run)
    wrong = sum(1 for r in records if r.stated() and r.grading is not None and r.grading.grade == "hallucinated"
                and (r.confidence or 0.0) >= 0.9)
    kg_map = sum(1 for r in records if r.stated() and (r.calibration or "").startswith("examples of KG"))
    return {"wrong_at_0.9": round(wrong / max(1, len(records)), 4), "kg_mapped": kg_map}


def record(items: list[DatasetItem], kg_home: Path, kg: str) -> tuple[ExampleBank, float]:
    graph = open_kg(kg, home=kg_home)
    tools = KGTools.from_kg(graph, reader=None)
    try:
        started = time.perf_counter()
        layer = SemanticLayer(tools.toolbox(), embedder_similarity(tools.embedder), reader=None)
        bank = asyncio.run(record_bank(layer, items))
        return bank, time.perf_counter() - started
    finally:
        tools.close()


def install(bank: ExampleBank, folder: Path) -> dict[str, float]:
    """Train on ``bank``, write bank and reader into the scratch KG folder; training numbers."""
    started = time.perf_counter()
    reader, held = teach(bank.examples)
    seconds = time.perf_counter() - started
    write_bank(bank, folder)
    write_json(reader.to_json(), folder / READER_FILE)
    return {"train_s": round(seconds, 3), "fit_s": reader.stats.get("seconds", 0.0),
            "held_out_hand": round(held.hand_rate, 4), "held_out_reader": round(held.reader_rate, 4)}


def clear(folder: Path) -> None:
    for name in ("examples.json", READER_FILE):
        (folder / name).unlink(missing_ok=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset")
    ap.add_argument("--kg", required=True)
    ap.add_argument("--home", type=Path, required=True, help="the installed KGs (only read: copied first)")
    ap.add_argument("--examples-from", help="dataset of the examples (default: split the evaluated one by topic)")
    ap.add_argument("--sizes", default="0,25,100")
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--folds", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bank", type=Path, help="a JSON file of the recorded example pool: read when it exists, "
                                              "else written (recording is the slow part)")
    ap.add_argument("--runs", type=Path, help="keep each size's run file here (run-SIZE.jsonl), to read the misses")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="learning-curve-"))
    home = work / "home"
    shutil.copytree(args.home / "kgs" / args.kg, home / "kgs" / args.kg)
    folder = home / "kgs" / args.kg
    items = load_dataset(args.dataset)
    result: dict[str, object] = {"dataset": args.dataset, "kg": args.kg, "limit": args.limit, "seed": args.seed}
    try:
        if args.folds:
            chosen = sample(items, args.limit, args.seed)
            topics = sorted({topic(i) for i in chosen})
            random.Random(args.seed).shuffle(topics)
            fold = {t: n % args.folds for n, t in enumerate(topics)}
            zero = evaluate(chosen, args.kg, home, work)
            bank, rec_s = record(chosen, home, args.kg)
            by_id = {e.id: e for e in bank.examples}
            parts, trains = [], []
            for k in range(args.folds):
                held = [i for i in chosen if fold[topic(i)] == k]
                rest = [by_id[i.id] for i in chosen if fold[topic(i)] != k and i.id in by_id]
                trains.append(install(ExampleBank(examples=rest), folder))
                parts.append(evaluate(held, args.kg, home, work))
            total = sum(p["n"] for p in parts)
            merged = {m: round(sum(p[m] * p["n"] for p in parts) / total, 4) for m in ("hits1", "hallucination", "ece")}
            result["curve"] = [{"examples": 0, **zero},
                               {"examples": f"{args.folds}-fold (~{len(chosen) * (args.folds - 1) // args.folds})",
                                **merged, "n": total, "record_s": round(rec_s, 2), "train": trains,
                                "note": "fold metrics averaged, weighted by n (ECE too)"}]
        else:
            # the evaluated questions are the set's usual sample (``kgteam eval --limit N --seed S``);
            # the examples come from the rest of the set (or --examples-from), none about the same topic
            # entities as one of them (see topic())
            evaluated = sample(items, args.limit, args.seed)
            seen = {topic(i) for i in evaluated}
            pool = [i for i in (load_dataset(args.examples_from) if args.examples_from else items)
                    if topic(i) not in seen]
            random.Random(args.seed).shuffle(pool)
            sizes = [int(s) for s in args.sizes.split(",")]
            cached = args.bank and args.bank.exists()
            if cached:  # a pool recorded before (--bank): same set, same seed, so the same examples
                bank, rec_s = ExampleBank.model_validate_json(args.bank.read_text(encoding="utf-8")), 0.0
            else:
                bank, rec_s = record(pool[: max(sizes)], home, args.kg) if max(sizes) else (ExampleBank(), 0.0)
                if args.bank:
                    args.bank.write_text(bank.model_dump_json(exclude_defaults=True), encoding="utf-8")
            if len(bank.examples) < max(sizes):  # an example whose queries failed is left out
                print(f"note: {len(bank.examples)} examples recorded, fewer than {max(sizes)}", file=sys.stderr)
            curve = []
            for size in sizes:
                clear(folder)
                row: dict[str, object] = {"examples": size}
                if size:
                    row.update(install(ExampleBank(examples=bank.examples[:size]), folder))
                if args.runs:
                    args.runs.mkdir(parents=True, exist_ok=True)
                row.update(evaluate(evaluated, args.kg, home, work, args.runs / f"run-{size}.jsonl" if args.runs else None))
                curve.append(row)
            result.update({"record_s_per_example": round(rec_s / max(1, max(sizes)), 3), "curve": curve})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
