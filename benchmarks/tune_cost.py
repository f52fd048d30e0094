"""What ``kgteam tune`` costs, and proof that a faster tune learns the same (issue 39, item 8). Prints JSON.

Loads a KG once into a scratch home, then runs ``kgteam tune NAME --examples FILE --quiet`` on a fresh
copy of it (only that command is timed: wall clock, and the CPU of it and its child processes) and
compares what it wrote with a reference run's: the example bank (``examples.json``) and the lexicon
(``lexicon.json``) must be equal, the reader (``reader.json``) equal but for its timing, its numbers
within ``--tol`` (default 1e-9). Every run hashes strings alike (``PYTHONHASHSEED=0``): the order of
a set of words decides the order of the reader's sums and of tied lexicon phrases, in the old code too.

- ``--reference-rev REV`` runs the reference first, from this working tree with the tune files
  (``kgteam/cli/tune_cmd.py``, ``kgteam/eval/{tuning,teaching}.py``, ``kgteam/tools/example_bank.py``,
  ``kgteam/roles/semantic/reader.py``) as they were at git revision ``REV``: before and after, back to
  back on the same machine, everything else the same;
- ``--reference DIR`` compares with a folder an earlier run saved (``--save DIR``);
- ``--cpus 0`` runs tune on those CPUs only (``taskset``): one core, one process.

    .venv/bin/python benchmarks/tune_cost.py --nt /work/shared/data/geoquery/geo.nt \\
        --examples /work/shared/data/geoquery/train.jsonl --reference-rev 1765ef5
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TUNE_FILES = ("kgteam/cli/tune_cmd.py", "kgteam/eval/tuning.py", "kgteam/eval/teaching.py",
              "kgteam/tools/example_bank.py", "kgteam/roles/semantic/reader.py")
OUTPUTS = ("examples.json", "reader.json", "lexicon.json")
_VOLATILE = {"seconds"}  # reader stats that time the run, not what it learned
_SCRATCH: list[Path] = []  # folders made for the runs, removed at the end
_TIMED = ("phrases learned in", "reader trained on", "the bank holds")  # tune's lines that time its phases


# the same string hashing in every run: the order of sets of words, hence the order of training's sums
# (and of a lexicon's phrases that tie), is then the same
HASH_SEED = "0"


def _kgteam(src: Path | None, *args: str, seed: str = HASH_SEED, cpus: str | None = None,
            ) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    if src is not None:  # a source tree ahead of the installed (editable) one
        env["PYTHONPATH"] = f"{src}{os.pathsep}{env['PYTHONPATH']}" if env.get("PYTHONPATH") else str(src)
    pinned = ["taskset", "-c", cpus] if cpus else []
    # run outside the repository: its folder first on sys.path would shadow ``src``
    return subprocess.run([*pinned, sys.executable, "-m", "kgteam.cli", *args], env=env, text=True,
                          cwd=tempfile.gettempdir(), capture_output=True, check=False)


def _old_tree(rev: str, into: Path) -> Path:
    """This working tree's ``kgteam`` package with the tune files as they were at ``rev``."""
    shutil.copytree(ROOT / "kgteam", into / "kgteam", ignore=shutil.ignore_patterns("__pycache__"))
    for rel in TUNE_FILES:
        old = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{rel}"], capture_output=True, text=True,
                             check=True).stdout
        (into / rel).write_text(old, encoding="utf-8")
    return into


def _tune(base: Path, name: str, examples: str, src: Path | None, extra: list[str],
          seed: str, cpus: str | None = None) -> tuple[float, float, Path, str]:
    """Seconds ``kgteam tune`` took on a fresh copy of the loaded home (wall clock, and CPU of all its
    threads), the KG folder, its output."""
    home = Path(tempfile.mkdtemp(prefix="tune-run-"))
    _SCRATCH.append(home)
    shutil.copytree(base, home, dirs_exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = _kgteam(src, "tune", name, "--examples", examples, "--home", str(home), "--quiet", *extra, seed=seed,
                   cpus=cpus)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode:
        raise SystemExit(f"kgteam tune failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return seconds, cpu, home / "kgs" / name, done.stdout


def _close(a: Any, b: Any, path: str, diffs: list[str], tol: float) -> None:
    """Record where ``a`` and ``b`` differ (floats within ``tol``, relative or absolute)."""
    if len(diffs) >= 10:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in _VOLATILE:
                continue
            if k not in a or k not in b:
                diffs.append(f"{path}.{k}: only in {'new' if k in a else 'reference'}")
            else:
                _close(a[k], b[k], f"{path}.{k}", diffs, tol)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append(f"{path}: {len(a)} items, reference {len(b)}")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _close(x, y, f"{path}[{i}]", diffs, tol)
    elif isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, int | float) and isinstance(b, int | float) and math.isclose(a, b, rel_tol=tol, abs_tol=tol)):
            diffs.append(f"{path}: {a!r}, reference {b!r}")
    elif a != b:
        diffs.append(f"{path}: {str(a)[:80]!r}, reference {str(b)[:80]!r}")


def compare(new: Path, ref: Path, tol: float = 1e-9) -> dict[str, Any]:
    """Per output file: equal (the bank and lexicon exactly, the reader's numbers within ``tol``)."""
    out: dict[str, Any] = {}
    for file in OUTPUTS:
        if not (new / file).exists() or not (ref / file).exists():
            out[file] = {"equal": (new / file).exists() == (ref / file).exists(), "missing": True}
            continue
        a, b = (json.loads((d / file).read_text(encoding="utf-8")) for d in (new, ref))
        diffs: list[str] = []
        _close(a, b, file, diffs, tol if file == "reader.json" else 0.0)
        out[file] = {"equal": not diffs, **({"differences": diffs} if diffs else {})}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nt", required=True, help="the KG file to load")
    ap.add_argument("--examples", required=True)
    ap.add_argument("--name", default="geoquery")
    ap.add_argument("--n", type=int, help="a seeded sample of this many examples (all when not given)")
    ap.add_argument("--reference-rev", help="also run the tune files of this git revision first, as the reference")
    ap.add_argument("--reference", type=Path, help="compare with the outputs saved in this folder")
    ap.add_argument("--save", type=Path, help="save this run's outputs in this folder")
    ap.add_argument("--src", type=Path, help="run kgteam from this source tree instead of the installed one")
    ap.add_argument("--tol", type=float, default=1e-9, help="relative tolerance for the reader's numbers")
    ap.add_argument("--hash-seed", default=HASH_SEED, help="PYTHONHASHSEED of every run ('random': each its own)")
    ap.add_argument("--cpus", help="run tune on these CPUs only (taskset -c), e.g. 0 for one core")
    args = ap.parse_args()
    try:
        _measure(args)
    finally:
        for folder in _SCRATCH:
            shutil.rmtree(folder, ignore_errors=True)


def _measure(args: argparse.Namespace) -> None:
    base = Path(tempfile.mkdtemp(prefix="tune-base-"))
    _SCRATCH.append(base)
    loaded = _kgteam(None, "load", args.nt, "--name", args.name, "--home", str(base), "--quiet")
    if loaded.returncode:
        raise SystemExit(f"kgteam load failed:\n{loaded.stdout}\n{loaded.stderr}")
    extra = ["--n", str(args.n)] if args.n else []
    count = args.n or sum(1 for line in Path(args.examples).read_text(encoding="utf-8").splitlines() if line.strip())
    report: dict[str, Any] = {"kg": args.name, "examples": count, "cpus": args.cpus or "all",
                              "command": f"kgteam tune {args.name} --examples {args.examples} --quiet {' '.join(extra)}".strip()}
    ref_dir = args.reference
    if args.reference_rev:
        old = _old_tree(args.reference_rev, Path(tempfile.mkdtemp(prefix="tune-old-")))
        _SCRATCH.append(old)
        seconds, cpu, ref_dir, _ = _tune(base, args.name, args.examples, old, extra, args.hash_seed, args.cpus)
        report["reference"] = {"rev": args.reference_rev, "seconds": round(seconds, 2),
                               "seconds_per_1000": round(seconds * 1000 / count, 1), "cpu_seconds": round(cpu, 2)}
    seconds, cpu, folder, said = _tune(base, args.name, args.examples, args.src, extra, args.hash_seed, args.cpus)
    report.update(seconds=round(seconds, 2), seconds_per_1000=round(seconds * 1000 / count, 1),
                  cpu_seconds=round(cpu, 2), load_average=[round(x, 2) for x in os.getloadavg()],
                  said=[line for line in said.splitlines() if any(w in line for w in _TIMED)])
    if ref_dir is not None:
        same = compare(folder, ref_dir, args.tol)
        report["same_as_reference"] = all(v["equal"] for v in same.values())
        report["outputs"] = same
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        for file in OUTPUTS:
            if (folder / file).exists():
                shutil.copy2(folder / file, args.save / file)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
