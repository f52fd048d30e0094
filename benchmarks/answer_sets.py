"""Question sets with stored gold answers, graded per shape: what public benchmarks and blind sets use.

A shape set (``benchmarks/shapes.py``) computes gold by SPARQL on our own KG; a public benchmark
(GeoQuery) or a set written blind by someone else stores its gold answers beside each question.
Rows: ``{"id", "question", "answers": [labels | numbers | true/false] ([] = unanswerable),
"tags": {"shape"}}``. Every question is asked through the Python API with one team and graded:

- labels against the answer's values (and the text) by ``kgteam.eval.metrics.match_item``;
- numbers numerically; booleans from the first value or the text's first clause;
- an empty gold (unanswerable): right iff the team did not state an answer.

Per shape and in total it prints right (Hits@1), wrong stated, abstained, the confidence's AUROC
for right against wrong *stated* answers, wrong answers stated at >= 0.8 and >= 0.9, and answers
stated on a raw score of 0. Per-question rows go to ``--out``.

    .venv/bin/python benchmarks/answer_sets.py --kg wikidata_music --set tests/data/blind/wikidata_music/questions.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kgteam.eval.datasets import GoldAnswer
from kgteam.eval.metrics import Predicted

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shapes import Gold, grade  # noqa: E402  (benchmarks/ is not a package)

SHAPE_ALIASES = {"comparison": "comparative", "yes/no": "ask", "yesno": "ask", "boolean": "ask",
                 "literal value": "literal", "class-list": "list", "class list": "list", "aggregate": "count"}


class AnswerSetError(ValueError):
    """A set file that cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class StoredQuestion:
    id: str
    question: str
    shape: str
    answers: tuple[Any, ...]


def read_answer_set(path: str | Path) -> list[StoredQuestion]:
    """The rows of a stored-answer set, checked line by line (a bad line is an error, never skipped)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AnswerSetError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    out: list[StoredQuestion] = []
    seen: set[str] = set()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AnswerSetError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) or not row["question"].strip():
            raise AnswerSetError(f"{where}: expected an object with a non-empty 'question'")
        answers = row.get("answers")
        if not isinstance(answers, list):
            raise AnswerSetError(f"{where}: 'answers' must be a list ([] for unanswerable)")
        qid = str(row.get("id") or f"{path.stem}-{n}")
        if qid in seen:
            raise AnswerSetError(f"{where}: duplicate id {qid!r}")
        seen.add(qid)
        shape = str((row.get("tags") or {}).get("shape") or row.get("shape") or "chain").lower()
        shape = SHAPE_ALIASES.get(shape, shape)
        if not answers:
            shape = "unanswerable"
        out.append(StoredQuestion(qid, row["question"], shape, tuple(answers)))
    if not out:
        raise AnswerSetError(f"{path}: no questions")
    return out


def stored_gold(answers: Sequence[Any]) -> Gold:
    """The stored answers as gold: one boolean, one number, else items (labels or literals)."""
    if len(answers) == 1 and isinstance(answers[0], bool):
        return Gold("boolean", boolean=answers[0])
    if len(answers) == 1 and isinstance(answers[0], int | float):
        return Gold("number", number=str(answers[0]))
    return Gold("items", items=[GoldAnswer(label=str(a)) for a in answers])


def auroc(pairs: Sequence[tuple[float, bool]]) -> float | None:
    """Probability that a right answer's confidence is above a wrong one's (ties count half)."""
    right = [c for c, ok in pairs if ok]
    wrong = [c for c, ok in pairs if not ok]
    if not right or not wrong:
        return None
    wins = sum((r > w) + 0.5 * (r == w) for r in right for w in wrong)
    return round(wins / (len(right) * len(wrong)), 4)


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def block(rs: Sequence[dict[str, Any]]) -> dict[str, Any]:
        n = len(rs)
        stated = [r for r in rs if r["status"] == "answered"]
        pairs = [(r["confidence"] or 0.0, r["right"]) for r in stated]

        def count(outcome: str) -> int:
            return sum(r["outcome"] == outcome for r in rs)

        def wrong_at(line: float) -> int:
            return sum(r["outcome"] == "wrong-stated" and (r["confidence"] or 0) >= line for r in rs)

        return {
            "n": n, "right": sum(r["right"] for r in rs), "wrong_stated": count("wrong-stated"),
            "abstained": count("abstained"), "errors": count("error"),
            "right_share": round(sum(r["right"] for r in rs) / n, 4) if n else None,
            "wrong_share": round(count("wrong-stated") / n, 4) if n else None,
            "auroc_stated": auroc(pairs),
            "wrong_at_ge_0_8": wrong_at(0.8), "wrong_at_ge_0_9": wrong_at(0.9),
            "stated_on_raw_0": sum(r["status"] == "answered" and r.get("raw_confidence") == 0 for r in rs),
            "distinct_confidences": len({round(c, 4) for c, _ in pairs}),
            "seconds_mean": round(statistics.fmean(r["seconds"] for r in rs), 3) if rs else None,
        }
    shapes = sorted({r["shape"] for r in rows})
    return {"by_shape": {s: block([r for r in rows if r["shape"] == s]) for s in shapes}, "total": block(rows)}


def ask_all(team: Any, questions: Sequence[StoredQuestion], *, progress: bool = True) -> list[dict[str, Any]]:
    """Ask every question with ``team`` (a started ``kgteam.Team``) and grade it."""
    rows: list[dict[str, Any]] = []
    for q in questions:
        gold = stored_gold(q.answers)
        started = time.perf_counter()
        try:
            answer = team.ask(q.question)
            status, text, conf, raw = answer.status, answer.text, answer.confidence, answer.raw_confidence
            values = [Predicted(label=v.label, iri=v.iri) for v in answer.values]
            guess = [v.label for v in answer.guess]
            error = answer.error
            signals = answer.signals.model_dump() if answer.signals is not None else None
        except Exception as exc:  # recorded, and the run goes on
            status, text, conf, raw, values, guess, signals = "error", "", None, None, [], [], None
            error = f"{type(exc).__name__}: {exc}"[:300]
        seconds = time.perf_counter() - started
        g = grade(q.shape, gold, status=status, text=text, values=values)
        rows.append({"id": q.id, "question": q.question, "shape": q.shape, "gold": list(q.answers),
                     "answer_text": text, "answer_values": [asdict(v) for v in values], "guess": guess,
                     "status": status, "confidence": conf, "raw_confidence": raw, "right": g.right,
                     "exact": g.exact, "outcome": g.outcome, "error": error, "signals": signals,
                     "seconds": round(seconds, 3)})
        if progress:
            print(f"{q.id}: {g.outcome} ({status}, {conf if conf is None else round(conf, 2)})", file=sys.stderr,
                  flush=True)
    return rows


def write_rows(rows: Sequence[dict[str, Any]], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kg", required=True, help="KG name (as loaded with `kgteam load`) or folder")
    parser.add_argument("--set", dest="set_file", required=True, type=Path, help="stored-answer JSONL file")
    parser.add_argument("--model", default="none", help="model flag as on the CLI (default: none)")
    parser.add_argument("--team", type=Path, default=None, help="team file (default: the built-in Triad team)")
    parser.add_argument("--limit", type=int, default=None, help="the first N questions")
    parser.add_argument("--out", type=Path, default=None, help="write one graded row per question (JSONL)")
    parser.add_argument("--home", type=Path, default=None, help="KGTEAM home (default: $KGTEAM_HOME or ~/.kgteam)")
    args = parser.parse_args(argv)
    from kgteam import Team
    from kgteam.protocols.errors import KgteamError

    try:
        questions = read_answer_set(args.set_file)[: args.limit]
        team = (Team.from_yaml(args.team, kg=args.kg, model=args.model, home=args.home) if args.team
                else Team.default(kg=args.kg, model=args.model, home=args.home))
        started = time.perf_counter()
        with team:
            rows = ask_all(team, questions)
    except (AnswerSetError, KgteamError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        write_rows(rows, args.out)
    out = {"benchmark": "answer_sets", "kg": args.kg, "set": str(args.set_file), "model": args.model,
           "team": str(args.team or "built-in triad"), "seconds_total": round(time.perf_counter() - started, 1),
           **summarize(rows)}
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
