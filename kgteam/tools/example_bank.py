"""A KG's example bank: question/answer pairs with the readings that reach their gold answers.

``<kg folder>/examples.json`` is data, written by ``kgteam tune --examples`` and edited with
``kgteam examples``; the trained reader (``reader.json`` beside it) is fit on it. Each example
keeps the candidate readings the semantic layer offered for it, so the reader can be re-trained
from the bank alone (after a removal, say) without opening the KG. The KG is never changed.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kgteam.protocols.errors import KgteamError

EXAMPLES_FILE = "examples.json"
ANSWERS_NOTHING = -1.0  # an F1 in ``Candidate.f1_under``: the reading answers nothing that way
READER_FILE = "reader.json"
BANK_CANDIDATES = 30  # the readings an example keeps: the hand scorer's best that answer something


class BankError(KgteamError, ValueError):
    """An example bank or reader file that cannot be read (the message names the file)."""


class BankStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    predicate: str
    direction: str
    label: str = ""


class Candidate(BaseModel):
    """One reading the layer offered for an example, as the reader sees it, and whether it was right."""

    model_config = ConfigDict(extra="forbid")

    entity: str
    mention: str = ""
    words: list[str] = Field(default_factory=list)  # the question's words with this reading's mention masked
    steps: list[BankStep]
    literal_end: bool = False
    hand: float  # the hand scorer's score
    support: float = 0.0
    unexplained: float = 0.0
    strength: float = 0.0  # mean p(label | word) of the named steps (embedding similarity)
    f1: float = 0.0  # overlap of its answers with the gold answers
    answers_key: str = ""  # a digest of its answers: readings that answer alike are not rivals ("": unknown)
    # its F1 under each other way of counting a chain's answers that changes them (see
    # ``ChainConvention``: without the topic, with walks back to where a step came from), or
    # ``ANSWERS_NOTHING``; which way the KG's question writers count is learned from these
    f1_under: dict[str, float] = Field(default_factory=dict)
    gold: bool = False  # one of the best-overlapping readings: what the question meant


class JoinRecord(BaseModel):
    """What the shape reader's join of an example's two named entities gave (the hand scorer's
    readings, as at run time): its confidence before any map, and how its answers overlap the gold."""

    model_config = ConfigDict(extra="forbid")

    confidence: float
    f1: float = 0.0

    @property
    def right(self) -> bool:
        """Exactly the gold answers: a partly right set is a wrong answer when stated."""
        return self.f1 >= 1.0 - 1e-9


class Example(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    question: str
    answers: list[str] = Field(default_factory=list)  # gold answer labels or values, for people reading the bank
    sparql: str | None = None  # the gold query, when the example came with one
    mention: str = ""  # the question's topic mention the gold reading starts from
    candidates: list[Candidate] = Field(default_factory=list)
    join: JoinRecord | None = None  # a question naming two entities: their join's confidence and overlap

    @property
    def readings(self) -> list[Candidate]:
        return [c for c in self.candidates if c.gold]

    @property
    def topic(self) -> str:
        """What the example is about (for grouping: folds never split one topic)."""
        gold = self.readings
        return gold[0].entity if gold else self.question.lower()


def mark_best(candidates: list[Candidate]) -> None:
    """Mark right the candidates whose answers overlap the gold best (none when none overlaps)."""
    best = max((c.f1 for c in candidates), default=0.0)
    for c in candidates:
        c.gold = best > 0 and c.f1 >= best - 1e-9


class ExampleBank(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    examples: list[Example] = Field(default_factory=list)
    source: str = ""

    def merged(self, other: ExampleBank) -> ExampleBank:
        """This bank with ``other``'s examples added (an example id seen again is replaced)."""
        mine = {e.id: e for e in self.examples}
        mine.update({e.id: e for e in other.examples})
        return ExampleBank(examples=list(mine.values()),
                           source="; ".join(s for s in (self.source, other.source) if s))


def _read_json(file: Path) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BankError(f"cannot read {file}: {exc}") from exc


def read_bank(kg_folder: Path) -> ExampleBank | None:
    """The bank in ``kg_folder``; None when it has none."""
    file = kg_folder / EXAMPLES_FILE
    if not file.exists():
        return None
    try:
        return ExampleBank.model_validate(_read_json(file))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BankError(f"{file}: {'.'.join(str(x) for x in first.get('loc', ()))}: {first.get('msg')}") from exc


class LazyBank:
    """A KG folder's bank, read on first use: only prompts with a model show its examples, so a
    model-free run never pays for parsing it. Read once; a bank changed later is seen by the next process."""

    def __init__(self, kg_folder: Path):
        self.folder = kg_folder
        self._bank: ExampleBank | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, kg_folder: Path) -> LazyBank | None:
        """A loader for the bank in ``kg_folder``; None when it has none."""
        return cls(kg_folder) if (kg_folder / EXAMPLES_FILE).exists() else None

    def get(self) -> ExampleBank:
        """The bank (BankError when the file cannot be read; an emptied folder reads as an empty bank)."""
        with self._lock:
            if self._bank is None:
                self._bank = read_bank(self.folder) or ExampleBank()
            return self._bank


def write_json(data: dict[str, Any], file: Path) -> Path:
    """Write atomically (a crash leaves the old file or the new one, never half of one)."""
    # json.dumps, not json.dump: the same text, by the C encoder (dump streams through the
    # pure-Python one: seconds for a bank of a few hundred examples)
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    fd, tmp = tempfile.mkstemp(prefix=f".{file.stem}-", suffix=".json", dir=file.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, file)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return file


def write_bank(bank: ExampleBank, kg_folder: Path) -> Path:
    return write_json(bank.model_dump(exclude_defaults=True), kg_folder / EXAMPLES_FILE)


def _finite(value: Any) -> bool:
    """A JSON number a float holds (not a bool, not NaN or infinite, not an integer too large)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def read_reader_data(kg_folder: Path) -> dict[str, Any] | None:
    """The trained reader's raw data in ``kg_folder`` (see ``roles.semantic.reader``); None without one."""
    file = kg_folder / READER_FILE
    if not file.exists():
        return None
    data = _read_json(file)
    if not isinstance(data, dict) or not isinstance(data.get("weights"), dict):
        raise BankError(f"{file}: not a trained reader (no weights)")
    bad = next((k for k, v in data["weights"].items() if not _finite(v)), None)
    if bad is not None:
        raise BankError(f"{file}: weight {bad!r} must be a finite number, not {data['weights'][bad]!r}")
    for key in ("calibration", "join_calibration"):
        value = data.get(key)
        if value is not None and not (isinstance(value, list) and len(value) == 2 and all(_finite(v) for v in value)):
            raise BankError(f"{file}: {key} must be two numbers (a Platt map) or null, not {value!r}")
    if not isinstance(data.get("convention", "default"), str):
        raise BankError(f"{file}: convention must be a name, not {data['convention']!r}")
    return data
