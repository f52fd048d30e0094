"""Reviewed additions: triples a person accepted (from a team's proposals) written into a KG.

Nothing a team reads from text reaches the KG by itself: ``kgteam ask --proposals FILE`` writes
the proposals, a person deletes the lines they reject, and ``kgteam kg add NAME FILE`` writes the
rest. Every line is checked before anything is written (the predicate must be one the KG uses;
an IRI must be one the KG has; a name without an IRI becomes a new entity, or the KG's entity of
exactly that name), so a bad file changes nothing. The file is kept in the KG folder and listed
in its manifest as a source.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox

from kgteam.tools.backends.base import LabelDoc
from kgteam.tools.backends.tantivy_index import TantivyLabelIndex, TantivyLabelIndexWriter
from kgteam.tools.loading.errors import LoadError
from kgteam.tools.loading.layout import LABELS_DIR, STORE_DIR, kgs_dir, name_lock
from kgteam.tools.loading.manifest import KGManifest, SourceInfo
from kgteam.tools.text_normalize import normalize_label

RDFS_LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
ADDITIONS_DIR = "additions"


@dataclass
class AddReport:
    added: int = 0  # fact triples written
    already: int = 0  # lines the KG already held
    new_entities: list[str] = field(default_factory=list)  # IRIs minted for names the KG did not know
    kept_as: Path | None = None


@dataclass(frozen=True)
class _Line:
    number: int
    subject: ox.NamedNode
    predicate: ox.NamedNode
    object: ox.NamedNode


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


def add_reviewed_triples(name: str, file: str | Path, home: Path | None = None) -> AddReport:
    """Write the triples of ``file`` into KG ``name`` after checking every line (see module doc)."""
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

    def end(row: dict, key: str, where: str) -> ox.NamedNode:
        iri = row.get(key)
        label = row.get(f"{key}_label")
        if iri:
            node = _node(str(iri), where)
            if not known(node):
                raise LoadError(f"{where}: {key} {iri} is not in the KG; remove '{key}' to add "
                                f"{label!r} as a new entity")
            return node
        if not isinstance(label, str) or not label.strip():
            raise LoadError(f"{where}: needs '{key}' (an IRI of the KG) or '{key}_label' (a name)")
        label = " ".join(label.split())
        same = [h for h in labels.search(label, k=5) if normalize_label(h.label) == normalize_label(label)]
        if same:  # the KG's entity of that name (case and spacing aside), never a second one
            return ox.NamedNode(same[0].iri)
        iri = base + urllib.parse.quote(label, safe="")
        if iri not in minted and known(ox.NamedNode(iri)):
            raise LoadError(f"{where}: a new entity for {label!r} would take the IRI {iri}, which the KG "
                            f"already uses for something else; give '{key}' explicitly")
        minted.setdefault(iri, label)
        return ox.NamedNode(iri)

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
        out.append(_Line(number, end(row, "subject", where), p, end(row, "object", where)))
    return out, minted
