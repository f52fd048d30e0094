"""Readers: MetaQA, TSV (WC2014 / PathQuestion style), RDF; format detection; compressed input."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import pytest
from shared_paths import SHARED_DATA

from kgteam.tools.loading import (
    LoadError,
    detect_format,
    normalise_format,
    open_source,
    read_label_map,
    read_metaqa,
    read_rdf,
    read_tsv,
)
from kgteam.tools.loading.sources import first_line

DATA = Path(__file__).resolve().parents[1] / "data" / "load"
SHARED = SHARED_DATA


def metaqa(path: Path) -> list[tuple[str, str, str, int]]:
    with open_source(path) as src:
        return [tuple(t) for t in read_metaqa(src)]


def tsv(path: Path) -> list[tuple[str, str, str, int]]:
    with open_source(path) as src:
        return [tuple(t) for t in read_tsv(src)]


def test_metaqa_reader_reads_lines_with_numbers_and_odd_names():
    rows = metaqa(DATA / "metaqa_small.txt")
    assert rows[0] == ("Blade Runner", "directed_by", "Ridley Scott", 1)
    assert ("Amélie", "directed_by", "Jean-Pierre Jeunet", 5) in rows
    assert ('"Crocodile" Dundee', "starred_actors", "Paul Hogan", 7) in rows
    assert ("x > y <script>", "has_tags", "weird name", 8) in rows
    # line 9 is blank: skipped, numbering continues
    assert ("Alien", "directed_by", "Ridley Scott", 10) in rows
    assert len(rows) == 11


def test_metaqa_reader_splits_names_containing_pipes_at_the_known_relation():
    rows = metaqa(DATA / "metaqa_small.txt")
    assert ("AC|DC: Let There Be Rock", "directed_by", "Eric Dionysius", 4) in rows


def test_metaqa_reader_reports_file_and_line_of_a_bad_line():
    with pytest.raises(LoadError) as info:
        metaqa(DATA / "metaqa_bad.txt")
    err = info.value
    assert err.line == 3 and err.file and err.file.endswith("metaqa_bad.txt")
    assert str(err).startswith(f"{err.file}:3: ")
    assert "subject|relation|object" in err.problem


def test_metaqa_reader_rejects_empty_fields_and_unsplittable_pipes(tmp_path):
    with pytest.raises(LoadError) as info:
        metaqa(DATA / "metaqa_empty_field.txt")
    assert info.value.line == 2 and "empty" in info.value.problem
    bad = tmp_path / "kb.txt"
    bad.write_text("A|directed_by|B\nX|Y|Z|W\n", encoding="utf-8")
    with pytest.raises(LoadError) as info:
        metaqa(bad)
    assert info.value.line == 2 and "no single known relation" in info.value.problem


def test_metaqa_reader_learns_relations_from_clean_lines(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("A|likes|B\nC|D|likes|E\n", encoding="utf-8")
    assert metaqa(kb)[1] == ("C|D", "likes", "E", 2)


def test_invalid_utf8_is_reported_at_its_line(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_bytes(b"A|directed_by|B\nC|directed_by|D\nE|directed_by|\xff\xfe\n")
    with pytest.raises(LoadError) as info:
        metaqa(kb)
    assert info.value.line == 3 and "UTF-8" in info.value.problem


def test_tsv_reader_folds_inverse_relations_into_the_forward_one():
    rows = tsv(DATA / "wc_small.tsv")
    assert rows[0] == ("John_SMITH", "plays_in_club", "Team_A", 1)  # from Team_A plays_in_club_inverse John_SMITH
    assert rows[1] == ("John_SMITH", "plays_in_club", "Team_A", 2)
    assert ("Ana_LOPEZ", "plays_position", "Goalkeeper", 4) in rows
    assert not any(r[1].endswith("_inverse") for r in rows)


def test_tsv_reader_ignores_empty_columns_pathquestion_style():
    rows = tsv(DATA / "pq_small.txt")
    assert rows == [
        ("ludwig_of_x", "parents", "maximilian_of_x", 1),
        ("ludwig_of_x", "profession", "king", 2),
        ("maximilian_of_x", "children", "ludwig_of_x", 4),
    ]


def test_tsv_reader_reports_wrong_column_count_with_line():
    with pytest.raises(LoadError) as info:
        tsv(DATA / "tsv_bad.tsv")
    assert info.value.line == 2 and "3 tab-separated columns" in info.value.problem


@pytest.mark.parametrize("suffix,opener", [(".gz", gzip.open), (".xz", lzma.open), (".bz2", bz2.open)])
def test_compressed_files_read_transparently(tmp_path, suffix, opener):
    target = tmp_path / f"metaqa_small.txt{suffix}"
    with opener(target, "wb") as fh:
        fh.write((DATA / "metaqa_small.txt").read_bytes())
    assert metaqa(target) == metaqa(DATA / "metaqa_small.txt")
    assert detect_format(target, first_line(target)) == "metaqa"


def test_truncated_compressed_file_is_a_load_error(tmp_path):
    target = tmp_path / "kb.txt.xz"
    data = lzma.compress((DATA / "metaqa_small.txt").read_bytes() * 50)
    target.write_bytes(data[: len(data) // 2])
    with pytest.raises(LoadError) as info:
        metaqa(target)
    assert info.value.file == str(target)


def test_label_map_reader(tmp_path):
    with open_source(DATA / "fb_entities.tsv") as src:
        assert read_label_map(src)["/m/02"] == "Ridley Scott"
    bad = tmp_path / "labels.tsv"
    bad.write_text("/m/01\tA\n/m/02\n", encoding="utf-8")
    with open_source(bad) as src, pytest.raises(LoadError) as info:
        read_label_map(src)
    assert info.value.line == 2


def test_rdf_reader_merges_named_graphs_into_the_default_graph():
    with open_source(DATA / "small.nq") as src:
        quads = list(read_rdf(src, "nquads"))
    assert len(quads) == 3
    assert all(str(q.graph_name) == "DEFAULT" for q in quads)


def test_rdf_reader_reads_turtle_and_ntriples():
    with open_source(DATA / "small.ttl") as src:
        ttl = list(read_rdf(src, "turtle"))
    with open_source(DATA / "small.nt") as src:
        nt = list(read_rdf(src, "ntriples"))
    assert len(ttl) == 10 and len(nt) == 4


def test_rdf_reader_reads_trig_and_rdfxml():
    with open_source(DATA / "small.trig") as src:
        trig = list(read_rdf(src, "trig"))
    assert len(trig) == 3 and all(str(q.graph_name) == "DEFAULT" for q in trig)
    with open_source(DATA / "small.rdf") as src:
        xml = list(read_rdf(src, "rdfxml"))
    assert {q.predicate.value for q in xml} == {"http://www.w3.org/2000/01/rdf-schema#label",
                                               "http://example.org/kg/directedBy"}


def test_rdf_syntax_error_names_file_and_line():
    with open_source(DATA / "bad.ttl") as src, pytest.raises(LoadError) as info:
        list(read_rdf(src, "turtle"))
    assert info.value.line == 4
    assert str(info.value).startswith(f"{DATA / 'bad.ttl'}:4: ")


def test_format_detection_and_override(tmp_path):
    assert detect_format(Path("x.nt")) == "ntriples"
    assert detect_format(Path("x.ttl.gz")) == "turtle"
    assert detect_format(Path("x.nq.xz")) == "nquads"
    assert detect_format(Path("x.tsv")) == "tsv"
    assert detect_format(Path("x.trig")) == "trig" and detect_format(Path("x.rdf")) == "rdfxml"
    assert detect_format(Path("kb.txt"), "a|directed_by|b") == "metaqa"
    assert detect_format(Path("kb.txt"), "a\tr\tb") == "tsv"
    with pytest.raises(LoadError, match="--format"):
        detect_format(Path("x.json"))
    assert normalise_format("N-Triples") == "ntriples" and normalise_format("ttl") == "turtle"
    with pytest.raises(LoadError, match="unknown format"):
        normalise_format("jsonld")


# ---------------------------------------------------------------- the real shared files


def _shared(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"{path} not available")
    return path


def test_real_metaqa_kb_reads_every_line():
    rows = metaqa(_shared("metaqa", "kb.txt"))
    assert len(rows) == 128_185
    assert {r[1] for r in rows} == {
        "directed_by", "written_by", "starred_actors", "release_year", "in_language",
        "has_tags", "has_genre", "has_imdb_votes", "has_imdb_rating",
    }


def test_real_wc2014_inverse_relations_fold_onto_forward_triples():
    path = _shared("wc2014", "WC2014.txt")
    rows = tsv(path)
    assert len(rows) == 6482
    relations = {r[1] for r in rows}
    assert relations == {"is_aged", "is_in_country", "plays_for_country", "plays_in_club", "plays_position",
                         "wears_number"}
    # every *_inverse line is a copy of a forward line: folding makes them coincide
    distinct = {r[:3] for r in rows}
    raw_lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    forward = {tuple(line.split("\t")) for line in raw_lines if not line.split("\t")[1].endswith("_inverse")}
    assert distinct == forward


def test_real_pathquestion_kbs_read():
    for name in ("2H-kb.txt", "3H-kb.txt"):
        rows = tsv(_shared("pathquestion", name))
        assert rows and all(len(r[0]) and len(r[2]) for r in rows)
    assert "spouse" in {r[1] for r in tsv(_shared("pathquestion", "3H-kb.txt"))}
