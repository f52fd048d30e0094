"""Shape-reading benchmark: the model-free reader (``roles/semantic/shape.py``) against the form
of the gold SPARQL on LC-QuAD 1.0 test, QALD-9 train + test and QALD-10. Prints JSON.

Coarse labels on both sides: ask / count / superlative / comparative / other. The gold label
comes from the query's own form (``gold_shape``); the reader's shape is mapped to the same five
(negation, union, intersection, literal and chain are all "other": plain SPARQL patterns).
Answer-kind agreement is reported where QALD-9 states an ``answertype`` (resource / number /
date / boolean / string) and, for QALD-10 which states none, against the datatype of its gold
answers.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/shape_reading.py [--errors 20]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

from kgteam.roles.semantic.shape import read_shape

QUESTIONS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "questions"
LABELS = ("ask", "count", "superlative", "comparative", "other")

_PREFIX = re.compile(r"PREFIX\s+\S*\s*<[^>]*>", re.I)
_IRI = re.compile(r"<[^>\s]*>")
_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
_COMPARISON = re.compile(r"(?<![!<>=])(<=|>=|<|>)(?!=)")


def _strip(sparql: str) -> str:
    """The query without prefixes, IRIs and string literals (so "<" means a comparison)."""
    s = _PREFIX.sub(" ", sparql)
    s = _IRI.sub(" IRI ", s)
    return _STRING.sub(' "" ', s)


def _outer_projection(s: str) -> str:
    """The text between the outermost SELECT and its WHERE / first "{"."""
    m = re.search(r"\bSELECT\b(.*?)(\bWHERE\b|\{)", s, re.I | re.S)
    return m.group(1) if m else ""


def _bodies(s: str, keyword: str) -> list[str]:
    """The parenthesised bodies of ``keyword(...)`` (FILTER / HAVING / IF), parentheses balanced."""
    out = []
    for m in re.finditer(rf"\b(?:{keyword})\s*\(", s, re.I):
        depth, i = 1, m.end()
        while i < len(s) and depth:
            depth += {"(": 1, ")": -1}.get(s[i], 0)
            i += 1
        out.append(s[m.end() : i - 1])
    return out


def gold_shape(sparql: str) -> str:
    """The coarse form of a gold query: ask; count (COUNT in the projected answer); superlative
    (ORDER BY with LIMIT, MAX/MIN projected, or BIND(IF(?a > ?b, A, B)), the better of two
    named entities); comparative (a FILTER / HAVING comparing with
    < <= > >=); else other. "Which poet wrote the most books" (ORDER BY DESC(COUNT) LIMIT 1) is a
    superlative: its answer is the poet, not a number."""
    s = _strip(sparql)
    if re.match(r"\s*ASK\b", s, re.I):
        return "ask"
    projection = _outer_projection(s)
    if re.search(r"\bCOUNT\s*\(", projection, re.I):
        return "count"
    if re.search(r"\bORDER\s+BY\b", s, re.I) and re.search(r"\bLIMIT\b", s, re.I):
        return "superlative"
    if re.search(r"\b(MAX|MIN)\s*\(", projection, re.I):
        return "superlative"
    if any(_COMPARISON.search(c) for c in _bodies(s, "IF")):
        return "superlative"  # "which is older, A or B": BIND(IF(?a < ?b, A, B)), the best of two
    if any(_COMPARISON.search(f) for f in _bodies(s, "FILTER|HAVING")):
        return "comparative"
    return "other"


def coarse(shape: str) -> str:
    return shape if shape in LABELS else "other"


def _english(q: dict) -> str:
    for item in q.get("question", []):
        if item.get("language") == "en" and item.get("string"):
            return item["string"]
    return ""


_QALD_KINDS = {"resource": "entity", "number": "number", "date": "date", "boolean": "boolean",
               "string": "string", "uri": "entity"}


def _answers_kind(q: dict) -> str | None:
    """QALD-10 states no answertype: read it from the gold answer's first binding."""
    for ans in q.get("answers", []):
        if "boolean" in ans:
            return "boolean"
        for binding in ans.get("results", {}).get("bindings", []):
            for value in binding.values():
                if value.get("type") == "uri":
                    return "entity"
                dt = value.get("datatype", "")
                if any(x in dt for x in ("integer", "decimal", "double", "float", "int")):
                    return "number"
                if any(x in dt for x in ("date", "gYear", "time")):
                    return "date"
                return "string"
    return None


def load_sets() -> dict[str, list[tuple[str, str, str | None]]]:
    """(question, gold SPARQL, gold answer kind or None) per set."""
    sets: dict[str, list[tuple[str, str, str | None]]] = {}
    lc = json.loads((QUESTIONS / "lcquad1-test-data.json").read_text())
    sets["lcquad1_test"] = [(x["corrected_question"], x["sparql_query"], None) for x in lc]
    q9: list[tuple[str, str, str | None]] = []
    for name in ("qald-9-train-multilingual.json", "qald-9-test-multilingual.json"):
        for q in json.loads((QUESTIONS / name).read_text())["questions"]:
            text, sparql = _english(q), q.get("query", {}).get("sparql", "")
            if text and sparql:
                q9.append((text, sparql, _QALD_KINDS.get(q.get("answertype", ""))))
    sets["qald9_train_test"] = q9
    q10 = json.loads((QUESTIONS / "qald_10.json").read_text())["questions"]
    sets["qald10"] = [(_english(q), q["query"]["sparql"], _answers_kind(q)) for q in q10
                      if _english(q) and q.get("query", {}).get("sparql")]
    return sets


def evaluate(rows: list[tuple[str, str, str | None]], errors: int) -> dict:
    confusion: Counter[tuple[str, str]] = Counter()
    kind_total = kind_ok = 0
    kind_confusion: Counter[tuple[str, str]] = Counter()
    wrong: list[dict] = []
    t0 = time.perf_counter()
    readings = [read_shape(q) for q, _, _ in rows]
    elapsed = time.perf_counter() - t0
    for (question, sparql, kind), r in zip(rows, readings, strict=True):
        gold, got = gold_shape(sparql), coarse(r.shape)
        confusion[(gold, got)] += 1
        if gold != got and len(wrong) < errors:
            wrong.append({"question": question, "gold": gold, "read": r.shape})
        if kind is not None:
            kind_total += 1
            kind_ok += kind == r.answer_kind
            kind_confusion[(kind, r.answer_kind)] += 1
    total = sum(confusion.values())
    correct = sum(v for (g, p), v in confusion.items() if g == p)
    out = {
        "questions": total,
        "coarse_accuracy": round(correct / total, 4),
        "gold_counts": {g: sum(v for (gg, _), v in confusion.items() if gg == g) for g in LABELS},
        "per_gold_recall": {g: round(confusion[(g, g)] / n, 3) if (n := sum(
            v for (gg, _), v in confusion.items() if gg == g)) else None for g in LABELS},
        "confusion_gold_by_read": {g: {p: confusion[(g, p)] for p in LABELS} for g in LABELS},
        "read_ms_per_question": round(1000 * elapsed / max(total, 1), 4),
    }
    if kind_total:
        out["answer_kind"] = {
            "questions": kind_total,
            "agreement": round(kind_ok / kind_total, 4),
            "confusion_gold_by_read": {g: dict(Counter({p: v for (gg, p), v in kind_confusion.items() if gg == g}))
                                       for g in sorted({g for g, _ in kind_confusion})},
        }
    if errors:
        out["errors"] = wrong
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--errors", type=int, default=0, help="list up to N misread questions per set")
    args = ap.parse_args(argv)
    if not QUESTIONS.is_dir():
        print(json.dumps({"error": f"no question sets at {QUESTIONS}"}))
        return 2
    report = {name: evaluate(rows, args.errors) for name, rows in load_sets().items()}
    json.dump(report, sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
