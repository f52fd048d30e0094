"""Fact vectors composed from per-term tokens vs the embedder on each fact sentence (issue 27).

Reads an installed KG's store (read-only), streams its facts in chunks as the triple index build
does, and reports CPU seconds per fact for both paths and the largest difference between them
(on the first ``--check`` facts; the sentence path is the slow one).

    python benchmarks/fact_compose.py --store /tmp/kgh/kgs/metaqa/store --check 40000

Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", required=True, help="an Oxigraph store folder (a KG's store/)")
    ap.add_argument("--check", type=int, default=40_000, help="facts also embedded as sentences")
    ap.add_argument("--rows", type=int, default=16_384, help="facts per chunk")
    args = ap.parse_args()
    if not Path(args.store).is_dir():
        sys.exit(f"no store folder at {args.store}")
    import pyoxigraph as ox

    from kgteam.tools.embedding.wordllama import WordLlamaEmbedder
    from kgteam.tools.naming import DEFAULT_NAMING
    from kgteam.tools.vectors.compose import FactComposer
    from kgteam.tools.vectors.stream import _chunks
    from kgteam.tools.vectors.verbalise import TermTable, read_labels

    emb = WordLlamaEmbedder()
    store = ox.Store.read_only(args.store)
    labels = read_labels(store)
    table = TermTable()
    composer = FactComposer(emb, table)
    composed_cpu = sentence_cpu = 0.0
    worst, n, checked = 0.0, 0, 0
    for ids, sentences in _chunks(store, labels, table, DEFAULT_NAMING, args.rows):
        t = time.process_time()
        vecs = composer.vectors(ids)
        composed_cpu += time.process_time() - t
        if vecs is None:
            sys.exit("composition was turned off: it disagreed with the embedder")
        if checked < args.check:
            t = time.process_time()
            ref = emb.embed(sentences)
            sentence_cpu += time.process_time() - t
            worst = max(worst, float(np.abs(vecs - ref).max()))
            checked += len(ids)
        n += len(ids)
    print(json.dumps({
        "command": " ".join(sys.argv), "facts": n, "terms": len(table.labels),
        "composed_cpu_s": round(composed_cpu, 2), "composed_us_per_fact": round(composed_cpu / max(n, 1) * 1e6, 1),
        "sentence_facts": checked, "sentence_cpu_s": round(sentence_cpu, 2),
        "sentence_us_per_fact": round(sentence_cpu / max(checked, 1) * 1e6, 1),
        "max_abs_difference": worst,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
