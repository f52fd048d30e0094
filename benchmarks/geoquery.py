"""GeoQuery, questions people wrote about US geography, over its database as RDF: the public yardstick.

Zero-shot: the KG is loaded as it comes (``geo.nt``: rdfs:label names, camelCase properties) and the
team answers train and dev with nothing learned. Tuned: ``kgteam tune`` learns from the first N
train questions (a learning curve over ``--curve``), and dev is measured after each; the tuning
time is reported per 1,000 examples. The test split is reserved: this script never reads it.

    .venv/bin/python benchmarks/geoquery.py --split dev                      # zero-shot on dev
    .venv/bin/python benchmarks/geoquery.py --split train --out runs/geo     # zero-shot on train, rows kept
    .venv/bin/python benchmarks/geoquery.py --split dev --curve 0,100,250,526  # tuned on train, measured on dev

Prints JSON: per split (and per tuning size) the per-shape block of ``benchmarks/answer_sets.py``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answer_sets import ask_all, read_answer_set, summarize, write_rows  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "geoquery"
KG_NAME = "geoquery"
SPLITS = ("train", "dev")  # test is reserved for measurement by others: never read here


def kgteam(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("kgteam")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, check=False)


def ensure_loaded(home: Path, data: Path) -> None:
    if (home / "kgs" / KG_NAME / "manifest.json").exists():
        return
    done = kgteam("load", str(data / "geo.nt"), "--name", KG_NAME, "--home", str(home), "--quiet")
    if done.returncode:
        raise SystemExit(f"error: loading GeoQuery failed: {done.stderr.strip()[-400:]}")


def measure(home: Path, split: str, data: Path, limit: int | None, out: Path | None, tag: str) -> dict[str, Any]:
    from kgteam import Team

    questions = read_answer_set(data / f"{split}.jsonl")[:limit]
    started = time.perf_counter()
    with Team.default(kg=KG_NAME, model="none", home=home) as team:
        rows = ask_all(team, questions)
    if out is not None:
        write_rows(rows, out / f"{tag}-{split}.jsonl")
    return {"seconds_total": round(time.perf_counter() - started, 1), **summarize(rows)}


def tuned_home(base: Path, n: int, data: Path) -> tuple[Path, float]:
    """A copy of the home whose GeoQuery KG is tuned on the first ``n`` train questions; the seconds taken."""
    home = Path(tempfile.mkdtemp(prefix=f"geo-tuned-{n}-"))
    shutil.copytree(base / "kgs" / KG_NAME, home / "kgs" / KG_NAME)
    examples = home / "examples.jsonl"
    lines = (data / "train.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    examples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    started = time.perf_counter()
    done = kgteam("tune", KG_NAME, "--examples", str(examples), "--home", str(home), "--quiet")
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"error: tuning on {n} examples failed: {done.stderr.strip()[-400:]}")
    return home, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=[*SPLITS, "both"], default="dev")
    parser.add_argument("--limit", type=int, default=None, help="the first N questions of each split")
    parser.add_argument("--curve", default=None, help="tuning sizes, e.g. 0,100,250,526 (measured on --split)")
    parser.add_argument("--home", type=Path, default=None, help="KGTEAM home to load GeoQuery into "
                                                               "(default: a fresh temporary one)")
    parser.add_argument("--data", type=Path, default=DATA, help="the geoquery folder of the shared data")
    parser.add_argument("--out", type=Path, default=None, help="folder for per-question rows")
    args = parser.parse_args(argv)
    if not (args.data / "geo.nt").exists():
        print(f"error: {args.data}/geo.nt not found (the shared data's geoquery folder)", file=sys.stderr)
        return 2
    home = args.home or Path(tempfile.mkdtemp(prefix="geo-home-"))
    ensure_loaded(home, args.data)
    splits = list(SPLITS) if args.split == "both" else [args.split]
    result: dict[str, Any] = {"benchmark": "geoquery", "model": "none", "team": "built-in triad"}
    if args.curve is None:
        for split in splits:
            result[split] = measure(home, split, args.data, args.limit, args.out, "zero-shot")
    else:
        curve: dict[str, Any] = {}
        for n in [int(x) for x in args.curve.split(",")]:
            if n == 0:
                curve["0"] = {s: measure(home, s, args.data, args.limit, args.out, "tuned-0") for s in splits}
                continue
            tuned, seconds = tuned_home(home, n, args.data)
            try:
                curve[str(n)] = {"tune_seconds": round(seconds, 1),
                                 "tune_seconds_per_1000": round(seconds * 1000 / n, 1),
                                 **{s: measure(tuned, s, args.data, args.limit, args.out, f"tuned-{n}")
                                    for s in splits}}
            finally:
                shutil.rmtree(tuned, ignore_errors=True)
        result["curve"] = curve
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
