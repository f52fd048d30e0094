"""The W3C SPARQL 1.1 test suite through ``run_sparql`` on a real Oxigraph KG: the approved query
tests run (or stop at their time limit), and every update, federated and negative-syntax test
is refused (see ``w3c_suite.py``; the table is ``benchmarks/w3c_sparql.py``)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hostile_corpus import fingerprint
from w3c_suite import FEDERATED, MUST_REFUSE, MUST_RUN, load_suite, run_suite, unexpected

from kgteam.tools.backends.oxigraph_store import OxigraphStore

# Approved tests that must run but are refused, each for a reason that is right for run_sparql.
KNOWN_REFUSALS = {
    "syntax-query/test_4": "calls a custom function, <http://example/function>: only built-ins and XSD casts",
}


def _fingerprint(store_dir: Path) -> str:
    store = OxigraphStore(store_dir)
    try:
        return fingerprint(store)
    finally:
        store.close()


@pytest.fixture(scope="module")
def suite() -> list:
    return load_suite()


def test_the_manifests_are_read_as_the_suite_lists_them(suite: list) -> None:
    kinds = {t.kind for t in suite}
    assert set(MUST_RUN) | set(MUST_REFUSE) <= kinds
    approved_queries = [t for t in suite if t.kind == "QueryEvaluationTest" and t.approved]
    assert len(approved_queries) > 150
    assert all(t.path.is_file() for t in suite)
    # the draft's {n,m} paths are in files no manifest entry names any more
    assert {t.kind for t in suite if t.path.name in ("pp04.rq", "path-3-1.rq")} == {"unlisted"}


async def test_w3c_suite_through_run_sparql(store_dir: Path, suite: list) -> None:
    started = time.perf_counter()
    before = _fingerprint(store_dir)
    results = await run_suite(store_dir, [t for t in suite if t.kind != "unlisted"], timeout_s=1.0)
    wrong = [(r.test.id, r.outcome, r.message[:160]) for r in unexpected(results)
             if r.test.id not in KNOWN_REFUSALS]
    assert wrong == []
    known = {r.test.id: r.outcome for r in results if r.test.id in KNOWN_REFUSALS}
    assert known == dict.fromkeys(KNOWN_REFUSALS, "refused")
    refused_must = [r for r in results if r.test.kind in MUST_REFUSE and r.test.approved]
    assert len(refused_must) > 150  # updates, federated and negative syntax: all there, all refused
    assert _fingerprint(store_dir) == before  # the KG is as it was
    assert time.perf_counter() - started < 60  # ~6 s on a quiet machine


def test_the_drafts_dropped_forms_are_refused_with_their_name(suite: list) -> None:
    """{n,m} paths and BINDINGS (a draft had them; SPARQL 1.1 dropped the one and renamed the
    other VALUES): refused, and the message names the form."""
    from kgteam.tools.sparql_guard import analyse_query
    from kgteam.tools.types import ToolError

    unlisted = [t for t in suite if t.kind == "unlisted"]
    counted = [t for t in unlisted if re.search(r"[\w)]\{(\d+,?\d*|,\d+)\}", t.path.read_text())]
    bindings = [t for t in unlisted if re.search(r"\bBINDINGS\b", t.path.read_text())
                and t.path.parent.name not in FEDERATED]
    assert len(counted) >= 5 and len(bindings) >= 5
    for tests, says in ((counted, "{n,m}"), (bindings, "VALUES")):
        for t in tests:
            with pytest.raises(ToolError) as e:
                analyse_query(t.path.read_text(), 10)
            assert says in str(e.value), t.id



def test_an_escaped_colon_is_refused_with_the_name_to_write_instead() -> None:
    """``qname-escape-01`` (``og:audio\\:title``) is no test of SPARQL 1.1 any more: its manifest entry
    is commented out ("obsoleted by decision to allow colons in prefixname local parts, but not allow
    them to be escaped"), and the approved negative test ``syn-bad-pname-06`` (``:c\\:z``) must be
    refused. The refusal says what to write; that form (``qname-escape-03``) runs and finds the triple."""
    import pyoxigraph

    from kgteam.tools.sparql_guard import analyse_query, guard_query
    from kgteam.tools.types import ToolError

    folder = Path(__file__).resolve().parents[1] / "data" / "w3c_sparql11" / "syntax-query"
    manifest = (folder / "manifest.ttl").read_text(encoding="utf-8")
    assert "# :test_52\t# obsoleted" in manifest and "mf:action  <qname-escape-01.rq>" in manifest
    for name in ("qname-escape-01.rq", "syn-bad-pname-06.rq"):
        with pytest.raises(ToolError, match="a colon needs no escape in a prefixed name: write (og:audio:title|:c:z)"):
            analyse_query((folder / name).read_text(encoding="utf-8"), 10)
    store = pyoxigraph.Store()
    store.add(pyoxigraph.Quad(pyoxigraph.NamedNode("http://e/page"), pyoxigraph.NamedNode("http://ogp.me/ns#audio:title"),
                              pyoxigraph.Literal("Song")))
    text = guard_query((folder / "qname-escape-03.rq").read_text(encoding="utf-8"), 10)
    assert [(row["page"].value, row["title"].value) for row in store.query(text)] == [("http://e/page", "Song")]
