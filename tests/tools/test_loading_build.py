"""build_kg: store + label index + manifest, labels, determinism, atomic swap on errors and interrupts."""

from __future__ import annotations

import gc
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyoxigraph as ox
import pytest
from shared_paths import SHARED_DATA

from kgteam.tools.iri import RDFS_LABEL, SKOS_ALT_LABEL, SKOS_NOTATION, mint_entity_iri
from kgteam.tools.kg import open_kg
from kgteam.tools.loading import LoadError, LoadProgress, build_kg

DATA = Path(__file__).resolve().parents[1] / "data" / "load"
META = "http://example.org/metaqa/"
EX = "http://example.org/kg/"


def dump(kg_dir: Path) -> list[str]:
    """All triples of a KG folder's store as sorted N-Triples lines."""
    store = ox.Store.read_only(str(kg_dir / "store"))
    try:
        return sorted(str(q.triple) for q in store)
    finally:
        del store
        gc.collect()


def labels_of(kg_dir: Path, iri: str, predicate: str = RDFS_LABEL) -> list[str]:
    store = ox.Store.read_only(str(kg_dir / "store"))
    try:
        return sorted(q.object.value for q in store.quads_for_pattern(ox.NamedNode(iri), ox.NamedNode(predicate), None))
    finally:
        del store
        gc.collect()


def work_dirs(home: Path) -> list[str]:
    kgs = home / "kgs"
    return sorted(p.name for p in kgs.iterdir() if p.name.startswith((".tmp+", ".old+")))


BIG = 20_000  # more than one progress interval (16,384 triples), so a read event reports triples


def big_metaqa(path: Path, n: int = BIG) -> Path:
    """``n`` distinct triples over few entities: long enough for progress events, cheap to index."""
    lines = (f"Film {i % 1000}|directed_by|Person {i // 1000}\n" for i in range(n))
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_metaqa_build_makes_store_index_and_manifest(home):
    m = build_kg([DATA / "metaqa_small.txt"], "mini", home=home, progress=False)
    kg_dir = home / "kgs" / "mini"
    assert m.path == kg_dir and (kg_dir / "store").is_dir() and (kg_dir / "labels").is_dir()
    assert m.base_iri == META and m.format == "metaqa"
    assert (m.counts.facts, m.counts.entities, m.counts.relations) == (10, 15, 5)
    assert m.counts.triples == m.counts.facts + m.counts.label_triples
    assert m.counts.label_docs == 20
    saved = json.loads((kg_dir / "manifest.json").read_text())
    assert saved["sources"][0]["sha256"] and saved["sources"][0]["records"] == 11
    assert saved["counts"] == m.counts.model_dump()
    assert saved["kgteam_version"] and saved["created_at"]
    triples = dump(kg_dir)
    odd = mint_entity_iri(META, "x > y <script>")
    assert f"<{odd}> <{META}r/has_tags> <{META}e/weird%20name>" in triples
    assert f"<{META}e/AC%7CDC%3A%20Let%20There%20Be%20Rock> <{META}r/directed_by> <{META}e/Eric%20Dionysius>" in triples
    assert labels_of(kg_dir, odd) == ["x > y <script>"]
    assert labels_of(kg_dir, f"{META}r/directed_by") == ["directed by"]
    assert labels_of(kg_dir, f"{META}r/directed_by", SKOS_ALT_LABEL) == ["directed_by"]
    assert labels_of(kg_dir, f"{META}e/1982") == ["1982"]


def test_opened_kg_answers_sparql_and_label_search(home):
    build_kg([DATA / "metaqa_small.txt"], "mini", home=home, progress=False)
    with open_kg("mini", home=home) as kg:
        res = kg.store.query(
            f"SELECT ?m WHERE {{ ?m <{META}r/directed_by> <{META}e/Ridley%20Scott> }}", timeout_s=5, max_rows=100
        )
        assert sorted(r["m"].value for r in res.rows) == [f"{META}e/Alien", f"{META}e/Blade%20Runner"]
        hits = kg.labels.search("amelie", k=3)
        assert hits[0].iri == mint_entity_iri(META, "Amélie")
        rel = kg.labels.search("directed by", k=3, kind="relation")
        assert rel[0].iri == f"{META}r/directed_by"


def test_tsv_inverse_relations_become_the_forward_predicate(home):
    m = build_kg([DATA / "wc_small.tsv"], "wc", home=home, progress=False)
    base = "http://example.org/wc/"
    assert m.base_iri == base
    triples = dump(home / "kgs" / "wc")
    assert not any("_inverse" in t for t in triples)
    club = [t for t in triples if t.split(" ")[1] == f"<{base}r/plays_in_club>"]
    assert club == [f"<{base}e/John_SMITH> <{base}r/plays_in_club> <{base}e/Team_A>"]
    assert f"<{base}e/Ana_LOPEZ> <{base}r/plays_position> <{base}e/Goalkeeper>" in triples
    assert m.counts.relations == 4 and m.counts.facts == 5
    # underscores become spaces in labels; the original name is kept as an alias
    kg_dir = home / "kgs" / "wc"
    assert labels_of(kg_dir, f"{base}e/John_SMITH") == ["John SMITH"]
    assert labels_of(kg_dir, f"{base}e/John_SMITH", SKOS_ALT_LABEL) == ["John_SMITH"]


def test_names_with_quotes_backslashes_and_accents_keep_their_exact_labels(home, tmp_path):
    """Name triples reach the store as N-Triples text: every character a literal must escape survives."""
    odd = ['Say "Hi" Now', "C:\\temp\\dir", "Zoë Ångström", "a<b>&c", "tab\tin name"]
    path = tmp_path / "odd.txt"
    path.write_text("".join(f"{name}|related_to|Plain {i}\n" for i, name in enumerate(odd)), encoding="utf-8")
    m = build_kg([path], "odd", home=home, progress=False, base_iri=EX)
    assert m.counts.facts == len(odd)
    kg_dir = home / "kgs" / "odd"
    for name in odd:
        iri = mint_entity_iri(EX, name)
        assert name in labels_of(kg_dir, iri) + labels_of(kg_dir, iri, SKOS_ALT_LABEL)
    with open_kg("odd", home=home) as kg:
        hits = kg.labels.search('Say "Hi" Now', k=1)
        assert hits and hits[0].iri == mint_entity_iri(EX, 'Say "Hi" Now')


def test_a_failing_store_writer_or_label_indexer_stops_the_load_and_keeps_the_previous_kg(home, tmp_path, monkeypatch):
    """Both run on threads of their own; what goes wrong there is raised in the load, nothing half-built stays."""
    import kgteam.tools.backends.tantivy_index as tantivy_index
    import kgteam.tools.loading.builder as builder

    build_kg([DATA / "metaqa_small.txt"], "kg", home=home, progress=False)
    before = dump(home / "kgs" / "kg")
    quoted = tmp_path / "quoted.txt"
    quoted.write_text('Say "Hi"|related_to|Plain\n', encoding="utf-8")
    with monkeypatch.context() as m:
        m.setattr(builder, "_NT_ESCAPES", str.maketrans({}))  # an unescaped quote: text the store cannot parse
        with pytest.raises(LoadError, match="writing the store failed"):
            build_kg([quoted], "kg", home=home, progress=False)
    with monkeypatch.context() as m:
        def broken(self, doc):
            raise OSError("disk full")

        m.setattr(tantivy_index.TantivyLabelIndexWriter, "add", broken)
        with pytest.raises(LoadError, match="building the label index failed: disk full"):
            build_kg([DATA / "metaqa_small.txt"], "kg", home=home, progress=False)
    assert dump(home / "kgs" / "kg") == before
    assert work_dirs(home) == []


def test_pathquestion_style_tsv_with_double_tabs(home):
    m = build_kg([DATA / "pq_small.txt"], "pq", home=home, progress=False)
    assert m.format == "tsv" and m.counts.facts == 3 and m.counts.entities == 3


def test_ids_with_label_files_fb15k_style(home):
    m = build_kg([DATA / "fb_small.tsv"], "fb", home=home, progress=False,
                 entity_labels=DATA / "fb_entities.tsv", relation_labels=DATA / "fb_relations.tsv")
    kg_dir = home / "kgs" / "fb"
    e01 = mint_entity_iri("http://example.org/fb/", "/m/01")
    assert e01 == "http://example.org/fb/e/%2Fm%2F01"
    assert labels_of(kg_dir, e01) == ["Blade Runner"]
    assert labels_of(kg_dir, e01, SKOS_NOTATION) == ["/m/01"]
    rel = "http://example.org/fb/r/%2Ffilm%2Ffilm%2Fdirected_by"
    assert labels_of(kg_dir, rel) == ["film directed by"]
    assert labels_of(kg_dir, "http://example.org/fb/r/%2Ffilm%2Ffilm%2Flanguage") == ["film film language"]
    assert m.entity_labels is not None and m.entity_labels.records == 3
    with open_kg("fb", home=home) as kg:
        assert kg.labels.search("ridley scott", k=1)[0].iri == mint_entity_iri("http://example.org/fb/", "/m/02")


def test_rdf_input_keeps_labels_and_fills_missing_ones(home):
    m = build_kg([DATA / "small.ttl"], "ttl", home=home, progress=False)
    kg_dir = home / "kgs" / "ttl"
    assert m.format == "turtle"
    # existing labels kept; none added for labelled IRIs
    assert labels_of(kg_dir, f"{EX}Blade_Runner") == ["Blade Runner", "Der Blade Runner"]
    assert labels_of(kg_dir, f"{EX}Ridley_Scott") == []  # has schema:name: no rdfs:label invented
    assert labels_of(kg_dir, f"{EX}directedBy") == ["directed by"]
    # unlabelled entity and predicate get a humanised local name
    assert labels_of(kg_dir, f"{EX}Alien") == ["Alien"]
    assert labels_of(kg_dir, f"{EX}releaseYear") == ["release year"]
    with open_kg("ttl", home=home) as kg:
        hit = kg.labels.search("Blade Runner", k=1)[0]
        assert hit.iri == f"{EX}Blade_Runner" and hit.label == "Blade Runner"  # @en beats @de
        assert kg.labels.search("BR", k=3)[0].iri == f"{EX}Blade_Runner"  # skos:altLabel is an alias
        assert kg.labels.search("Ridley Scott", k=1)[0].iri == f"{EX}Ridley_Scott"  # schema:name
        assert kg.labels.search("release year", k=1, kind="relation")[0].iri == f"{EX}releaseYear"


def test_nquads_named_graphs_merge_and_blank_nodes_stay_distinct_across_files(home, tmp_path):
    m = build_kg([DATA / "small.nq"], "nq", home=home, progress=False)
    assert m.counts.facts == 2  # the triple in g1 and in the default graph is one triple
    a, b = tmp_path / "a.nt", tmp_path / "b.nt"
    a.write_text(f'_:b0 <{EX}p> "from a" .\n', encoding="utf-8")
    b.write_text(f'_:b0 <{EX}p> "from b" .\n', encoding="utf-8")
    build_kg([a, b], "blanks", home=home, progress=False)
    subjects = {t.split(" ")[0] for t in dump(home / "kgs" / "blanks") if t.split(" ")[1] == f"<{EX}p>"}
    assert len(subjects) == 2


def test_trig_and_rdfxml_load_into_one_graph(home):
    m = build_kg([DATA / "small.trig", DATA / "small.rdf"], "mixed_rdf", home=home, progress=False)
    assert m.format == "mixed" and [s.format for s in m.sources] == ["trig", "rdfxml"]
    assert m.counts.facts == 3  # the directedBy triple of g1, g2 and the RDF/XML file is one triple
    assert labels_of(home / "kgs" / "mixed_rdf", f"{EX}Michael_Mann") == ["Michael Mann"]


def test_loading_the_same_input_twice_gives_the_same_kg(home):
    first = build_kg([DATA / "metaqa_small.txt", DATA / "small.ttl"], "twice", home=home, progress=False)
    before = dump(home / "kgs" / "twice")
    index_before = json.loads((home / "kgs" / "twice" / "labels" / "labels.json").read_text())
    second = build_kg([DATA / "metaqa_small.txt", DATA / "small.ttl"], "twice", home=home, progress=False)
    assert dump(home / "kgs" / "twice") == before
    assert second.counts == first.counts and second.base_iri == first.base_iri
    assert json.loads((home / "kgs" / "twice" / "labels" / "labels.json").read_text()) == index_before
    assert [s.sha256 for s in second.sources] == [s.sha256 for s in first.sources]
    assert work_dirs(home) == []


def test_bad_input_raises_with_file_and_line_and_keeps_the_previous_kg(home):
    build_kg([DATA / "metaqa_small.txt"], "kg", home=home, progress=False)
    before = dump(home / "kgs" / "kg")
    with pytest.raises(LoadError) as info:
        build_kg([DATA / "metaqa_small.txt", DATA / "metaqa_bad.txt"], "kg", home=home, progress=False)
    assert info.value.file == str((DATA / "metaqa_bad.txt").resolve()) and info.value.line == 3
    assert dump(home / "kgs" / "kg") == before
    assert work_dirs(home) == []
    with pytest.raises(LoadError) as info:
        build_kg([DATA / "bad.ttl"], "kg", home=home, progress=False)
    assert info.value.line == 4 and str(info.value).startswith(f"{(DATA / 'bad.ttl').resolve()}:4:")
    assert dump(home / "kgs" / "kg") == before
    assert work_dirs(home) == []


def test_argument_errors_are_load_errors(home, tmp_path):
    with pytest.raises(LoadError, match="no such file"):
        build_kg([tmp_path / "missing.nt"], "kg", home=home, progress=False)
    with pytest.raises(LoadError, match="invalid KG name"):
        build_kg([DATA / "small.nt"], "../evil", home=home, progress=False)
    with pytest.raises(LoadError, match="base IRI"):
        build_kg([DATA / "small.nt"], "kg", home=home, progress=False, base_iri="not a base")
    with pytest.raises(LoadError, match="no input files"):
        build_kg([], "kg", home=home, progress=False)
    empty = tmp_path / "empty.ttl"
    empty.write_text("@prefix ex: <http://example.org/> .\n", encoding="utf-8")
    with pytest.raises(LoadError, match="no triples found"):
        build_kg([empty], "kg", home=home, progress=False)
    with pytest.raises(LoadError, match="no such labels file"):
        build_kg([DATA / "fb_small.tsv"], "kg", home=home, progress=False, entity_labels=tmp_path / "x.tsv")
    assert not (home / "kgs" / "kg").exists()


@pytest.mark.parametrize("phase", ["read", "index"])
@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError])
def test_interrupt_from_progress_callback_keeps_the_previous_kg(home, tmp_path, phase, exc):
    build_kg([DATA / "metaqa_small.txt"], "kg", home=home, progress=False)
    before = dump(home / "kgs" / "kg")
    seen: list[LoadProgress] = []

    def callback(event: LoadProgress) -> None:
        seen.append(event)
        if event.phase == phase and event.triples > 0:
            raise exc("stop")

    with pytest.raises(exc):
        build_kg([big_metaqa(tmp_path / "big.txt")], "kg", home=home, progress=callback)
    assert seen and seen[-1].phase == phase
    assert dump(home / "kgs" / "kg") == before
    assert work_dirs(home) == []
    with open_kg("kg", home=home) as kg:
        assert kg.manifest["counts"]["facts"] == 10


def test_progress_events_cover_the_input(home, tmp_path):
    events: list[LoadProgress] = []
    m = build_kg([big_metaqa(tmp_path / "big.txt")], "big", home=home, progress=events.append)
    reads = [e for e in events if e.phase == "read"]
    assert reads[-1].bytes_done == reads[-1].bytes_total == (tmp_path / "big.txt").stat().st_size
    assert max(e.triples for e in reads) == BIG == m.counts.facts
    phases = [e.phase for e in events]  # the store's final write is shown between reading and indexing
    assert phases.count("finish") == 1 and events[phases.index("finish")].source == "writing the store"
    assert max(i for i, p in enumerate(phases) if p == "read") < phases.index("finish") < phases.index("index")
    assert events[-1].phase == "index" and events[-1].docs == events[-1].docs_total == m.counts.label_docs



def _rdf_file(path: Path, n: int = 60) -> Path:
    lines = [f"<{EX}p{i}> <{EX}knows> <{EX}p{i + 1}> .\n<{EX}p{i}> <{RDFS_LABEL}> \"Person {i}\" .\n" for i in range(n)]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_a_big_load_is_compacted_once_at_its_end_and_says_so(home, tmp_path, monkeypatch):
    """One ``bulk_extend``, or a name-triple load's last chunks, leave overlapping files a read-only
    store never compacts: past the line, the load optimises the store and shows the step."""
    from kgteam.tools.loading import builder

    compacted: list[int] = []
    compact = builder._compact
    monkeypatch.setattr(builder, "_compact", lambda store: (compacted.append(len(store)), compact(store)))
    src = _rdf_file(tmp_path / "kg.nt")
    small: list[LoadProgress] = []
    build_kg([src], "small", home=home, progress=small.append)
    assert compacted == []
    monkeypatch.setattr(builder, "OPTIMIZE_AFTER_TRIPLES", 100)  # 120 triples: past the line
    big: list[LoadProgress] = []
    build_kg([src], "big", home=home, progress=big.append)
    assert len(compacted) == 1 and compacted[0] > 120  # once, after the last triple and label
    steps = [e.source for e in big if e.phase == "finish"]
    assert steps == ["writing the store", "optimizing the store"]
    assert [e.source for e in small if e.phase == "finish"] == ["writing the store"]
    phases = [e.phase for e in big]
    assert max(i for i, p in enumerate(phases) if p == "finish") < phases.index("index")
    assert dump(home / "kgs" / "big") == dump(home / "kgs" / "small")
    # name triples too, past the same line
    text: list[LoadProgress] = []
    build_kg([big_metaqa(tmp_path / "big.txt", 200)], "text", home=home, progress=text.append)
    assert [e.source for e in text if e.phase == "finish"] == ["writing the store", "optimizing the store"]
    assert len(compacted) == 2
    monkeypatch.setattr(builder, "OPTIMIZE_AFTER_TRIPLES", 10_000)
    build_kg([big_metaqa(tmp_path / "big.txt", 200)], "text", home=home, progress=text.append)
    assert len(compacted) == 2


def test_name_triples_go_to_the_store_in_chunks_that_grow_to_a_bound(home, tmp_path, monkeypatch):
    """Chunks start small, grow with what is stored up to a bound, and shrink near the end of the
    input; how the text is cut never changes what is stored."""
    from kgteam.tools.loading import builder, sources

    src = big_metaqa(tmp_path / "big.txt", 6000)
    build_kg([src], "one", home=home, progress=False)  # 200k-line chunks: the whole file in one
    sizes: list[int] = []

    def counted(store, chunk, **kw):
        sizes.append(chunk.count("\n"))
        return store.bulk_load(chunk, **kw)

    monkeypatch.setattr(builder._StoreLoader, "_LINES", 500)
    monkeypatch.setattr(builder._StoreLoader, "_MAX_LINES", 1200)
    monkeypatch.setattr(builder._StoreLoader, "_GROWTH", 0.5)
    real_run = builder._StoreLoader._run

    def run(self):
        self.store = _Wrapped(self.store, counted)
        real_run(self)

    monkeypatch.setattr(builder._StoreLoader, "_run", run)
    monkeypatch.setattr(builder, "_REPORT_EVERY", 100)  # the share read is known every 100 triples
    monkeypatch.setattr(sources, "_CHUNK", 4096)  # and moves every 4 kB
    build_kg([src], "chunked", home=home, progress=False)
    # 500 lines while fewer than 1000 are sent, then half of those sent, at most 1200 ...
    assert sizes[:5] == [500, 500, 500, 750, 1125] and max(sizes) == 1200
    top = sizes.index(1200)
    assert sizes[:top + 1] == sorted(sizes[:top + 1])
    # ... and, near the end, smaller again before the last chunk
    assert any(b < a for a, b in itertools.pairwise(sizes[top:-1])), sizes
    assert dump(home / "kgs" / "chunked") == dump(home / "kgs" / "one")
    # near the end, chunks are half the lines still to come, never below the start size
    chunk_lines = builder._StoreLoader._chunk_lines
    assert chunk_lines(2000, 0.5) == 1000  # 2000 lines to come: grown as before
    assert chunk_lines(6000, 0.75) == 1000  # 2000 to come
    assert chunk_lines(6000, 0.99) == chunk_lines(6000, 1.0) == 500
    assert chunk_lines(6000, 0.0) == 1200  # nothing known yet: as it grows


def test_a_file_grouped_by_subject_loads_as_the_same_lines_in_another_order(home, tmp_path):
    """A subject repeated from the line before is not looked up again: that must not change the KG."""
    lines = [f"Film {i // 5}|{('directed_by', 'written_by', 'starred_actors')[i % 3]}|Person {i % 7}\n" for i in range(300)]
    grouped = tmp_path / "grouped.txt"
    grouped.write_text("".join(lines), encoding="utf-8")
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("".join(lines[::2] + lines[1::2]), encoding="utf-8")
    first = build_kg([grouped], "grouped", home=home, progress=False, base_iri=META)
    second = build_kg([mixed], "mixed", home=home, progress=False, base_iri=META)
    assert dump(home / "kgs" / "grouped") == dump(home / "kgs" / "mixed")
    assert first.counts == second.counts and first.counts.entities == 60 + 7


class _Wrapped:
    """A store whose ``bulk_load`` goes through ``hook(store, chunk, **kw)``."""

    def __init__(self, store, hook) -> None:
        self._store, self._hook = store, hook

    def bulk_load(self, chunk, **kw):
        return self._hook(self._store, chunk, **kw)


_CHILD = """
import sys, time
from pathlib import Path
from kgteam.tools.loading import build_kg
def slow(event):
    if event.phase == "read" and event.triples > 0:
        print("loading", flush=True)
        time.sleep(0.05)
build_kg([Path(sys.argv[1])], "kg", home=Path(sys.argv[2]), progress=slow)
print("finished", flush=True)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_killed_load_process_keeps_the_previous_kg(home, tmp_path, sig):
    build_kg([DATA / "metaqa_small.txt"], "kg", home=home, progress=False)
    before = dump(home / "kgs" / "kg")
    big = big_metaqa(tmp_path / "big.txt", 300_000)
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(big), str(home)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "loading"
        assert any(p.name.startswith(".tmp+kg+") for p in (home / "kgs").iterdir())
        os.kill(proc.pid, sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    if sig == signal.SIGINT:
        assert "KeyboardInterrupt" in (proc.stderr.read() if proc.stderr else "")
        assert work_dirs(home) == []  # cleaned up by the interrupted process itself
    with open_kg("kg", home=home) as kg:  # the previous KG opens and is unchanged
        assert kg.manifest["counts"]["facts"] == 10
    assert dump(home / "kgs" / "kg") == before
    # a SIGKILLed build cannot clean up after itself: the next load of that name does
    build_kg([DATA / "wc_small.tsv"], "kg", home=home, progress=False)
    assert work_dirs(home) == []


def test_crash_between_the_two_renames_is_recovered(home):
    build_kg([DATA / "metaqa_small.txt"], "kg", home=home, progress=False)
    kgs = home / "kgs"
    before = dump(kgs / "kg")
    os.rename(kgs / "kg", kgs / ".old+kg+deadbeef")  # as if killed right after moving the old KG aside
    (kgs / ".tmp+kg+123-abc").mkdir()
    with open_kg("kg", home=home) as kg:
        assert kg.manifest["counts"]["facts"] == 10
    assert dump(kgs / "kg") == before
    assert work_dirs(home) == []


def test_a_reader_of_the_old_kg_survives_the_swap(home):
    build_kg([DATA / "metaqa_small.txt"], "kg", home=home, progress=False)
    with open_kg("kg", home=home) as kg:
        build_kg([DATA / "wc_small.tsv"], "kg", home=home, progress=False)
        time.sleep(0.01)
        res = kg.store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", timeout_s=5, max_rows=10)
        assert int(res.rows[0]["n"].value) > 0
    with open_kg("kg", home=home) as kg:
        assert kg.manifest["format"] == "tsv"


def test_real_wc2014_kb_loads_without_inverse_predicates(home):
    path = SHARED_DATA / "wc2014" / "WC2014.txt"
    if not path.is_file():
        pytest.skip(f"{path} not available")
    m = build_kg([path], "wc2014", home=home, progress=False)
    assert m.counts.relations == 6
    assert m.counts.facts == 3977  # 6,482 lines, every *_inverse line a copy of a forward one
    with open_kg("wc2014", home=home) as kg:
        res = kg.store.query(
            "SELECT DISTINCT ?p WHERE { ?s ?p ?o FILTER(CONTAINS(STR(?p), 'inverse')) }", timeout_s=10, max_rows=10
        )
        assert res.rows == []
        hit = kg.labels.search("Frank Lampard", k=1)[0]
        assert hit.iri == "http://example.org/wc2014/e/Frank_LAMPARD" and hit.label == "Frank LAMPARD"
