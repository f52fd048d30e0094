"""Writes the MetaQA dev sample shipped in kgteam/data (50 seeded questions per hop).

Drawn from the dev questions whose gold answers the shipped KB reproduces exactly
(``dev_consistent.jsonl`` in the shared data), so each is answerable on the demo KG; each row keeps
its line number in the official ``qa_dev.txt``, so sample ids equal the full set's ids.
Run: python scripts/make_metaqa_sample.py [SHARED_DATA_DIR]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

N, SEED = 50, 0
OUT = Path(__file__).resolve().parents[1] / "kgteam" / "data"


def main(shared: Path) -> None:
    for hops in (1, 2, 3):
        folder = shared / "metaqa" / f"{hops}-hop"
        slots: dict[str, list[int]] = {}
        for i, line in enumerate((folder / "qa_dev.txt").read_text(encoding="utf-8").splitlines()):
            slots.setdefault(line.partition("\t")[0], []).append(i)
        rows = []
        for line in (folder / "dev_consistent.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            rows.append({"line": slots[row["question"]].pop(0), "question": row["question"],
                         "topic_entity": row["topic_entity"], "qtype": row["qtype"], "answers": row["answers"]})
        picked = sorted(random.Random(SEED).sample(range(len(rows)), N))
        out = OUT / f"metaqa_dev_sample_{hops}hop.jsonl"
        out.write_text("".join(json.dumps(rows[i], ensure_ascii=False) + "\n" for i in picked), encoding="utf-8")
        print(out, out.stat().st_size)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/work/shared/data"))
