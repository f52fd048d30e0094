"""Shape sets: hand-written questions of every shape, gold computed by SPARQL on the KG at run time.

A chain benchmark cannot say whether a team counts, orders, compares, answers yes/no, joins two
entities or abstains when the KG is silent. A shape set can: each line is a question, its shape and
a gold SPARQL query (format in docs/eval.md, "Shape sets"). Gold answers are not stored: the query
runs through kgteam's own ``run_sparql`` on the named KG, so the set stays right if the KG is
rebuilt. Every question is asked through the Python API and graded here:

- entities by IRI, else by label against the labels the KG gives the gold IRIs;
- numbers numerically ("42" = "42.0"); booleans from the first value or the text's first clause;
- ``unanswerable`` (and any empty gold): right iff the team did not state an answer.

Per shape it prints Hits@1 (the first stated value is in the gold; for a count or yes/no, the value
is right), exact-set accuracy, the shares stated wrong and abstained, the wrong answers stated at
confidence >= 0.9 and the mean confidence; per question rows go to ``--out``.

    .venv/bin/python benchmarks/shapes.py --kg metaqa --set benchmarks/shapes/metaqa.jsonl --model none
    .venv/bin/python benchmarks/shapes.py --kg wc2014 --set benchmarks/shapes/worldcup.jsonl --limit 3 --out rows.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from kgteam.eval.datasets import GoldAnswer
from kgteam.eval.metrics import (
    Predicted,
    expected_calibration_error,
    match_item,
    normalize,
    numbers_match,
    split_answer_text,
)

SHAPES = ("chain", "intersection", "count", "superlative", "comparative", "ask", "literal", "negation", "union",
          "unanswerable")
REQUIRED = ("id", "question", "shape", "sparql")
HIGH_CONFIDENCE = 0.9
_NUMERIC_TYPES = ("integer", "decimal", "double", "float", "long", "int", "short", "byte", "nonNegativeInteger",
                  "positiveInteger", "unsignedInt", "unsignedLong")
_FIRST_NUMBER = re.compile(r"[+-]?\d[\d,]*(?:\.\d+)?")
_CLAUSE = re.compile(r"[.:;,!(\n—–-]")


class ShapeSetError(ValueError):
    """A shape-set file that cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class ShapeQuestion:
    id: str
    question: str
    shape: str
    sparql: str


def read_shape_set(path: str | Path) -> list[ShapeQuestion]:
    """The questions of a shape-set file, checked line by line (a bad line is an error, never skipped)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ShapeSetError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    out: list[ShapeQuestion] = []
    seen: set[str] = set()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ShapeSetError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ShapeSetError(f"{where}: expected an object, got {type(row).__name__}")
        missing = [k for k in REQUIRED if not isinstance(row.get(k), str) or not row[k].strip()]
        if missing:
            raise ShapeSetError(f"{where}: missing or empty field(s): {', '.join(missing)}")
        if row["shape"] not in SHAPES:
            raise ShapeSetError(f"{where}: unknown shape {row['shape']!r} (known: {', '.join(SHAPES)})")
        if row["id"] in seen:
            raise ShapeSetError(f"{where}: duplicate id {row['id']!r}")
        seen.add(row["id"])
        out.append(ShapeQuestion(row["id"], row["question"], row["shape"], row["sparql"]))
    if not out:
        raise ShapeSetError(f"{path}: no questions")
    return out


# ------------------------------------------------------------------------------------ gold

@dataclass
class Gold:
    """What the gold query returned: a boolean (ASK), a number (a single numeric literal, e.g. a
    COUNT) or items (entities or literals; empty when the KG has no answer)."""

    kind: Literal["boolean", "number", "items"]
    boolean: bool | None = None
    number: str | None = None
    items: list[GoldAnswer] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return self.kind == "items" and not self.items

    def display(self) -> Any:
        if self.kind == "boolean":
            return self.boolean
        if self.kind == "number":
            return self.number
        return [g.label if g.label is not None else g.iri for g in self.items]


def _is_numeric(datatype: str | None) -> bool:
    return bool(datatype) and datatype.rsplit("#", 1)[-1] in _NUMERIC_TYPES  # type: ignore[union-attr]


def gold_from_result(result: Any, labels: dict[str, str]) -> Gold:
    """A ``SparqlResult`` as gold: ASK -> boolean; one numeric literal -> number; else the first
    variable's values (IRIs carry the label the KG gives them)."""
    if result.boolean is not None:
        return Gold("boolean", boolean=bool(result.boolean))
    var = result.variables[0] if result.variables else None
    terms = [row[var] for row in result.rows if var is not None and var in row]
    if len(terms) == 1 and terms[0].type == "literal" and _is_numeric(terms[0].datatype):
        return Gold("number", number=terms[0].value)
    items: list[GoldAnswer] = []
    seen: set[tuple[str, str]] = set()
    for t in terms:
        if (t.type, t.value) in seen:
            continue
        seen.add((t.type, t.value))
        if t.type == "uri":
            items.append(GoldAnswer(label=labels.get(t.value), iri=t.value))
        else:
            items.append(GoldAnswer(label=t.value, datatype=t.datatype))
    return Gold("items", items=items)


async def compute_gold(tools: Any, questions: Sequence[ShapeQuestion]) -> dict[str, Gold | str]:
    """Each question's gold through the tools' ``run_sparql`` (the guarded path a team uses); a query
    that fails gives its error text instead, so one bad line does not stop the run."""
    out: dict[str, Gold | str] = {}
    for q in questions:
        try:
            result = await tools.run_sparql(q.sparql)
        except Exception as exc:
            out[q.id] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        if result.truncated:
            out[q.id] = "gold query result was truncated by the KG's caps"
            continue
        var = result.variables[0] if result.variables else None
        iris = sorted({row[var].value for row in result.rows if var in row and row[var].type == "uri"})
        labels = await tools.labels_for(iris) if iris else {}
        out[q.id] = gold_from_result(result, labels)
    return out


# --------------------------------------------------------------------------------- grading

Outcome = Literal["right", "wrong-stated", "abstained", "error"]


@dataclass(frozen=True)
class Grade:
    right: bool  # Hits@1: the first stated value is in the gold (scalars: the value is right)
    exact: bool  # the stated values are exactly the gold set (scalars: same as right)
    outcome: Outcome


def said_boolean(text: str, values: Sequence[Predicted]) -> bool | None:
    """Yes/no from the first value, else the text's first clause ("Yes, ..." / "False."); an entity
    such as "No Country for Old Men" is no "no"."""
    for candidate in ([values[0].label] if values else []) + [text]:
        head = normalize(_CLAUSE.split(candidate.strip(), maxsplit=1)[0]) if candidate else ""
        if head in {"yes", "true"}:
            return True
        if head in {"no", "false"}:
            return False
    return None


def said_number_matches(text: str, values: Sequence[Predicted], gold: str) -> bool:
    """The one value (else the text) is the gold number: whole ("42", "42.0") or its first number
    ("42 films"). Several values are a list, not a count, even when the first equals the gold."""
    if len(values) > 1:
        return False
    candidate = values[0].label if values else text
    if numbers_match(candidate, gold):
        return True
    m = _FIRST_NUMBER.search(candidate or "")
    return bool(m) and bool(numbers_match(m.group(0), gold))


def grade(shape: str, gold: Gold, *, status: str, text: str = "", values: Sequence[Predicted] = ()) -> Grade:
    """Grade one answer. ``status`` is the answer's: only "answered" states an answer."""
    if status == "error":
        return Grade(False, False, "error")
    stated = status == "answered"
    if shape == "unanswerable" or gold.empty:
        return Grade(not stated, not stated, "wrong-stated" if stated else "right")
    if not stated:
        return Grade(False, False, "abstained")
    if gold.kind == "boolean":
        ok = said_boolean(text, values) == gold.boolean
        return Grade(ok, ok, "right" if ok else "wrong-stated")
    if gold.kind == "number":
        ok = said_number_matches(text, values, gold.number or "")
        return Grade(ok, ok, "right" if ok else "wrong-stated")
    preds = list(values) or [Predicted(label=p) for p in split_answer_text(text)]
    if not preds:
        return Grade(False, False, "wrong-stated")
    matched = [any(match_item(p, g) for g in gold.items) for p in preds]
    covered = all(any(match_item(p, g) for p in preds) for g in gold.items)
    hit = matched[0]
    return Grade(hit, all(matched) and covered, "right" if hit else "wrong-stated")


# ----------------------------------------------------------------------------------- summary

def _ece(pairs: list[tuple[float, bool]]) -> float | None:
    value = expected_calibration_error(pairs)
    return None if value is None else round(value, 4)


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per-shape and total figures from graded rows (rows whose gold failed are counted apart)."""
    def block(rs: Sequence[dict[str, Any]]) -> dict[str, Any]:
        graded = [r for r in rs if r["outcome"] != "gold-error"]
        n = len(graded)
        conf = [r["confidence"] for r in graded if r["confidence"] is not None]
        stated_conf = [r["confidence"] for r in graded if r["confidence"] is not None and r["status"] == "answered"]
        calls = [r.get("llm_calls", 0) for r in graded]

        def share(outcome: str) -> float | None:
            return round(sum(r["outcome"] == outcome for r in graded) / n, 4) if n else None

        return {
            "n": n,
            "hits_at_1": round(sum(r["right"] for r in graded) / n, 4) if n else None,
            "exact": round(sum(r["exact"] for r in graded) / n, 4) if n else None,
            "wrong_stated": share("wrong-stated"),
            "abstained": share("abstained"),
            "errors": sum(r["outcome"] == "error" for r in graded),
            "wrong_at_conf_ge_0_9": sum(r["outcome"] == "wrong-stated" and (r["confidence"] or 0) >= HIGH_CONFIDENCE
                                        for r in graded),
            # the same on the scorer's own score, before the team's calibration map
            "wrong_at_raw_ge_0_9": sum(r["outcome"] == "wrong-stated" and (
                r.get("raw_confidence") if r.get("raw_confidence") is not None else r["confidence"] or 0
            ) >= HIGH_CONFIDENCE for r in graded),
            "mean_confidence": round(statistics.fmean(conf), 4) if conf else None,
            "mean_confidence_stated": round(statistics.fmean(stated_conf), 4) if stated_conf else None,
            # stated answers only: an abstention's guess is not graded here
            "ece_stated": _ece([(r["confidence"], r["right"]) for r in graded
                                if r["confidence"] is not None and r["status"] == "answered"]),
            "gold_empty": sum(r["gold_empty"] for r in graded if r["shape"] != "unanswerable"),
            "gold_errors": sum(r["outcome"] == "gold-error" for r in rs),
            "seconds_mean": round(statistics.fmean(r["seconds"] for r in graded), 3) if graded else None,
            # model calls the team made per question (0 throughout with --model none)
            "llm_calls_mean": round(statistics.fmean(calls), 2) if calls else None,
            "llm_calls_max": max(calls) if calls else None,
        }
    shapes = [s for s in SHAPES if any(r["shape"] == s for r in rows)]
    return {"by_shape": {s: block([r for r in rows if r["shape"] == s]) for s in shapes}, "total": block(rows)}


# ------------------------------------------------------------------------------------- run

def limit_per_shape(questions: Sequence[ShapeQuestion], limit: int | None) -> list[ShapeQuestion]:
    """The first ``limit`` questions of each shape, in file order (all when None)."""
    if limit is None:
        return list(questions)
    taken: dict[str, int] = {}
    out = []
    for q in questions:
        if taken.get(q.shape, 0) < limit:
            taken[q.shape] = taken.get(q.shape, 0) + 1
            out.append(q)
    return out


def gold_for(kg: str, home: Path | None, questions: Sequence[ShapeQuestion]) -> dict[str, Gold | str]:
    """Gold on the named KG, with lexical tools only (no embedder is needed to run SPARQL)."""
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(open_kg(kg, home=home), embedder=None)
    try:
        return asyncio.run(compute_gold(tools, questions))
    finally:
        tools.close()


def ask_all(questions: Sequence[ShapeQuestion], golds: dict[str, Gold | str], *, kg: str, model: str,
            team_file: Path | None, home: Path | None) -> list[dict[str, Any]]:
    from kgteam import Team

    team = (Team.from_yaml(team_file, kg=kg, model=model, home=home) if team_file
            else Team.default(kg=kg, model=model, home=home))
    rows: list[dict[str, Any]] = []
    with team:
        for q in questions:
            gold = golds[q.id]
            row: dict[str, Any] = {"id": q.id, "question": q.question, "shape": q.shape}
            if isinstance(gold, str):
                rows.append({**row, "gold": None, "gold_error": gold, "gold_empty": False, "answer_text": None,
                             "answer_values": [], "status": None, "confidence": None, "right": False,
                             "exact": False, "outcome": "gold-error", "seconds": 0.0})
                continue
            started = time.perf_counter()
            try:
                answer = team.ask(q.question)
                status, text, conf, raw = answer.status, answer.text, answer.confidence, answer.raw_confidence
                calls, fell_back = answer.cost.llm_calls, list(answer.fallbacks)
                values = [Predicted(label=v.label, iri=v.iri) for v in answer.values]
                error = answer.error
            except Exception as exc:  # recorded, and the run goes on
                status, text, conf, raw, values, error = "error", "", None, None, [], f"{type(exc).__name__}: {exc}"[:300]
                calls, fell_back = 0, []
            seconds = time.perf_counter() - started
            g = grade(q.shape, gold, status=status, text=text, values=values)
            rows.append({**row, "gold": gold.display(), "gold_empty": gold.empty, "answer_text": text,
                         "answer_values": [asdict(v) for v in values], "status": status, "confidence": conf,
                         "raw_confidence": raw, "llm_calls": calls, "fallbacks": fell_back,
                         "right": g.right, "exact": g.exact, "outcome": g.outcome, "error": error,
                         "seconds": round(seconds, 3)})
            print(f"{q.id}: {g.outcome} ({status}, {conf if conf is None else round(conf, 2)}, {calls} LLM calls)",
                  file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kg", required=True, help="KG name (as loaded with `kgteam load`) or folder")
    parser.add_argument("--set", dest="set_file", required=True, type=Path, help="shape-set JSONL file")
    parser.add_argument("--model", default="none", help="model flag as on the CLI (default: none)")
    parser.add_argument("--team", type=Path, default=None, help="team file (default: the built-in Triad team)")
    parser.add_argument("--limit", type=int, default=None, help="at most N questions per shape (file order)")
    parser.add_argument("--out", type=Path, default=None, help="write one graded row per question (JSONL)")
    parser.add_argument("--home", type=Path, default=None, help="KGTEAM home (default: $KGTEAM_HOME or ~/.kgteam)")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    from kgteam.protocols.errors import KgteamError

    try:
        questions = limit_per_shape(read_shape_set(args.set_file), args.limit)
        golds = gold_for(args.kg, args.home, questions)
        started = time.perf_counter()
        rows = ask_all(questions, golds, kg=args.kg, model=args.model, team_file=args.team, home=args.home)
    except (ShapeSetError, KgteamError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    out = {"benchmark": "shapes", "kg": args.kg, "set": str(args.set_file), "model": args.model,
           "team": str(args.team or "built-in triad"), "limit_per_shape": args.limit,
           "seconds_total": round(time.perf_counter() - started, 1), **summarize(rows)}
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
