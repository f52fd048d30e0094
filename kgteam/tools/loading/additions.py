"""Reviewed additions: triples a person accepted (from a team's proposals) written into a KG.

Nothing a team reads from text reaches the KG by itself: ``kgteam ask --proposals FILE`` writes
the proposals, a person deletes the lines they reject, and ``kgteam kg add NAME FILE`` writes the
rest. Every line is checked before anything is written (the predicate must be one the KG uses;
an IRI must be one the KG has; a name without an IRI becomes a new entity, or the KG's entity of
exactly that name), so a bad file changes nothing. Each triple must also fit the relation's
observed domain and range (:func:`misfit`): a text read by rules can link a studio as a director,
and a person reviewing many lines may miss it. A triple that does not fit is refused, and nothing
is written, unless ``force``. The file is kept in the KG folder and listed in its manifest as a source.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import pyoxigraph as ox

from kgteam.tools.backends.base import LabelDoc
from kgteam.tools.backends.tantivy_index import TantivyLabelIndex, TantivyLabelIndexWriter
from kgteam.tools.loading.errors import LoadError
from kgteam.tools.loading.layout import LABELS_DIR, STORE_DIR, kgs_dir, name_lock
from kgteam.tools.loading.manifest import KGManifest, SourceInfo
from kgteam.tools.text_normalize import normalize_label

RDFS_LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
ADDITIONS_DIR = "additions"
END_SAMPLE = 50  # entities read at one end of a relation to learn what kind of thing stands there
COMMON_SHARE = 0.25  # a (relation, side) pair at least this share of them has marks their kind
_LIST_GLUE = re.compile(r"^(?:[\s,;&]|\band\b|\bor\b|[A-Z][\w'’.-]*)*$")


@dataclass(frozen=True)
class PlannedTriple:
    """One line of the file as it would be written, and why it is refused (None: it fits)."""

    number: int
    subject: str
    predicate: str
    object: str
    subject_new: bool = False
    object_new: bool = False
    already: bool = False
    refused: str | None = None

    def line(self) -> str:
        s = f"{self.subject} (new)" if self.subject_new else self.subject
        o = f"{self.object} (new)" if self.object_new else self.object
        return f"{s} --{self.predicate}--> {o}"


@dataclass
class AddReport:
    added: int = 0  # fact triples written
    already: int = 0  # lines the KG already held
    new_entities: list[str] = field(default_factory=list)  # IRIs minted for names the KG did not know
    kept_as: Path | None = None
    planned: list[PlannedTriple] = field(default_factory=list)  # every line, as checked
    written: bool = False  # False: a line was refused and nothing was written (no ``force``)

    @property
    def refused(self) -> list[PlannedTriple]:
        return [p for p in self.planned if p.refused]


@dataclass(frozen=True)
class _Line:
    number: int
    subject: ox.NamedNode
    predicate: ox.NamedNode
    object: ox.NamedNode
    subject_new: bool = False
    object_new: bool = False
    labels: tuple[str, str, str] = ("", "", "")
    sentence: str = ""


def _read(path: Path) -> list[tuple[int, dict]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(f"{path}: cannot read it: {exc}") from exc
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LoadError(f"{path}:{number}: not a JSON object: {exc.msg}") from None
        if not isinstance(row, dict):
            raise LoadError(f"{path}:{number}: not a JSON object")
        rows.append((number, row))
    if not rows:
        raise LoadError(f"{path}: no triples in it (one JSON object per line, as `kgteam ask --proposals` writes)")
    return rows


def _node(iri: str, where: str) -> ox.NamedNode:
    try:
        return ox.NamedNode(iri)
    except ValueError:
        raise LoadError(f"{where}: {iri!r} is not an IRI") from None


def add_reviewed_triples(name: str, file: str | Path, home: Path | None = None, *, force: bool = False) -> AddReport:
    """Write the triples of ``file`` into KG ``name`` after checking every line (see module doc).
    A triple that does not fit its relation's domain or range writes nothing (``report.written``
    False, ``report.refused`` says why), unless ``force``."""
    path = Path(file)
    rows = _read(path)
    kgs = kgs_dir(home)
    folder = kgs / name
    if not (folder / "manifest.json").exists():
        raise LoadError(f"no KG named {name!r} under {kgs} (see `kgteam list`)")
    report = AddReport()
    with name_lock(kgs, name):
        manifest = KGManifest.model_validate_json((folder / "manifest.json").read_text(encoding="utf-8"))
        if manifest.endpoint is not None:  # never create a store/ folder in an endpoint KG
            raise LoadError(f"KG {name!r} is a SPARQL endpoint ({manifest.endpoint.url}): add the triples on that "
                            "server, then run `kgteam kg connect` again to refresh its labels")
        try:
            store = ox.Store(str(folder / STORE_DIR))
        except OSError as exc:
            raise LoadError(f"KG {name!r} is in use by another program (close its chat or server first): {exc}") from None
        labels = TantivyLabelIndex(folder / LABELS_DIR)
        try:
            lines, minted = _check(rows, path, store, labels, manifest.base_iri)
        finally:
            labels.close()
        report.planned = _plan(lines, store)
        if report.refused and not force:
            del store
            return report
        facts = list(dict.fromkeys(ox.Quad(x.subject, x.predicate, x.object) for x in lines))  # a line twice: once
        report.already = sum(1 for q in facts if next(store.quads_for_pattern(q.subject, q.predicate, q.object), None))
        new_quads = [q for q in facts if not next(store.quads_for_pattern(q.subject, q.predicate, q.object), None)]
        label_quads = [ox.Quad(ox.NamedNode(iri), RDFS_LABEL, ox.Literal(label)) for iri, label in minted.items()]
        kept = folder / ADDITIONS_DIR / f"{time.strftime('%Y%m%d-%H%M%S')}-{path.name}"
        kept.parent.mkdir(exist_ok=True)
        shutil.copyfile(path, kept)
        written = [*new_quads, *label_quads]
        try:  # the store, then the label index; a failure in either takes the store's part back out
            store.extend(written)
            store.flush()
            if minted:
                writer = TantivyLabelIndexWriter(folder / LABELS_DIR)
                writer.add_many(LabelDoc(iri=iri, kind="entity", labels=[label]) for iri, label in minted.items())
                writer.commit()
        except BaseException:
            for q in written:
                store.remove(q)
            store.flush()
            kept.unlink(missing_ok=True)
            raise
        finally:
            del store
        counts = manifest.counts.model_copy(update={
            "triples": manifest.counts.triples + len(new_quads) + len(label_quads),
            "facts": manifest.counts.facts + len(new_quads),
            "label_triples": manifest.counts.label_triples + len(label_quads),
            "entities": manifest.counts.entities + len(minted),
            "label_docs": manifest.counts.label_docs + len(minted)})
        manifest = manifest.model_copy(update={"counts": counts, "sources": [
            *manifest.sources, SourceInfo(path=str(kept), format="reviewed-jsonl", records=len(rows),
                                          sha256=hashlib.sha256(kept.read_bytes()).hexdigest(),
                                          bytes=kept.stat().st_size)]})
        manifest.write(folder)
    report.added = len(new_quads)
    report.written = True
    report.new_entities = sorted(minted)
    report.kept_as = kept
    return report


def _check(rows: list[tuple[int, dict]], path: Path, store: ox.Store, labels: TantivyLabelIndex, base: str,
           ) -> tuple[list[_Line], dict[str, str]]:
    """Every line's three terms, or a ``LoadError`` naming the first bad line."""
    minted: dict[str, str] = {}
    out: list[_Line] = []
    used_predicates: dict[str, bool] = {}

    def known(node: ox.NamedNode) -> bool:
        return bool(next(store.quads_for_pattern(node, None, None), None)
                    or next(store.quads_for_pattern(None, None, node), None))

    def end(row: dict, key: str, where: str) -> tuple[ox.NamedNode, bool]:
        """The term, and whether it is a new entity minted for a name."""
        iri = row.get(key)
        label = row.get(f"{key}_label")
        if iri:
            node = _node(str(iri), where)
            if not known(node):
                raise LoadError(f"{where}: {key} {iri} is not in the KG; remove '{key}' to add "
                                f"{label!r} as a new entity")
            return node, False
        if not isinstance(label, str) or not label.strip():
            raise LoadError(f"{where}: needs '{key}' (an IRI of the KG) or '{key}_label' (a name)")
        label = " ".join(label.split())
        same = [h for h in labels.search(label, k=5) if normalize_label(h.label) == normalize_label(label)]
        if same:  # the KG's entity of that name (case and spacing aside), never a second one
            return ox.NamedNode(same[0].iri), False
        iri = base + urllib.parse.quote(label, safe="")
        if iri not in minted and known(ox.NamedNode(iri)):
            raise LoadError(f"{where}: a new entity for {label!r} would take the IRI {iri}, which the KG "
                            f"already uses for something else; give '{key}' explicitly")
        minted.setdefault(iri, label)
        return ox.NamedNode(iri), True

    for number, row in rows:
        where = f"{path}:{number}"
        predicate = row.get("predicate")
        if not predicate:
            raise LoadError(f"{where}: needs 'predicate' (a relation IRI of the KG)")
        p = _node(str(predicate), where)
        if p.value not in used_predicates:
            used_predicates[p.value] = bool(next(store.quads_for_pattern(None, p, None), None))
        if not used_predicates[p.value]:
            raise LoadError(f"{where}: predicate {p.value} is not a relation of this KG")
        (subject, s_new), (obj, o_new) = end(row, "subject", where), end(row, "object", where)
        names = tuple(_text(row.get(f"{k}_label")) or _label_of(store, term)
                      for k, term in (("subject", subject), ("predicate", p), ("object", obj)))
        out.append(_Line(number, subject, p, obj, s_new, o_new, names,  # type: ignore[arg-type]
                         _text(row.get("sentence"))))
    return out, minted


def _label_of(store: ox.Store, node: ox.NamedNode) -> str:
    """The KG's label of a term, else the last part of its IRI: how a line is shown."""
    for q in islice(store.quads_for_pattern(node, RDFS_LABEL, None), 1):
        return q.object.value
    return urllib.parse.unquote(re.split(r"[/#]", node.value.rstrip("/#"))[-1]) or node.value


def _text(value: object) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


# ------------------------------------------------------------------ domain and range


class _Ends:
    """What kind of thing the KG has at each end of a relation, from a sample of the entities there:
    their classes and the (relation, side) pairs that many of them take part in (a KG without
    classes still tells films from people: films have directors, people are directors)."""

    def __init__(self, store: ox.Store) -> None:
        self.store = store
        self._profiles: dict[tuple[str, str], tuple[bool, set[str], set[tuple[str, str]]]] = {}

    def _signature(self, node: ox.NamedNode) -> set[tuple[str, str]]:
        out = {(q.predicate.value, "out") for q in islice(self.store.quads_for_pattern(node, None, None), 2000)}
        out |= {(q.predicate.value, "in") for q in islice(self.store.quads_for_pattern(None, None, node), 2000)}
        return out - {(RDFS_LABEL.value, "out"), (RDF_TYPE.value, "out")}

    def _types(self, node: ox.NamedNode) -> set[str]:
        return {q.object.value for q in islice(self.store.quads_for_pattern(node, RDF_TYPE, None), 200)}

    def profile(self, predicate: ox.NamedNode, side: str) -> tuple[bool, set[str], set[tuple[str, str]]]:
        """(its values are literals, classes seen there, common (relation, side) pairs) at ``side``."""
        key = (predicate.value, side)
        if key not in self._profiles:
            seen: dict[object, None] = {}
            for q in self.store.quads_for_pattern(None, predicate, None):
                seen.setdefault(q.subject if side == "subject" else q.object, None)
                if len(seen) >= END_SAMPLE:
                    break
            named = [t for t in seen if isinstance(t, ox.NamedNode)]
            literal = bool(seen) and not named
            classes: set[str] = set()
            pairs: Counter[tuple[str, str]] = Counter()
            for node in named:
                classes |= self._types(node)
                pairs.update(self._signature(node))
            own = (predicate.value, "out" if side == "subject" else "in")
            common = {pair for pair, n in pairs.items() if n >= COMMON_SHARE * len(named) and pair != own}
            self._profiles[key] = (literal, classes, common)
        return self._profiles[key]

    def fits(self, node: ox.NamedNode, predicate: ox.NamedNode, side: str) -> bool:
        """A known entity fits an end when the KG has it there already, it is of a class seen there,
        or it takes part in a relation many entities there take part in."""
        here = (node, predicate, None) if side == "subject" else (None, predicate, node)
        if next(self.store.quads_for_pattern(*here), None):
            return True
        literal, classes, common = self.profile(predicate, side)
        if literal:
            return False
        return bool(self._types(node) & classes) or bool(self._signature(node) & common)


def listed_together(sentence: str, a: str, b: str) -> bool:
    """``a`` and ``b`` stand in one list of names in ``sentence`` (only commas, "and"/"or" and other
    names between them: "Cast: A, B and C"), so both are values of one relation end."""
    i, j = sentence.find(a), sentence.find(b)
    if i < 0 or j < 0:
        return False
    (lo, lo_name), (hi, _) = sorted([(i, a), (j, b)])
    between = sentence[lo + len(lo_name):hi]
    return lo + len(lo_name) <= hi and bool(_LIST_GLUE.match(between))


def misfit(line: _Line, lines: list[_Line], ends: _Ends) -> str | None:
    """Why the triple does not fit its relation's observed domain and range (None: it fits).

    A known end must be of the kind the KG has at that end (:meth:`_Ends.fits`). A new name has no
    kind the KG could check, so it is taken only where nothing contradicts it: not both ends new,
    not as a value where the KG's values are literals, and not at an end that another line read
    from the same sentence gives a known entity of the right kind (the sentence's director is the
    known one, not the studio named after "for"), unless the sentence lists the two together."""
    s_label, p_label, o_label = line.labels
    if line.subject_new and line.object_new:
        return "neither end is in the KG, so nothing shows what kind of things they are"
    if not line.subject_new and not ends.fits(line.subject, line.predicate, "subject"):
        return f"{s_label} is not the kind of thing the KG has as the subject of '{p_label}'"
    if line.object_new:
        if ends.profile(line.predicate, "object")[0]:
            return f"the KG's values of '{p_label}' are literals, not names"
    elif not ends.fits(line.object, line.predicate, "object"):
        return f"{o_label} is not the kind of thing the KG has as the object of '{p_label}'"
    for new_side, known_side in (("subject", "object"), ("object", "subject")):
        if not getattr(line, f"{new_side}_new") or not line.sentence:
            continue
        mine = line.labels[0 if new_side == "subject" else 2]
        for other in lines:
            if (other is line or other.sentence != line.sentence or other.predicate != line.predicate
                    or getattr(other, f"{new_side}_new")
                    or getattr(other, known_side) != getattr(line, known_side)):
                continue
            theirs = other.labels[0 if new_side == "subject" else 2]
            if ends.fits(getattr(other, new_side), line.predicate, new_side) and \
                    not listed_together(line.sentence, mine, theirs):
                return f"the same sentence gives {theirs} as the {new_side} of '{p_label}' here"
    return None


def _plan(lines: list[_Line], store: ox.Store) -> list[PlannedTriple]:
    ends = _Ends(store)
    return [PlannedTriple(number=x.number, subject=x.labels[0], predicate=x.labels[1], object=x.labels[2],
                          subject_new=x.subject_new, object_new=x.object_new,
                          already=bool(next(store.quads_for_pattern(x.subject, x.predicate, x.object), None)),
                          refused=misfit(x, lines, ends))
            for x in lines]
