"""Write the adaptive-RAG labelled question set: (question, route, answers) over the MetaQA KG and
the Wikipedia movie-plot corpus in ../shared/data.

Three kinds, 60 each by default, drawn with a seed:

* ``kg``: MetaQA 1-hop dev questions about entities that no plot document is titled with; the
  graph answers them, the documents cannot.
* ``web``: films the plot corpus has and the KG does not (not even as a name): "who plays
  <character> in <film>" where the plot writes "<character> (<actor>)", and "who directed <film>".
* ``both``: films the KG has, where the plot writes "<character> (<actor>)" and the KG lists the
  actor among the film's actors: the graph narrows the cast, only the text says who plays whom.

Run:  python benchmarks/adaptive_questions.py --out tests/data/adaptive/questions.jsonl
The plots themselves are not copied: only titles, names and the question wording.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
ROLE = re.compile(r"\b([A-Z][\w'-]+(?: [A-Z][\w'-]+)?) \(([A-Z][^()]{2,40})\)")
PLAYS = ["Who plays {c} in {t}?", "Which actor played {c} in the film {t}?", "In {t}, who portrays {c}?",
         "Who played the role of {c} in {t}?"]
DIRECTED = ["Who directed {t}?", "Who was the director of the {y} film {t}?", "Which filmmaker directed {t}?"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--per-route", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    kb = [line.rstrip("\n").split("|")
          for line in (SHARED / "metaqa" / "kb.txt").read_text(encoding="utf-8").splitlines()]
    names = {x.casefold() for s, _, o in kb for x in (s, o)}  # a title the KG has in any case is not "web"
    actors: dict[str, set[str]] = {}
    for s, r, o in kb:
        if r == "starred_actors":
            actors.setdefault(s, set()).add(o)
    with open(SHARED / "movieplots" / "wiki_movie_plots_1901_1935.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    titles = {r["Title"] for r in rows}
    title_count: dict[str, int] = {}
    for r in rows:
        title_count[r["Title"]] = title_count.get(r["Title"], 0) + 1
    web: list[dict] = []
    both: list[dict] = []
    for r in rows:
        t = r["Title"]
        if title_count[t] > 1 or len(t) < 4:
            continue  # two plots under one title: the question could not say which
        cast = {c.strip() for c in r["Cast"].split(",") if c.strip()}
        roles = [(c, a) for c, a in ROLE.findall(r["Plot"]) if a in cast and c not in t and c.casefold() not in names]
        seen: set[str] = set()
        for c, a in roles:
            if c in seen:
                continue
            seen.add(c)
            item = {"question": rng.choice(PLAYS).format(c=c, t=t), "answers": [a], "gold_doc": t, "answer_text": a}
            if t in actors and a in actors[t]:
                both.append({**item, "route": "both"})
            elif t.casefold() not in names:
                web.append({**item, "route": "web"})
        director = r["Director"].strip()
        if t.casefold() not in names and director and director.lower() != "unknown" and "," not in director and " and " not in director:
            web.append({"question": rng.choice(DIRECTED).format(t=t, y=r["Release Year"]), "answers": [director],
                        "gold_doc": t, "answer_text": director, "route": "web"})
    kg: list[dict] = []
    for line in (SHARED / "metaqa" / "1-hop" / "dev_consistent.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        if q["topic_entity"] in titles or len(q["answers"]) > 5:
            continue
        kg.append({"question": q["question"].replace("[", "").replace("]", ""), "answers": q["answers"],
                   "route": "kg", "gold_doc": None, "answer_text": None, "qtype": q["qtype"]})
    n = args.per_route
    picked = rng.sample(kg, n) + rng.sample(web, n) + rng.sample(both, min(n, len(both)))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        for i, item in enumerate(picked):
            fh.write(json.dumps({"id": f"ad{i:03d}", **item}, ensure_ascii=False) + "\n")
    print(json.dumps({"out": str(args.out), "kg": n, "web": n, "both": min(n, len(both)),
                      "pools": {"kg": len(kg), "web": len(web), "both": len(both)}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
