"""KGQA dataset readers behind one item type, so every benchmark is run and graded the same way.

Readers: MetaQA (``qa_*.txt`` and ``dev_consistent.jsonl``), the IRN format (WC2014,
PathQuestion), QALD JSON (QALD-9 multilingual, QALD-10), LC-QuAD 1.0 JSON and a generic JSONL
(documented in ``docs/eval.md``). :func:`load_dataset` resolves short names such as
``metaqa:1-hop`` or ``qald9:test:en`` against a data folder, or reads a file path.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from kgteam.eval.items import (
    ANSWER_KINDS,
    DatasetError,
    DatasetItem,
    EntityRef,
    GoldAnswer,
    GoldPath,
    TagValue,
    entity_iri,
    relation_iri,
)
from kgteam.eval.metrics import literal_text, parse_boolean, parse_date, parse_number
from kgteam.protocols.errors import KgteamError
from kgteam.tools.iri import local_name

METAQA_BASE = "http://example.org/metaqa/"
WC2014_BASE = "http://example.org/wc2014/"
PATHQUESTION_BASE = "http://example.org/pathquestion/"
INVERSE_SUFFIX = "_inverse"  # WC2014 spells reverse edges as explicit ``r_inverse`` relations

# --------------------------------------------------------------------------------------- MetaQA

_BRACKET = re.compile(r"\[([^\]]+)\]")


def _metaqa_answers(names: Iterable[str]) -> list[GoldAnswer]:
    return [GoldAnswer(label=n, iri=entity_iri(METAQA_BASE, n)) for n in names if n]


def read_metaqa(
    path: str | Path, *, qtype_path: str | Path | None = None, hops: int | None = None,
    keep_brackets: bool = False, id_prefix: str | None = None,
) -> list[DatasetItem]:
    """MetaQA ``question<TAB>a|b`` lines; the topic entity is the [bracketed] mention.

    Brackets are removed from the question text by default, because a real user does not mark
    the entity; the mention is kept as the item's topic entity for linking diagnostics.
    """
    path = Path(path)
    if qtype_path is None:
        candidate = path.with_name(path.stem + "_qtype.txt")
        qtype_path = candidate if candidate.exists() else None
    qtypes = Path(qtype_path).read_text(encoding="utf-8").splitlines() if qtype_path else []
    hops = hops if hops is not None else _hops_from_folder(path)
    prefix = id_prefix or (f"metaqa-{hops}hop-{path.stem.removeprefix('qa_')}" if hops else path.stem)
    items = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        question, _, answers = line.partition("\t")
        qtype = qtypes[i].strip() if i < len(qtypes) else ""
        items.append(_metaqa_item(f"{prefix}-{i:05d}", question, answers.split("|"), hops=hops, qtype=qtype,
                                  dataset="metaqa", keep_brackets=keep_brackets))
    return items


def _metaqa_item(ident: str, question: str, answers: Iterable[str], *, hops: int | None, qtype: str,
                 dataset: str, keep_brackets: bool = False, extra: dict[str, Any] | None = None) -> DatasetItem:
    m = _BRACKET.search(question)
    topic = [EntityRef(label=m.group(1), iri=entity_iri(METAQA_BASE, m.group(1)))] if m else []
    tags: dict[str, TagValue] = {"dataset": dataset}
    if hops:
        tags["hops"] = hops
    if qtype:
        tags["qtype"] = qtype
    return DatasetItem(
        id=ident, question=question if keep_brackets else _BRACKET.sub(r"\1", question),
        answers=_metaqa_answers(answers), topic_entities=topic, tags=tags,
        extra={"raw_question": question, **(extra or {})},
    )


PACKAGED_SAMPLE = "kgteam sample"  # ``extra["source"]`` of an item read from the sample in the package


def metaqa_sample_path(hops: int) -> Path:
    return Path(__file__).resolve().parents[1] / "data" / f"metaqa_dev_sample_{hops}hop.jsonl"


def read_metaqa_sample(hops: int, *, dataset: str = "metaqa") -> list[DatasetItem]:
    """The 50 seeded MetaQA dev questions per hop shipped in the package (CC BY 3.0, see
    ``kgteam/data/ATTRIBUTION.md``), all answerable on the demo KG; ids equal the full dev set's ids."""
    path = metaqa_sample_path(hops)
    if not path.is_file():
        raise DatasetError(f"no packaged MetaQA sample for {hops}-hop questions (1, 2 and 3 are shipped)")
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        items.append(_metaqa_item(f"metaqa-{hops}hop-dev-{row['line']:05d}", row["question"], row["answers"],
                                  hops=hops, qtype=row.get("qtype", ""), dataset=dataset,
                                  extra={"source": PACKAGED_SAMPLE}))
    return items


def read_metaqa_consistent(
    path: str | Path, *, hops: int | None = None, keep_brackets: bool = False
) -> list[DatasetItem]:
    """The ``dev_consistent.jsonl`` subset (gold reproducible on the rebuilt KB, with SPARQL).

    Ids match the vanilla reader's ids (line number in ``qa_dev.txt``) when that file sits beside
    it, so runs on both can be compared question by question.
    """
    path = Path(path)
    hops = hops if hops is not None else _hops_from_folder(path)
    vanilla = path.with_name("qa_dev.txt")
    positions: dict[str, list[int]] = {}
    if vanilla.exists():
        for i, line in enumerate(vanilla.read_text(encoding="utf-8").splitlines()):
            positions.setdefault(line.partition("\t")[0], []).append(i)
    items = []
    for j, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        row = json.loads(line)
        raw = row["question"]
        slots = positions.get(raw)
        ident = f"metaqa-{hops}hop-dev-{slots.pop(0):05d}" if slots else f"metaqa-{hops}hop-consistent-{j:05d}"
        topic_name = row.get("topic_entity") or (m.group(1) if (m := _BRACKET.search(raw)) else None)
        tags: dict[str, TagValue] = {"dataset": "metaqa-consistent"}
        if hops:
            tags["hops"] = hops
        if row.get("qtype"):
            tags["qtype"] = row["qtype"]
        items.append(DatasetItem(
            id=ident, question=raw if keep_brackets else _BRACKET.sub(r"\1", raw),
            answers=_metaqa_answers(row.get("answers", [])),
            topic_entities=[EntityRef(label=topic_name, iri=entity_iri(METAQA_BASE, topic_name))] if topic_name else [],
            gold_query=row.get("sparql"), tags=tags, extra={"raw_question": raw},
        ))
    return items


def _hops_from_folder(path: Path) -> int | None:
    m = re.match(r"(\d)-hop", path.parent.name)
    return int(m.group(1)) if m else None


# ------------------------------------------------------------------------------------------ IRN

def _irn_path(text: str, base: str) -> tuple[GoldPath, str]:
    """``s#r1#e1#r2#e2[#<end>#ans]`` -> path from s over r1, r2 and the path's final entity."""
    parts = text.split("#<end>#")[0].split("#")
    start, rest = parts[0], parts[1:]
    relations = rest[0::2]
    end = rest[-1] if rest else start
    folded = [r.removesuffix(INVERSE_SUFFIX) for r in relations]
    return GoldPath(
        start=EntityRef(label=start, iri=entity_iri(base, start)), relations=relations,
        relation_iris=[relation_iri(base, r) for r in folded],
        directions=["in" if r.endswith(INVERSE_SUFFIX) else "out" for r in relations],
    ), end


def _irn_set(text: str) -> list[str]:
    return [a for a in text.split("/") if a]


def read_irn(
    path: str | Path, *, dataset: str, base: str, id_prefix: str, qtype: str | None = None
) -> list[DatasetItem]:
    """IRN question files (WC2014 and PathQuestion share the core of this format).

    WC2014: ``question, answer, path(s), answer set, context[, topic entities]``, conjunctive
    questions join two paths with ``*``. PathQuestion: ``question, answer(a1/a2/), path#<end>#answer``.
    Names keep their underscores: that is how the KB spells them and how the KG is minted.
    """
    items = []
    for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        cols = line.split("\t")
        question, answer_col, path_col = cols[0].strip(), cols[1].strip(), cols[2].strip()
        m = re.fullmatch(r"(.*?)\((.*)\)", answer_col)
        if m and len(cols) == 3:  # PathQuestion: answer(a1/a2/)
            answers = _irn_set(m.group(2)) or [m.group(1)]
        elif len(cols) >= 4:
            answers = _irn_set(cols[3]) or [answer_col]
        else:
            answers = [answer_col]
        paths = [_irn_path(p, base)[0] for p in path_col.split("*") if p]
        topics: list[EntityRef] = []
        for p in paths:
            if p.start.label not in {t.label for t in topics}:
                topics.append(p.start)
        hops = max((len(p.relations) for p in paths), default=0)
        tags: dict[str, TagValue] = {"dataset": dataset, "hops": hops}
        tags["qtype"] = qtype or "/".join(_strip_inverse(r) for r in paths[0].relations)
        items.append(DatasetItem(
            id=f"{id_prefix}-{i:05d}", question=question,
            answers=[GoldAnswer(label=a, iri=entity_iri(base, a)) for a in answers],
            topic_entities=topics, gold_paths=paths, tags=tags,
            extra={"answer": answer_col},
        ))
    return items


def _strip_inverse(relation: str) -> str:
    return relation.removesuffix(INVERSE_SUFFIX)


# ----------------------------------------------------------------------------------------- QALD

_XSD = "http://www.w3.org/2001/XMLSchema#"


def _label_from_iri(iri: str) -> str | None:
    """DBpedia-style IRIs carry a readable local name; Wikidata Q-ids do not."""
    local = local_name(iri)
    if re.fullmatch(r"[QPL]\d+", local):
        return None
    return local.replace("_", " ")


def _qald_answers(block: list[dict[str, Any]]) -> tuple[list[GoldAnswer], str | None]:
    answers: list[GoldAnswer] = []
    kinds: set[str] = set()
    for result in block or []:
        if "boolean" in result and result["boolean"] is not None:
            answers.append(GoldAnswer(label="true" if result["boolean"] else "false", datatype=_XSD + "boolean"))
            kinds.add("boolean")
            continue
        for binding in (result.get("results") or {}).get("bindings", []):
            for term in binding.values():
                if term.get("type") == "uri":
                    answers.append(GoldAnswer(label=_label_from_iri(term["value"]), iri=term["value"]))
                    kinds.add("resource")
                else:
                    dt = term.get("datatype")
                    answers.append(GoldAnswer(label=term["value"], datatype=dt))
                    if dt and dt.endswith(("integer", "decimal", "double", "float", "int")):
                        kinds.add("number")
                    elif dt and dt.endswith(("date", "dateTime", "gYear")):
                        kinds.add("date")
                    else:
                        kinds.add("string")
    return answers, (kinds.pop() if len(kinds) == 1 else None)


def read_qald(path: str | Path, *, language: str = "en", dataset: str = "qald") -> list[DatasetItem]:
    """QALD JSON (``{"questions": [...]}``): the question in ``language``; answers incl. booleans/literals.

    Questions without a string in the requested language are skipped (QALD-9 covers some
    languages only partially).
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    items = []
    for q in data.get("questions", []):
        texts = {t.get("language"): t for t in q.get("question", [])}
        entry = texts.get(language)
        if entry is None or not (entry.get("string") or "").strip():
            continue
        answers, inferred = _qald_answers(q.get("answers", []))
        tags: dict[str, TagValue] = {"dataset": dataset, "language": language}
        answer_type = q.get("answertype") or inferred
        if answer_type:
            tags["answer_type"] = answer_type
            tags["qtype"] = answer_type
        for flag in ("aggregation", "onlydbo", "hybrid"):
            if flag in q and q[flag] is not None:
                tags[flag] = bool(q[flag])
        extra: dict[str, Any] = {}
        if entry.get("keywords"):
            extra["keywords"] = entry["keywords"]
        items.append(DatasetItem(
            id=f"{dataset}-{q['id']}", question=entry["string"].strip(), answers=answers,
            gold_query=(q.get("query") or {}).get("sparql"), tags=tags, extra=extra,
        ))
    return items


def read_lcquad1(path: str | Path, *, dataset: str = "lcquad1") -> list[DatasetItem]:
    """LC-QuAD 1.0: questions and SPARQL over DBpedia; the file carries no answers."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    items = []
    for q in data:
        text = q.get("corrected_question") or q.get("intermediary_question") or ""
        if not isinstance(text, str) or not text.strip() or text.strip() == "[]":
            text = q.get("intermediary_question") or ""
        tags: dict[str, TagValue] = {"dataset": dataset}
        if q.get("sparql_template_id") is not None:
            tags["qtype"] = f"template-{q['sparql_template_id']}"
        items.append(DatasetItem(
            id=f"{dataset}-{q['_id']}", question=text.strip(), gold_query=(q.get("sparql_query") or "").strip(),
            tags=tags, extra={"intermediary_question": q.get("intermediary_question")},
        ))
    return items


# ---------------------------------------------------------------------------------------- JSONL

def _entity(value: Any) -> EntityRef:
    return EntityRef(label=value) if isinstance(value, str) else EntityRef.model_validate(value)


def _gold(value: Any) -> GoldAnswer:
    if isinstance(value, bool):
        return GoldAnswer(label="true" if value else "false", datatype=_XSD + "boolean")
    if isinstance(value, int | float):
        return GoldAnswer(label=str(value))
    return GoldAnswer(label=value) if isinstance(value, str) else GoldAnswer.model_validate(value)


def typed_golds(golds: list[GoldAnswer], kind: str, where: str) -> list[GoldAnswer]:
    """Gold items of a declared kind, checked and typed: numbers get ``xsd:decimal``, dates
    ``xsd:gYear``/``xsd:gYearMonth``/``xsd:date`` by their precision, booleans become ``true``/``false``
    with ``xsd:boolean``. A value that is not of the kind is a :class:`DatasetError`."""
    if kind == "empty":
        if golds:
            raise DatasetError(f"{where}: kind 'empty' means the KG holds no answer, but answers are given")
        return []
    if kind in {"entity", "string"}:
        return golds
    out = []
    for g in golds:
        label = literal_text(g.label)[0] if g.label is not None else ""
        if kind == "number":
            if parse_number(label) is None:
                raise DatasetError(f"{where}: {label!r} is not a number (kind 'number')")
            out.append(g.model_copy(update={"label": label, "datatype": g.datatype or _XSD + "decimal"}))
        elif kind == "date":
            d = parse_date(label)
            if d is None:
                raise DatasetError(f"{where}: {label!r} is not a date or year (kind 'date')")
            precision = "gYear" if d.month is None else ("gYearMonth" if d.day is None else "date")
            out.append(g.model_copy(update={"label": label, "datatype": g.datatype or _XSD + precision}))
        else:  # boolean
            b = parse_boolean(label)
            if b is None:
                raise DatasetError(f"{where}: {label!r} is not yes/no/true/false (kind 'boolean')")
            out.append(g.model_copy(update={"label": "true" if b else "false", "datatype": _XSD + "boolean"}))
    return out


EXTRA_FIELDS = ("kind", "facts", "rule", "kg", "profile", "reference")  # generic JSONL fields kept in ``extra`` (R3 question kinds)


def read_jsonl(path: str | Path, *, dataset: str | None = None) -> list[DatasetItem]:
    """Generic JSONL, one question per line (see docs/eval.md).

    Fields: ``question`` (required), ``id``, ``answers`` (strings, numbers, booleans or
    ``{"label", "iri"}``), ``topic_entity``/``topic_entities`` (string or ``{"label", "iri"}``),
    ``sparql``/``gold_query``, ``gold_paths``, ``tags`` (object; ``hops``, ``qtype`` and ``kind`` are
    used for slicing); ``kind``, ``facts``, ``rule`` and ``kg`` are also kept in ``extra``.
    ``answer_kind`` (or a ``kind`` that is one of :data:`ANSWER_KINDS`) types the gold: number,
    date, boolean, or ``empty`` (no answer in the KG; ``answers`` must then be empty).
    """
    path = Path(path)
    name = dataset or path.stem
    items = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{i + 1}: not JSON: {exc}") from exc
        if "question" not in row:
            raise DatasetError(f"{path}:{i + 1}: missing field 'question'")
        topics = row.get("topic_entities")
        if topics is None and row.get("topic_entity") is not None:
            topics = [row["topic_entity"]]
        tags = {"dataset": name, **(row.get("tags") or {})}
        for key in ("hops", "qtype", "kind"):
            if key in row:
                tags[key] = row[key]
        extra = dict(row.get("extra") or {})
        for key in EXTRA_FIELDS:  # claim and commonsense files: what decides the item travels with it
            if key in row:
                extra.setdefault(key, row[key])
        kind = row.get("answer_kind") or (row["kind"] if row.get("kind") in ANSWER_KINDS else None)
        if kind is not None and kind not in ANSWER_KINDS:
            raise DatasetError(f"{path}:{i + 1}: answer_kind {kind!r} is not one of {', '.join(ANSWER_KINDS)}")
        answers = row.get("answers", [])
        if not isinstance(answers, list):
            raise DatasetError(f"{path}:{i + 1}: 'answers' must be a list")
        golds = [_gold(a) for a in answers]
        if kind is not None:
            golds = typed_golds(golds, kind, f"{path}:{i + 1}")
        items.append(DatasetItem(
            id=str(row.get("id", f"{name}-{i:05d}")), question=row["question"],
            answers=golds, answer_kind=kind,
            topic_entities=[_entity(t) for t in topics or []],
            gold_query=row.get("gold_query") or row.get("sparql"),
            gold_paths=[GoldPath.model_validate(p) for p in row.get("gold_paths", [])],
            tags=tags, extra=extra,
        ))
    return items


def write_jsonl(items: Iterable[DatasetItem], path: str | Path) -> None:
    """Writes items in the generic JSONL format (round-trips through :func:`read_jsonl`)."""
    with open(path, "w", encoding="utf-8") as fh:
        for item in items:
            row = item.model_dump(exclude_none=True)
            row["gold_query"] = row.pop("gold_query", None)
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


# ----------------------------------------------------------------------------- names & sampling

def default_data_dir() -> Path:
    """``KGTEAM_DATA_DIR``, else a ``shared/data`` folder beside the checkout (or the working
    directory); when there is none, ``./shared/data``, which the missing-file error then names."""
    env = os.environ.get("KGTEAM_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return shared_data_dir() or Path.cwd() / "shared" / "data"


def shared_data_dir() -> Path | None:
    """A ``shared/data`` folder beside the checkout or the working directory (a development setup)."""
    beside_checkout = [p.parent / "shared" / "data" for p in Path(__file__).resolve().parents]
    for candidate in [*beside_checkout, Path.cwd() / "shared" / "data"]:
        if candidate.is_dir():
            return candidate
    return None


def data_roots(data_dir: str | Path | None = None, home: str | Path | None = None) -> list[Path]:
    """Folders a named dataset is looked up in, in order. An explicit ``data_dir`` (``--data-dir``)
    or ``KGTEAM_DATA_DIR`` is the only one; otherwise ``<home>/datasets`` (``kgteam datasets get``),
    then a ``shared/data`` folder beside the checkout."""
    from kgteam.eval.catalogue import datasets_dir

    if data_dir is not None:
        return [Path(data_dir)]
    if os.environ.get("KGTEAM_DATA_DIR"):
        return [default_data_dir()]
    shared = shared_data_dir()
    return [datasets_dir(home), *([shared] if shared else [])]


DATASET_NAMES = (
    "metaqa:{1,2,3}-hop[:split]", "metaqa-consistent:{1,2,3}-hop", "wc2014[:P1|P2|C]", "pq[:2H|3H]",
    "qald9:{train,test}[:lang]", "qald10[:lang]", "lcquad1:test", "claims:<kg>[:n[:seed]]", "<file .jsonl/.json/.txt>",
)


def _hop_arg(arg: str) -> int:
    m = re.fullmatch(r"(\d)(?:-?hops?)?", arg.strip().lower())
    if not m:
        raise DatasetError(f"expected a hop count like '1-hop', got {arg!r}")
    return int(m.group(1))


def load_dataset(spec: str, data_dir: str | Path | None = None, *, home: str | Path | None = None) -> list[DatasetItem]:
    """Resolve a short dataset name (see ``DATASET_NAMES``) or a file path into items.

    Files are looked up in :func:`data_roots`; MetaQA dev questions not found there come from the
    sample in the package (:func:`read_metaqa_sample`). ``claims:<kg>[:n[:seed]]`` draws a claim set
    from a loaded KG (in ``home``, default the kgteam home) instead of reading a file: see
    :mod:`kgteam.eval.claims`.
    """
    path = Path(spec)
    if path.suffix and path.exists():
        return _load_file(path)
    roots = data_roots(data_dir, home)
    sample_ok = data_dir is None and not os.environ.get("KGTEAM_DATA_DIR")  # an explicit folder is the only one
    name, _, rest = spec.partition(":")
    args = [a for a in rest.split(":") if a] if rest else []
    name = name.lower()
    if name == "claims":
        return _claims(spec, args, home)
    try:
        if name == "metaqa":
            hops = _hop_arg(args[0]) if args else 1
            split = args[1] if len(args) > 1 else "dev"
            found = _find(roots, f"metaqa/{hops}-hop/qa_{split}.txt")
            if found is None and split == "dev" and sample_ok:
                return read_metaqa_sample(hops)
            return read_metaqa(found or _missing(roots, f"metaqa/{hops}-hop/qa_{split}.txt", "metaqa", home), hops=hops)
        if name == "metaqa-consistent":
            hops = _hop_arg(args[0]) if args else 1
            found = _find(roots, f"metaqa/{hops}-hop/dev_consistent.jsonl")
            if found is None and sample_ok:  # every sample question is one the KB reproduces
                return read_metaqa_sample(hops, dataset="metaqa-consistent")
            rel = f"metaqa/{hops}-hop/dev_consistent.jsonl"
            return read_metaqa_consistent(found or _missing(roots, rel, None, home), hops=hops)
        if name == "wc2014":
            parts = [a.upper() for a in args] or ["P1", "P2", "C"]
            out: list[DatasetItem] = []
            for part in parts:
                if part not in {"P1", "P2", "C"}:
                    raise DatasetError(f"wc2014 parts are P1, P2, C; got {part!r}")
                out += read_irn(_need(roots, f"wc2014/WC-{part}.txt", "wc2014", home), dataset="wc2014",
                                base=WC2014_BASE,
                                id_prefix=f"wc2014-{part.lower()}", qtype="conjunction" if part == "C" else None)
            return out
        if name in {"pq", "pathquestion"}:
            parts = [a.upper() for a in args] or ["2H", "3H"]
            out = []
            for part in parts:
                if part not in {"2H", "3H"}:
                    raise DatasetError(f"pq parts are 2H, 3H; got {part!r}")
                out += read_irn(_need(roots, f"pathquestion/PQ-{part}.txt", "pathquestion", home),
                                dataset="pathquestion",
                                base=PATHQUESTION_BASE, id_prefix=f"pq-{part.lower()}")
            return out
        if name == "qald9":
            split = args[0] if args else "test"
            lang = args[1] if len(args) > 1 else "en"
            return read_qald(_need(roots, f"questions/qald-9-{split}-multilingual.json", "qald9", home), language=lang,
                             dataset=f"qald9-{split}")
        if name == "qald10":
            lang = args[0] if args else "en"
            return read_qald(_need(roots, "questions/qald_10.json", "qald10", home), language=lang, dataset="qald10")
        if name == "lcquad1":
            split = args[0] if args else "test"
            return read_lcquad1(_need(roots, f"questions/lcquad1-{split}-data.json", "lcquad1", home),
                                dataset=f"lcquad1-{split}")
    except IndexError as exc:
        raise DatasetError(f"incomplete dataset name {spec!r}; known: {', '.join(DATASET_NAMES)}") from exc
    raise DatasetError(f"unknown dataset {spec!r}; known: {', '.join(DATASET_NAMES)}")


def _claims(spec: str, args: list[str], home: str | Path | None) -> list[DatasetItem]:
    from kgteam.eval.claims import load_claims

    if not args or len(args) > 3:
        raise DatasetError(f"expected claims:<kg>[:n[:seed]] (e.g. claims:metaqa:300), got {spec!r}")
    try:
        n, seed = (int(args[1]) if len(args) > 1 else 300), (int(args[2]) if len(args) > 2 else 0)
    except ValueError:
        raise DatasetError(f"claims:<kg>:<n>:<seed> takes whole numbers, got {spec!r}") from None
    if n < 1:
        raise DatasetError(f"claims:<kg>:<n> needs n >= 1, got {n}")
    try:
        return load_claims(args[0], n=n, seed=seed, home=home)
    except (KgteamError, OSError) as exc:  # an unknown KG, a broken lexicon, a store error
        raise DatasetError(f"cannot draw claims from KG {args[0]!r}: {exc}") from None


def _find(roots: list[Path], rel: str) -> Path | None:
    return next((root / rel for root in roots if (root / rel).is_file()), None)


def _need(roots: list[Path], rel: str, get: str | None, home: str | Path | None) -> Path:
    found = _find(roots, rel)
    return found if found is not None else _missing(roots, rel, get, home)


def _missing(roots: list[Path], rel: str, get: str | None, home: str | Path | None) -> NoReturn:
    """The error for a named dataset whose file is nowhere: where it was looked for, and how to get it."""
    from kgteam.eval.catalogue import datasets_dir

    how = (f"`kgteam datasets get {get}` downloads it into {datasets_dir(home)}" if get else
           "it is derived from a public set, not downloadable (see docs/eval.md)")
    raise DatasetError(f"dataset file not found: {rel} (looked in {', '.join(str(r) for r in roots)}). {how}; "
                       f"or set KGTEAM_DATA_DIR / --data-dir to a folder holding metaqa/, wc2014/, pathquestion/, "
                       f"questions/ ...; or pass the path of a JSONL/TSV file")


def _metaqa_consistent_row(line: str) -> bool:
    """MetaQA's consistent rows: ``qtype`` and ``sparql`` with answers as bare names. The generic
    format may hold both fields too, but its answers may be objects (``{"label", "iri"}``)."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return False
    if not isinstance(row, dict) or "qtype" not in row or "sparql" not in row:
        return False
    return all(isinstance(a, str) for a in row.get("answers") or [])


def _load_file(path: Path) -> list[DatasetItem]:
    if path.suffix == ".jsonl":
        first = next((ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()), "{}")
        if path.name.startswith("dev_consistent") or _metaqa_consistent_row(first):
            return read_metaqa_consistent(path)
        return read_jsonl(path)
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "questions" in data:
            return read_qald(path, dataset=path.stem)
        if isinstance(data, list) and data and "_id" in data[0]:
            return read_lcquad1(path, dataset=path.stem)
        raise DatasetError(f"{path}: neither QALD ({{'questions': ...}}) nor LC-QuAD (list with '_id')")
    first = next((ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()), "")
    if "#" in first and first.count("\t") >= 2:
        base = WC2014_BASE if "WC" in path.name else PATHQUESTION_BASE
        return read_irn(path, dataset=path.stem, base=base, id_prefix=path.stem.lower())
    return read_metaqa(path)


def sample(items: Sequence[DatasetItem], n: int | None, seed: int = 0) -> list[DatasetItem]:
    """A seeded sample of ``n`` items, in dataset order (so runs read like the file)."""
    if n is not None and n < 0:
        raise ValueError(f"sample size must be >= 0, got {n}")
    if n is None or n >= len(items):
        return list(items)
    picked = sorted(random.Random(seed).sample(range(len(items)), n))
    return [items[i] for i in picked]


def _tag_text(value: object) -> str:
    """A tag value as ``--where`` compares it: booleans as JSON writes them, whatever their case
    ("true" matches a JSON ``true`` and a written "True")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return text.lower() if text.lower() in ("true", "false") else text


def slice_by(items: Iterable[DatasetItem], **tags: TagValue) -> list[DatasetItem]:
    """Items whose tags equal every given value, e.g. ``slice_by(items, hops=2)``."""
    return [it for it in items if all(_tag_text(it.tags.get(k)) == _tag_text(v) for k, v in tags.items())]


def group_by_tag(items: Iterable[DatasetItem], tag: str) -> dict[str, list[DatasetItem]]:
    groups: dict[str, list[DatasetItem]] = {}
    for it in items:
        groups.setdefault(str(it.tags.get(tag, "n/a")), []).append(it)
    return groups
