"""Answer matching and the metrics the KGQA literature reports (EM, set P/R/F1, Hits@1).

Matching is deliberately rule-based and explainable: every comparison says *how* it matched
(IRI, normalised string, number, date, boolean), so a grade can be audited.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kgteam.eval.items import GoldAnswer
from kgteam.tools.iri import local_name

# ------------------------------------------------------------------------------- normalisation

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = re.compile(r"[^\w\s]")


def normalize(text: str) -> str:
    """Lower case, no accents, no punctuation, no articles, underscores as spaces."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = text.lower().replace("_", " ")
    text = _PUNCT.sub(" ", text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


_IDK = re.compile(
    r"^(i\s*(do\s*not|don'?t|dont)\s*know|unknown|no\s*answer|not\s*sure|cannot\s*(be\s*)?(answer|determined?)"
    r"|can'?t\s*answer|i\s*(am|'m)\s*not\s*sure|insufficient\s*(information|evidence)|n/?a|none found"
    r"|no\s*(information|data|results?)(\s*found)?|unable\s*to\s*(answer|determine|find).*)\W*$",
    re.IGNORECASE,
)


def is_missing_text(text: str | None) -> bool:
    """Empty answers and "I don't know"-style abstentions count as *missing*, not wrong."""
    if text is None:
        return True
    stripped = text.strip().strip(".!").strip()
    return not stripped or bool(_IDK.match(stripped))


# ------------------------------------------------------------------------------------- numbers

_NUM = re.compile(r"^[+-]?(\d{1,3}([, ]\d{3})+|\d+)?(\.\d+)?([eE][+-]?\d+)?$")


def parse_number(text: str) -> float | None:
    """``"1,234"``, ``"+100"``, ``"12.192"``, ``"1.2e3"``, ``"52 000"``, ``"12%"`` -> float."""
    t = text.strip().rstrip("%").strip()
    if not t or not _NUM.match(t) or not re.search(r"\d", t):
        return None
    try:
        return float(t.replace(",", "").replace(" ", ""))
    except ValueError:
        return None


def _decimals(text: str) -> int:
    t = text.strip().rstrip("%")
    if "e" in t.lower():
        return 12
    return len(t.split(".")[1]) if "." in t else 0


def numbers_match(answer: str, gold: str, *, rel_tol: float = 1e-9) -> bool | None:
    """True/False when both sides are numbers; None when one is not a number.

    Equal up to float noise (``rel_tol``), so gold 12 vs 12.0 matches. A *decimal* answer less
    precise than the gold matches the gold rounded to the answer's decimals (gold 12.192 vs
    12.19 or 12.2); an integer answer is never a rounding (``8`` vs 7.6 is wrong), and a more
    precise answer must equal the gold (12.192 vs 12.19 is wrong).
    """
    a, g = parse_number(answer), parse_number(gold)
    if a is None or g is None:
        return None
    if math.isclose(a, g, rel_tol=rel_tol, abs_tol=1e-12):
        return True
    da = _decimals(answer)
    if 0 < da < _decimals(gold):
        return math.isclose(round(g, da), a, rel_tol=rel_tol, abs_tol=10 ** (-da - 3))
    return False


# --------------------------------------------------------------------------------------- dates

_MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"])}
_MONTHS.update({k[:3]: v for k, v in list(_MONTHS.items())})
_MONTHS["sept"] = 9


@dataclass(frozen=True)
class PartialDate:
    """A date known to year, month or day precision (datasets mix all three)."""

    year: int
    month: int | None = None
    day: int | None = None


def parse_date(text: str) -> PartialDate | None:
    """ISO (``1967-03-01``, ``1967-03-01T00:00:00Z``, ``1967-03``), ``March 1, 1967``,
    ``1 March 1967``, ``01/03/1967`` (day first; ambiguous US order is not guessed), ``1967``.
    """
    t = text.strip().lower().rstrip(".")
    m = re.fullmatch(r"([+-]?\d{4})-(\d{1,2})(?:-(\d{1,2}))?(?:[t ][\d:.]+(?:z|[+-]\d{2}:?\d{2})?)?", t)
    if m:
        return _valid(int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else None)
    m = re.fullmatch(r"(\d{1,2})[/.](\d{1,2})[/.](\d{4})", t)
    if m:
        day, month = int(m.group(1)), int(m.group(2))
        if month > 12 >= day:  # clearly month/day/year
            day, month = month, day
        return _valid(int(m.group(3)), month, day)
    words = re.sub(r"[,]", " ", t).split()
    words = [re.sub(r"(st|nd|rd|th)$", "", w) if re.fullmatch(r"\d{1,2}(st|nd|rd|th)", w) else w for w in words]
    if len(words) == 3:
        if words[0] in _MONTHS and words[1].isdigit() and words[2].isdigit():
            return _valid(int(words[2]), _MONTHS[words[0]], int(words[1]))
        if words[1] in _MONTHS and words[0].isdigit() and words[2].isdigit():
            return _valid(int(words[2]), _MONTHS[words[1]], int(words[0]))
    if len(words) == 2 and words[0] in _MONTHS and words[1].isdigit() and len(words[1]) == 4:
        return _valid(int(words[1]), _MONTHS[words[0]], None)
    if re.fullmatch(r"\d{4}", t):
        return PartialDate(int(t))
    return None


def _valid(year: int, month: int | None, day: int | None) -> PartialDate | None:
    try:
        if month is not None:
            dt.date(year if year > 0 else 2000, month, day or 1)
    except ValueError:
        return None
    return PartialDate(year, month, day)


def dates_match(answer: str, gold: str) -> bool | None:
    """Equal on every field the gold specifies; an answer less precise than the gold is wrong.

    Only decides when at least one side is a full date or month: two bare years are numbers.
    """
    a, g = parse_date(answer), parse_date(gold)
    if a is None or g is None or (a.month is None and g.month is None):
        return None
    if a.year != g.year:
        return False
    for field in ("month", "day"):
        gv, av = getattr(g, field), getattr(a, field)
        if gv is not None and av != gv:
            return False
    return True


# ------------------------------------------------------------------------------------ booleans

_TRUE = {"true", "yes", "correct", "right", "y"}
_FALSE = {"false", "no", "incorrect", "wrong", "n"}


def parse_boolean(text: str) -> bool | None:
    t = normalize(text)
    first = t.split()[0] if t else ""
    if t in _TRUE or first in {"yes", "true"}:
        return True
    if t in _FALSE or first in {"no", "false"}:
        return False
    return None


# ------------------------------------------------------------------------------------ verdicts

NOT_ENOUGH_INFO = "not enough info"
_VERDICT_WORDS = (  # normalised leading words -> verdict; longest first so "not supported" is not "supported"
    ("not enough information", NOT_ENOUGH_INFO), ("not enough info", NOT_ENOUGH_INFO),
    ("not enough evidence", NOT_ENOUGH_INFO), ("insufficient", NOT_ENOUGH_INFO), ("undecidable", NOT_ENOUGH_INFO),
    ("cannot be verified", NOT_ENOUGH_INFO), ("unverifiable", NOT_ENOUGH_INFO), ("nei", NOT_ENOUGH_INFO),
    ("unknown", NOT_ENOUGH_INFO), ("not supported", "refuted"), ("unsupported", "refuted"),
    ("supported", "supported"), ("supports", "supported"), ("true", "supported"), ("yes", "supported"),
    ("correct", "supported"), ("refuted", "refuted"), ("refutes", "refuted"), ("false", "refuted"),
    ("no", "refuted"), ("incorrect", "refuted"), ("contradicted", "refuted"),
)
VERDICT_LABELS = ("supported", "refuted", NOT_ENOUGH_INFO)


def parse_verdict(text: str | None) -> str | None:
    """A claim verdict from an answer's leading words: ``supported``, ``refuted`` or ``not enough info``.

    True/yes read as supported and False/no as refuted (a yes/no answerer can verify claims);
    "I don't know"-style abstentions read as not enough info. None when the text says none of these.
    """
    if text is None or is_missing_text(text):
        return NOT_ENOUGH_INFO
    t = normalize(text)
    for words, verdict in _VERDICT_WORDS:
        if t == words or t.startswith(words + " "):
            return verdict
    return None


def exact_verdict(text: str | None) -> str | None:
    """A verdict only when the answer's first clause *is* one ("False.", "Supported: t0 ..."), so an
    entity answer such as "No Country for Old Men" is not read as "no"."""
    if text is None:
        return None
    head = normalize(re.split(r"[.:;,(\n—–-]", text.strip(), maxsplit=1)[0])
    return next((verdict for words, verdict in _VERDICT_WORDS if head == words), None)


def gold_verdict(golds: Sequence[GoldAnswer]) -> str | None:
    """The verdict a claim item's single gold answer names, else None (not a claim item)."""
    if len(golds) != 1 or golds[0].label is None:
        return None
    label = normalize(golds[0].label)
    return next((v for v in VERDICT_LABELS if normalize(v) == label), None)


# -------------------------------------------------------------------------------- item matching

def _iri_label(iri: str) -> str:
    return local_name(iri).replace("_", " ")


@dataclass(frozen=True)
class Predicted:
    """One predicted answer item: a label and, when the team linked it, an IRI."""

    label: str
    iri: str | None = None


# ------------------------------------------------------------------------- literals and kinds

_TYPED = re.compile(r'^"(.*)"\s*(?:\^\^\s*(<[^>]*>|[\w-]+:[\w-]+)|@[A-Za-z]+(?:-[A-Za-z0-9]+)*)?$', re.DOTALL)
_NUMBER_TYPES = ("integer", "decimal", "double", "float", "int", "long", "short", "byte", "nonNegativeInteger",
                 "positiveInteger", "negativeInteger", "nonPositiveInteger", "unsignedInt", "unsignedLong")
_DATE_TYPES = ("date", "dateTime", "dateTimeStamp", "gYear", "gYearMonth")


def literal_text(text: str) -> tuple[str, str | None]:
    """``"42"^^xsd:integer`` -> ``("42", "xsd:integer")``; ``"Paris"@en`` -> ``("Paris", None)``;
    anything else unchanged. Answers copied from SPARQL results or Turtle keep this notation."""
    m = _TYPED.match(text.strip())
    if not m:
        return text, None
    datatype = m.group(2)
    return m.group(1), (datatype.strip("<>") if datatype else None)


def datatype_kind(datatype: str | None) -> str | None:
    """``number``, ``date`` or ``boolean`` for an XSD datatype (full IRI or ``xsd:`` name), else None."""
    if not datatype:
        return None
    local = re.split(r"[#:/]", datatype)[-1]
    if local == "boolean":
        return "boolean"
    if local in _NUMBER_TYPES:
        return "number"
    if local in _DATE_TYPES:
        return "date"
    return None


def match_item(pred: Predicted, gold: GoldAnswer) -> str | None:
    """How ``pred`` matches ``gold`` ("iri", "string", "number", "date", "boolean") or None.

    The gold's datatype decides how its value is compared: a number gold is compared as a number
    only (gold 1979 as a count never matches an answer dated 1979-05-25), a boolean gold as yes/no;
    a date or untyped gold is tried as a date, then as a number (a bare year gold such as ``1979``
    matches an answer dated that year; a dated gold needs the answer to give every part of it).
    """
    if pred.iri and gold.iri and pred.iri == gold.iri:
        return "iri"
    gold_label = gold.label if gold.label is not None else (_iri_label(gold.iri) if gold.iri and not
                                                           re.search(r"/[QPL]\d+$", gold.iri) else None)
    if gold_label is None:
        return None
    gold_label, gold_type = literal_text(gold_label)
    pred_label, _ = literal_text(pred.label)
    kind = datatype_kind(gold.datatype or gold_type)
    if kind == "boolean" or (kind is None and normalize(gold_label) in {"true", "false"}):
        pb, gb = parse_boolean(pred_label), parse_boolean(gold_label)
        return "boolean" if pb is not None and pb == gb else None
    if kind != "number":
        d = dates_match(pred_label, gold_label)
        if d is not None:
            return "date" if d else None
    n = numbers_match(pred_label, gold_label)
    if n is not None:
        return "number" if n else None
    if normalize(pred_label) and normalize(pred_label) == normalize(gold_label):
        return "string"
    return None


def split_answer_text(text: str) -> list[str]:
    """Answer text -> items: split on ``|``, ``;``, newlines, then on commas/"and" for short lists."""
    text = text.strip()
    if not text:
        return []
    parts = [p.strip(" .") for p in re.split(r"[|;\n]+", text) if p.strip(" .")]
    if len(parts) == 1 and parse_date(parts[0]) is None and parse_number(parts[0]) is None:
        sub = [p.strip(" .") for p in re.split(r",\s*|\s+and\s+", parts[0]) if p.strip(" .")]
        if len(sub) > 1 and all(len(s.split()) <= 8 for s in sub):
            parts = sub
    return [re.sub(r"^(?:[-*•]|\d+[.)])\s+", "", p).strip() or p for p in parts]


def text_contains(text: str, gold: GoldAnswer) -> bool:
    """Gold label appears in the text as a whole-word sequence (after normalisation)."""
    label = gold.label if gold.label is not None else (_iri_label(gold.iri) if gold.iri else "")
    g = normalize(label)
    if not g:
        return False
    return f" {g} " in f" {normalize(text)} "


# ---------------------------------------------------------------------------------- set metrics

@dataclass(frozen=True)
class SetScores:
    precision: float
    recall: float
    f1: float
    exact_match: bool
    hits1: bool
    matched_gold: int
    correct_pred: int


def set_scores(preds: Sequence[Predicted], golds: Sequence[GoldAnswer]) -> SetScores:
    """Per-question P/R/F1 over answer sets; empty predictions score 0 (unless gold is empty too)."""
    if not golds:
        empty = not preds
        return SetScores(float(empty), float(empty), float(empty), empty, False, 0, 0)
    if not preds:
        return SetScores(0.0, 0.0, 0.0, False, False, 0, 0)
    gold_hit = [any(match_item(p, g) for p in preds) for g in golds]
    pred_ok = [any(match_item(p, g) for g in golds) for p in preds]
    precision = sum(pred_ok) / len(preds)
    recall = sum(gold_hit) / len(golds)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return SetScores(precision, recall, f1, all(pred_ok) and all(gold_hit), pred_ok[0], sum(gold_hit), sum(pred_ok))


def macro(values: Iterable[float]) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else 0.0


# ---------------------------------------------------------------------------------- calibration

CONFIDENT = 0.9  # "wrong at confidence >= 0.9": the answers a user would trust without checking


@dataclass(frozen=True)
class ReliabilityBin:
    """One equal-width confidence bin: ``[low, high)`` (the last bin includes 1.0)."""

    low: float
    high: float
    n: int
    mean_confidence: float | None  # None when the bin is empty
    accuracy: float | None

    @property
    def gap(self) -> float | None:
        return None if self.n == 0 else abs(self.accuracy - self.mean_confidence)  # type: ignore[operator]


def reliability_bins(pairs: Sequence[tuple[float, bool]], n_bins: int = 10) -> list[ReliabilityBin]:
    """(confidence, correct) pairs in ``n_bins`` equal-width bins over [0, 1]."""
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    groups: list[list[tuple[float, bool]]] = [[] for _ in range(n_bins)]
    for conf, correct in pairs:
        groups[min(n_bins - 1, max(0, int(conf * n_bins)))].append((conf, correct))
    out = []
    for i, group in enumerate(groups):
        n = len(group)
        out.append(ReliabilityBin(low=i / n_bins, high=(i + 1) / n_bins, n=n,
                                  mean_confidence=sum(c for c, _ in group) / n if n else None,
                                  accuracy=sum(ok for _, ok in group) / n if n else None))
    return out


def expected_calibration_error(pairs: Sequence[tuple[float, bool]], n_bins: int = 10) -> float | None:
    """ECE = sum over bins of (bin size / all pairs) * |accuracy - mean confidence|; None without pairs."""
    if not pairs:
        return None
    return sum(b.n / len(pairs) * b.gap for b in reliability_bins(pairs, n_bins) if b.n)  # type: ignore[operator]


def brier_score(pairs: Sequence[tuple[float, bool]]) -> float | None:
    """Mean squared difference between confidence and outcome (1 right, 0 wrong); None without pairs."""
    return sum((c - float(ok)) ** 2 for c, ok in pairs) / len(pairs) if pairs else None
