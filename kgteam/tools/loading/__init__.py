"""Loading knowledge graphs: readers for RDF, MetaQA and TSV files, and ``build_kg``."""

from kgteam.tools.loading.builder import METAQA_BASE_IRI, build_kg
from kgteam.tools.loading.errors import LoadError
from kgteam.tools.loading.formats import FORMATS, detect_format, normalise_format
from kgteam.tools.loading.layout import check_kg_name, kg_home, kgs_dir
from kgteam.tools.loading.manifest import KGCounts, KGManifest, SourceInfo
from kgteam.tools.loading.progress import LoadProgress
from kgteam.tools.loading.rdf_reader import read_rdf
from kgteam.tools.loading.sources import open_source
from kgteam.tools.loading.text_readers import NameTriple, read_label_map, read_metaqa, read_tsv

__all__ = [
    "FORMATS",
    "METAQA_BASE_IRI",
    "KGCounts",
    "KGManifest",
    "LoadError",
    "LoadProgress",
    "NameTriple",
    "SourceInfo",
    "build_kg",
    "check_kg_name",
    "detect_format",
    "kg_home",
    "kgs_dir",
    "normalise_format",
    "open_source",
    "read_label_map",
    "read_metaqa",
    "read_rdf",
    "read_tsv",
]
