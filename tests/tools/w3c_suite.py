"""The W3C SPARQL 1.1 test suite (``tests/data/w3c_sparql11``) through ``run_sparql``: every test
the suite's own manifests list, classified by the manifests (test type, approval, federated or
not), sent to the guard and, where it passes, run on a small real KG.

Shared by ``test_w3c_sparql.py`` (asserts) and ``benchmarks/w3c_sparql.py`` (the table). A test
is ``refused`` (the guard said no), ``store_refused`` (the guard let it through and Oxigraph's
parser refused it before evaluating anything: the two parsers disagreed), ``run`` (an answer came back), ``stopped`` (its time limit ended it) or
``failed`` (any other error while running).
Nothing here compares results with the suite's expected ones: the KG is not the test's data, and
the question is only whether the guard lets read-only SPARQL through and keeps the rest out.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rdflib import Graph, Namespace, URIRef
from rdflib.collection import Collection

from kgteam.tools.backends.oxigraph_store import OxigraphStore
from kgteam.tools.kg_tools import KGTools
from kgteam.tools.sparql_guard import analyse_query
from kgteam.tools.types import ToolError

SUITE = Path(__file__).resolve().parents[1] / "data" / "w3c_sparql11"
MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
QT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-query#")
UT = Namespace("http://www.w3.org/2009/sparql/tests/test-update#")
DAWGT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#")
FEDERATED = ("service", "syntax-fed")  # the suite's federation manifests (SPARQL 1.1 Federated Query)
# What each kind of test must come to through run_sparql.
MUST_RUN = ("QueryEvaluationTest", "CSVResultFormatTest", "PositiveSyntaxTest11")
MUST_REFUSE = ("UpdateEvaluationTest", "PositiveUpdateSyntaxTest11", "NegativeUpdateSyntaxTest11",
               "NegativeSyntaxTest11", "federated")


@dataclass(frozen=True)
class W3CTest:
    id: str  # manifest folder / entry name
    kind: str  # the manifest's test type (mf:...); "federated" for the federation manifests; "unlisted"
    # for a file no manifest entry names (the suite dropped the test, e.g. the draft's {n,m} paths)
    approved: bool  # dawgt:approval dawgt:Approved
    path: Path  # the query or update file


@dataclass
class Result:
    test: W3CTest
    outcome: str  # run | refused | store_refused | stopped | failed
    seconds: float
    message: str = ""


def load_suite(root: Path = SUITE) -> list[W3CTest]:
    """Every test with a query or update file that the manifests of ``manifest-all.ttl`` list."""
    top = Graph().parse(root / "manifest-all.ttl", format="turtle", publicID=(root / "manifest-all.ttl").as_uri())
    tests: list[W3CTest] = []
    for include in top.objects(None, MF.include):
        for manifest in Collection(top, include):
            tests.extend(_manifest_tests(Path(str(manifest).removeprefix("file://")), root))
    listed = {t.path for t in tests}
    for path in sorted(root.rglob("*.r[qu]")):  # files of tests the manifests dropped (or never listed)
        if path not in listed:
            tests.append(W3CTest(path.relative_to(root).as_posix(), "unlisted", False, path))
    return tests


def _manifest_tests(path: Path, root: Path) -> list[W3CTest]:
    g = Graph().parse(path, format="turtle", publicID=path.as_uri())
    folder = path.parent.relative_to(root).as_posix()
    out = []
    for entries in g.objects(URIRef(path.as_uri()), MF.entries):
        for entry in Collection(g, entries):
            kind = str(g.value(entry, _RDF_TYPE)).rsplit("#", 1)[-1]
            action = g.value(entry, MF.action)
            file = g.value(action, QT.query) or g.value(action, UT.request) or action
            if file is None or not str(file).startswith("file://") or not str(file).endswith((".rq", ".ru")):
                continue  # protocol and service-description tests: no query file
            out.append(W3CTest(f"{folder}/{str(entry).rsplit('#', 1)[-1]}",
                               "federated" if folder in FEDERATED else kind,
                               g.value(entry, DAWGT.approval) == DAWGT.Approved,
                               Path(str(file).removeprefix("file://"))))
    return out


_RDF_TYPE = URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


class _NoLabels:
    """run_sparql needs no label index; KGTools wants one to close."""

    def search(self, text: str, k: int, kind: str = "entity") -> list:
        return []

    def close(self) -> None:
        pass


async def run_suite(store_dir: Path, tests: list[W3CTest], *, timeout_s: float = 1.0) -> list[Result]:
    """Every test through the guard and, where it passes, through ``run_sparql`` on the store."""
    store = OxigraphStore(store_dir)
    tools = KGTools(store, _NoLabels(), default_timeout_s=timeout_s, max_rows=100)  # type: ignore[arg-type]
    results = []
    try:
        for test in tests:
            query = test.path.read_text(encoding="utf-8")
            t0 = time.perf_counter()
            try:
                analyse_query(query, tools.max_rows + 1)
            except ToolError as exc:
                results.append(Result(test, "refused", time.perf_counter() - t0, str(exc)))
                continue
            t0 = time.perf_counter()
            try:
                await tools.run_sparql(query)
                outcome, message = "run", ""
            except ToolError as exc:
                message = str(exc)
                outcome = ("stopped" if message.startswith("query timed out")
                           else "store_refused" if message.startswith("SPARQL syntax error") else "failed")
            results.append(Result(test, outcome, time.perf_counter() - t0, message))
    finally:
        tools.close()
    return results


def table(results: list[Result]) -> dict[str, dict[str, int]]:
    """Per test type (approved / not approved): how many ran, were refused, stopped, failed."""
    rows: dict[str, Counter[str]] = {}
    for r in results:
        key = f"{r.test.kind} ({'approved' if r.test.approved else 'not approved'})"
        rows.setdefault(key, Counter())["tests"] += 1
        rows[key][r.outcome] += 1
    return {key: {col: rows[key][col] for col in ("tests", "run", "stopped", "refused", "store_refused", "failed")}
            for key in sorted(rows)}


def expected(test: W3CTest) -> tuple[str, ...]:
    """The outcomes read-only SPARQL 1.1 asks of run_sparql for an approved test."""
    if test.kind in MUST_REFUSE:  # by the guard itself (scope rules included), not only by Oxigraph's parser
        return ("refused",)
    if test.kind in MUST_RUN:
        return ("run", "stopped")
    return ("run", "stopped", "refused", "store_refused", "failed")


def unexpected(results: list[Result]) -> list[Result]:
    """Approved tests whose outcome is not what read-only SPARQL 1.1 asks of run_sparql."""
    return [r for r in results if r.test.approved and r.outcome not in expected(r.test)]
