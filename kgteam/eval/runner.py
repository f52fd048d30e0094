"""Run a team over a dataset: bounded concurrency, one durable JSONL record per question, resumable.

The run file is the source of truth: each record is written (flushed and fsync'd) the moment
its question finishes, so a killed run loses at most the questions in flight, and a rerun with
the same ``--out`` skips every id already recorded. A torn last line (killed mid-write) is cut
off and that question is redone. A question that raises becomes an ``error`` record; the run
goes on.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field

from kgteam.eval.datasets import DatasetItem, GoldAnswer, TagValue
from kgteam.eval.gold_names import named_golds
from kgteam.eval.grading import (
    Grading,
    GroundednessCheck,
    abstained,
    check_groundedness,
    grade_answer,
    guess_correct,
)
from kgteam.eval.metrics import VERDICT_LABELS, Predicted, normalize
from kgteam.eval.open_ended import OpenEndedScore, score_open_ended
from kgteam.eval.verifiability import VerifiabilityCheck, check_verifiability
from kgteam.llm.slots import wait_clock
from kgteam.protocols.evidence import Evidence
from kgteam.protocols.payloads import Answer, AnswerValue

if TYPE_CHECKING:
    from kgteam.llm.base import ChatModel
    from kgteam.tools.kg_tools import KGTools


class AskingTeam(Protocol):
    """Anything that answers a question: ``TeamRunner`` or a test double of the same shape."""

    async def ask(self, question: str, *, session_id: str | None = None) -> Answer: ...


class RunRecord(BaseModel):
    """One question's outcome; a run file is a sequence of these, one JSON object per line."""

    id: str
    question: str
    gold: list[GoldAnswer] = Field(default_factory=list)
    tags: dict[str, TagValue] = Field(default_factory=dict)
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    answer_text: str = ""
    answer_values: list[AnswerValue] = Field(default_factory=list)
    answer_status: str = "error"
    stopped_by: str = "error"
    answer_grounded: bool = False  # the team's own claim
    route: str | None = None  # where a routing team looked for the answer (kg / web / both)
    answer_kind: str | None = None  # the dataset's kind of gold ("empty": the KG holds no answer)
    confidence: float | None = None  # the answer's (or, abstaining, its best guess's) confidence
    raw_confidence: float | None = None  # the scorer's score before the team's calibration map (None: no map)
    calibration: str | None = None  # the name of that map (the playbook's, or the KG's own examples')
    guess: list[AnswerValue] = Field(default_factory=list)  # the best candidate an abstention kept
    guess_correct: bool | None = None  # that guess graded by the rules (None: no guess or no gold)
    reading: str | None = None  # the query graph / path the answer came from, in words
    evidence: Evidence = Field(default_factory=Evidence)
    fallbacks: list[str] = Field(default_factory=list)
    grading: Grading | None = None
    groundedness: GroundednessCheck | None = None  # checked against the KG by the harness
    verifiability: VerifiabilityCheck | None = None  # the reasoning statements re-checked on the KG
    open_ended: OpenEndedScore | None = None  # ROUGE-L and factual precision, for items with a reference text
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # the question's own run time: waiting for a model slot is not counted
    queued_seconds: float = 0.0  # time it was blocked waiting for a model slot (other questions' calls)
    finished_at: str = ""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def sparql(self) -> list[str]:
        """The queries the answer ran without error (its selected query among them)."""
        return [q.sparql for q in self.evidence.queries if not q.error]

    def stated(self) -> bool:
        """An answer was stated: not an abstention ("I don't know", status unknown/refused), not an error."""
        return (self.status == "ok" and self.answer_status != "error"
                and not abstained(self.answer_text, self.answer_values, self.answer_status))

    def calibration_pair(self, *, raw: bool = False) -> tuple[float, bool] | None:
        """``(confidence, correct)`` for calibration: a stated answer with its grade, or an abstention's
        best guess with the guess's grade. None without a confidence, for an ungraded answer, or for
        an abstention with no gradable guess (there is nothing the confidence is about). ``raw``:
        the scorer's score before the team's map, which is what a new map is fitted on."""
        confidence = self.raw_confidence if raw and self.raw_confidence is not None else self.confidence
        if confidence is None or self.grading is None:
            return None
        if self.stated():
            grade = self.grading.grade
            return (confidence, grade == "accurate") if grade in {"accurate", "hallucinated"} else None
        if self.status == "ok" and self.guess_correct is not None:
            return confidence, self.guess_correct
        return None


@dataclass
class RunSummary:
    path: Path
    total: int
    skipped: int  # already in the file (resume)
    done: int  # finished in this call
    errors: int
    records: list[RunRecord] = field(default_factory=list)


# ----------------------------------------------------------------------------------- run files

def read_run(path: str | Path, *, repair: bool = False) -> list[RunRecord]:
    """Records of a run file. A torn or invalid *last* line is ignored (and cut off if ``repair``)."""
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    records: list[RunRecord] = []
    good_end = 0
    pos = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl == -1:  # no newline: the writer died mid-line
            break
        line = data[pos:nl]
        if line.strip():
            try:
                records.append(RunRecord.model_validate_json(line))
            except ValueError:
                if data[nl + 1:].strip():  # corruption in the middle is not a torn write
                    raise ValueError(f"{path}: invalid record at byte {pos}") from None
                break
        pos = nl + 1
        good_end = pos
    if repair and good_end < len(data):
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())
    return records


class _Writer:
    """Appends records durably; one lock so concurrent finishes never interleave bytes."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._lock = asyncio.Lock()

    async def write(self, record: RunRecord) -> None:
        line = record.model_dump_json() + "\n"
        async with self._lock:
            self._fh.write(line)
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


# --------------------------------------------------------------------------------------- runner

def reading_of(answer: Answer) -> str | None:
    """The answer's reading in words: its own ``reading``, else the question words matched to the
    relations of its path (``"directed" ~ ->directed_by``); None when it gives neither."""
    if answer.reading:
        return answer.reading
    return "; ".join(m.explain() for m in answer.evidence.matches) or None


def _record_from_answer(item: DatasetItem, answer: Answer) -> RunRecord:
    return RunRecord(
        id=item.id, question=item.question, gold=item.answers, tags=item.tags, answer_kind=item.answer_kind,
        answer_text=answer.text, answer_values=answer.values, answer_status=answer.status,
        confidence=answer.confidence, raw_confidence=answer.raw_confidence, calibration=answer.calibration,
        guess=answer.guess,
        reading=reading_of(answer),
        stopped_by=answer.stopped_by, answer_grounded=answer.grounded, route=answer.route, evidence=answer.evidence,
        fallbacks=answer.fallbacks, error=answer.error,
        llm_calls=answer.cost.llm_calls, prompt_tokens=answer.cost.prompt_tokens,
        completion_tokens=answer.cost.completion_tokens,
    )


def is_verdict(values: Sequence[Predicted]) -> bool:
    """A claim verdict ("supported", "refuted", "not enough info"): a label no triple holds, so its
    groundedness is n/a (the verdict's triples are checked by verifiability), never 0."""
    return bool(values) and all(normalize(v.label) in VERDICT_LABELS for v in values)


async def evaluate_item(
    item: DatasetItem, team: AskingTeam, *, session_prefix: str = "eval", judge_model: ChatModel | None = None,
    tools: KGTools | None = None, timeout_s: float | None = None,
) -> RunRecord:
    """Ask, grade, check groundedness. Never raises (except cancellation): failures become error records."""
    with wait_clock() as clock:
        record = await _ask_and_grade(item, team, session_prefix=session_prefix, judge_model=judge_model,
                                      tools=tools, timeout_s=timeout_s)
    record.queued_seconds = round(clock.queued_s, 4)
    record.seconds = round(max(0.0, clock.elapsed_s - clock.queued_s), 4)
    record.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
    return record


async def _ask_and_grade(item: DatasetItem, team: AskingTeam, *, session_prefix: str,
                         judge_model: ChatModel | None, tools: KGTools | None, timeout_s: float | None) -> RunRecord:
    try:
        coro = team.ask(item.question, session_id=f"{session_prefix}-{item.id}")
        answer = await (asyncio.wait_for(coro, timeout_s) if timeout_s else coro)
        record = _record_from_answer(item, answer)
        values = [Predicted(label=v.label, iri=v.iri) for v in answer.values]
        golds = await named_golds(item.answers, tools)  # IRI-only golds named as the KG names them
        record.gold = golds
        record.grading = await grade_answer(item.question, answer.text, values, golds,
                                            status=answer.status, judge_model=judge_model,
                                            answer_kind=item.answer_kind)
        said_nothing = abstained(answer.text, values, answer.status)
        if said_nothing and answer.guess:
            record.guess_correct = guess_correct([Predicted(label=v.label, iri=v.iri) for v in answer.guess],
                                                 golds, answer_kind=item.answer_kind)
        if tools is not None and record.grading.grade != "missing" and not said_nothing and not is_verdict(values):
            record.groundedness = await check_groundedness(answer.evidence.triples, values or [
                Predicted(label=answer.text)], tools)
        if tools is not None and answer.evidence.reasoning:
            record.verifiability = await check_verifiability(answer.evidence, tools)
        reference = item.extra.get("reference")
        if tools is not None and isinstance(reference, str) and reference.strip():
            record.open_ended = await score_open_ended(answer.text, answer.evidence.triples, reference, tools,
                                                       stated=not said_nothing)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - one bad question must not stop a run
        record = RunRecord(id=item.id, question=item.question, gold=item.answers, tags=item.tags,
                           answer_kind=item.answer_kind, status="error",
                           error=f"{type(exc).__name__}: {exc}"[:2000])
        record.grading = Grading(grade="missing", decided_by="rule:error", reason="the question raised")
    return record


async def run_eval(
    items: Sequence[DatasetItem], team: AskingTeam, out: str | Path, *, concurrency: int = 4,
    judge_model: ChatModel | None = None, tools: KGTools | None = None, timeout_s: float | None = None,
    retry_errors: bool = False, progress: bool = True, session_prefix: str | None = None,
    on_record: Callable[[RunRecord], None] | None = None,
) -> RunSummary:
    """Evaluate ``items`` with ``team``, appending to ``out``; ids already there are skipped."""
    out = Path(out)
    previous = read_run(out, repair=True)
    done_ids = {r.id for r in previous if r.status == "ok" or not retry_errors}
    todo = [it for it in items if it.id not in done_ids]
    if len({it.id for it in items}) != len(items):
        raise ValueError("dataset item ids are not unique; resume needs unique ids")
    summary = RunSummary(path=out, total=len(items), skipped=len(items) - len(todo), done=0, errors=0)
    prefix = session_prefix or f"eval-{out.stem}"
    queue: asyncio.Queue[DatasetItem] = asyncio.Queue()
    for it in todo:
        queue.put_nowait(it)
    writer = _Writer(out)

    progress_bar: Any = None
    task_id: Any = None
    if progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        progress_bar = Progress(TextColumn("[bold]eval"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("errors {task.fields[errors]}"), TimeElapsedColumn(), transient=False)
        task_id = progress_bar.add_task("eval", total=len(items), completed=summary.skipped, errors=0)
        progress_bar.start()

    async def worker() -> None:
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            record = await evaluate_item(item, team, session_prefix=prefix, judge_model=judge_model, tools=tools,
                                         timeout_s=timeout_s)
            await writer.write(record)
            summary.done += 1
            summary.errors += record.status == "error"
            summary.records.append(record)
            if on_record is not None:
                on_record(record)
            if progress_bar is not None:
                progress_bar.update(task_id, advance=1, errors=summary.errors)

    try:
        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    finally:
        writer.close()
        if progress_bar is not None:
            progress_bar.stop()
    return summary


def write_meta(out: str | Path, meta: dict[str, Any]) -> Path:
    """Run metadata (dataset, team, seed ...) beside the run file: ``RUN.meta.json``."""
    path = Path(str(out) + ".meta.json") if not str(out).endswith(".jsonl") else Path(str(out)[:-6] + ".meta.json")
    path.write_text(json.dumps(meta, indent=2, default=str), encoding="utf-8")
    return path


def read_meta(run: str | Path) -> dict[str, Any]:
    run = str(run)
    path = Path(run[:-6] + ".meta.json") if run.endswith(".jsonl") else Path(run + ".meta.json")
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
