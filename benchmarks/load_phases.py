"""Where a name-triple load spends its time (issue 27): MetaQA copies loaded in this process, with
the time each progress phase starts, CPU time and peak RSS. Prints one JSON document.

    python benchmarks/load_phases.py --copies 8
    python benchmarks/load_phases.py --copies 32 --vectors none
    python benchmarks/load_phases.py --copies 32 --without-label-index   # the store alone, to see what the index costs

``--without-label-index`` turns the label index writer's ``add`` into a no-op: the result is not a
usable KG, only a measurement of the rest of the load.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale import METAQA, write_copies  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=8)
    ap.add_argument("--vectors", default="none", choices=["none", "auto", "relations", "triples"])
    ap.add_argument("--without-label-index", action="store_true")
    ap.add_argument("--work", type=Path, default=None, help="folder for the input copy and the KG home")
    args = ap.parse_args()

    from kgteam.tools.loading import build_kg

    if args.without_label_index:
        import kgteam.tools.backends.tantivy_index as tantivy_index

        tantivy_index.TantivyLabelIndexWriter.add = lambda self, doc: None  # type: ignore[method-assign]
    work = args.work or Path(tempfile.mkdtemp(prefix="load-phases-"))
    work.mkdir(parents=True, exist_ok=True)
    kb = work / f"x{args.copies}.txt"
    facts = write_copies(METAQA / "kb.txt", kb, args.copies) if not kb.exists() else sum(1 for _ in kb.open())
    phases: dict[str, float] = {}
    t0 = time.perf_counter()

    def progress(event) -> None:
        phases.setdefault(event.phase, round(time.perf_counter() - t0, 2))

    cpu0 = time.process_time()
    manifest = build_kg([kb], f"x{args.copies}", home=work / "home", progress=progress, format="metaqa",
                        base_iri="http://example.org/metaqa/", embed=args.vectors != "none", vectors=args.vectors)
    wall = time.perf_counter() - t0
    print(json.dumps({
        "copies": args.copies,
        "facts": facts,
        "triples": manifest.counts.triples,
        "vectors": args.vectors,
        "label_index": not args.without_label_index,
        "wall_s": round(wall, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
        "facts_per_s": round(facts / wall),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "phase_starts_s": phases,
    }, indent=1))


if __name__ == "__main__":
    main()
