"""Web search: the ``web_search`` tool over a ``SearchProvider`` — a local corpus (BM25 + dense,
fused), a SearxNG instance or the Brave Search API — returning ``Document`` s that prompts show
only fenced (``kgteam.prompts.documents.fence_documents``). See docs/web_search.md."""

from kgteam.tools.web.corpus import LocalCorpus, open_corpus
from kgteam.tools.web.corpus_build import (
    CorpusManifest,
    build_corpus,
    corpora_dir,
    list_corpora,
    remove_corpus,
)
from kgteam.tools.web.document import SNIPPET_MAX_CHARS, Document
from kgteam.tools.web.errors import CorpusError, ProviderHTTPError, WebSearchError
from kgteam.tools.web.provider import SearchProvider
from kgteam.tools.web.resource import WebSearch, build_web_search

__all__ = [
    "SNIPPET_MAX_CHARS",
    "CorpusError",
    "CorpusManifest",
    "Document",
    "LocalCorpus",
    "ProviderHTTPError",
    "SearchProvider",
    "WebSearch",
    "WebSearchError",
    "build_corpus",
    "build_web_search",
    "corpora_dir",
    "list_corpora",
    "open_corpus",
    "remove_corpus",
]
