"""``kgteam tune`` made faster without changing what it learns (issue 39, item 8).

Each shortcut is checked against the slow way it replaces: answer matching by set look-ups against
``match_item``, the run's KG cache against fresh tool calls, readings kept from the lexicon pass
against reading again, readers trained side by side on shared features against readers trained
alone. ``benchmarks/tune_cost.py`` compares whole runs with the code before the shortcuts.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import pytest

from kgteam.eval.datasets import DatasetItem, GoldAnswer, load_dataset
from kgteam.eval.metrics import Predicted, match_item
from kgteam.eval.teaching import record_bank
from kgteam.eval.tune_cache import KGReadCache, TuneMemo, _fresh
from kgteam.eval.tuning import derive_lexicon
from kgteam.roles.semantic import SemanticLayer
from kgteam.roles.semantic.reader import FeatureRows, cross_fit, teach, train
from kgteam.tools.example_bank import BankStep, Candidate, Example
from kgteam.tools.lexicon import Lexicon
from kgteam.tools.types import RDFTerm, SparqlResult, ToolError

ATELIER = Path(__file__).resolve().parents[1] / "data" / "kgs" / "atelier"

LABELS = ["Paris", "paris", "The Paris", "Pâris", "Paris!", "", "  ", "1979", "1,979", "1979-05-25", "May 25, 1979",
          "12.19", "12.192", "12", "12.0", "yes", "true", "no", "False", '"42"^^xsd:integer', '"42"', "42",
          '"Paris"@en', "http://example.org/x/Paris", "Mount Sel", "mount_sel", "n/a", "Q42", "25 May 1979"]
IRIS = [None, "http://example.org/x/Paris", "http://example.org/x/Other"]


def _golds() -> list[GoldAnswer]:
    golds = [GoldAnswer(label=label) for label in LABELS]
    golds += [GoldAnswer(label=label, iri=iri) for label in ("Paris", "1979") for iri in IRIS[1:]]
    golds += [GoldAnswer(iri="http://example.org/x/Paris"), GoldAnswer(iri="http://www.wikidata.org/entity/Q42")]
    golds += [GoldAnswer(label="1979", datatype="http://www.w3.org/2001/XMLSchema#integer"),
              GoldAnswer(label="1979-05-25", datatype="http://www.w3.org/2001/XMLSchema#date"),
              GoldAnswer(label="true", datatype="http://www.w3.org/2001/XMLSchema#boolean")]
    return golds


def test_set_lookups_match_answers_as_match_item_does():
    memo = TuneMemo()
    golds = _golds()
    answers = [(label, iri) for label in LABELS for iri in IRIS]
    for label, iri in answers:
        for gold in golds:
            want = match_item(Predicted(label=label, iri=iri), gold) is not None
            assert memo.matches_any(label, iri, [gold]) == want, (label, iri, gold)
    for some in itertools.islice(itertools.combinations(golds, 3), 0, None, 97):
        some = list(some)
        for chunk in (answers[:20], answers[20:50], answers[50:]):
            hits = sum(1 for a in chunk if any(match_item(Predicted(label=a[0], iri=a[1]), g) for g in some))
            found = sum(1 for g in some if any(match_item(Predicted(label=a[0], iri=a[1]), g) for a in chunk))
            assert memo.overlap(chunk, some) == (hits, found)


def test_a_cached_result_is_a_copy_its_holder_may_change():
    term = RDFTerm(type="uri", value="http://example.org/a")
    result = SparqlResult(query="q", variables=["x"], rows=[{"x": term}])
    copied = _fresh(result)
    assert copied == result and copied is not result
    copied.rows.append({"x": term})
    copied.rows[0]["y"] = term
    copied.variables.append("y")
    assert result.rows == [{"x": term}] and result.variables == ["x"]


async def test_the_run_cache_reuses_kg_calls_but_not_failures_nor_the_lexicons():
    calls: list[str] = []

    class Fake:
        async def run_sparql(self, query: str, limit: int | None = None) -> SparqlResult:
            calls.append(query)
            if "fail" in query:
                raise ToolError("query timed out after 1s")
            return SparqlResult(query=query, rows=[{"x": RDFTerm(type="literal", value=query)}])

        async def relation_names(self, predicates: list[str]) -> dict:
            calls.append("names")
            return {}

    from kgteam.tools.toolbox import Toolbox

    box = Toolbox.from_callables({"run_sparql": Fake.run_sparql, "relation_names": Fake.relation_names}, [Fake()])
    box = Toolbox({n: t.cached() for n, t in box.items()})
    cache = KGReadCache()
    shared = cache.toolbox(box)
    first = await shared["run_sparql"]("a", limit=5)
    first.rows.clear()  # the holder's copy: the cache keeps its own
    again = await shared["run_sparql"]("a", limit=5)
    assert again.rows == [{"x": RDFTerm(type="literal", value="a")}]
    validated = await shared["run_sparql"](query="a", limit=5)  # the same call, written otherwise
    assert validated == again and calls == ["a"]
    with pytest.raises(ToolError, match="bad arguments"):
        await shared["run_sparql"]("a", limit=True)  # not the call with limit=1: still refused
    for _ in range(2):
        with pytest.raises(ToolError):
            await shared["run_sparql"]("fail")
    assert calls == ["a", "fail", "fail"]
    await shared["relation_names"](["p"])
    await cache.toolbox(box)["relation_names"](["p"])  # the next pass's lexicon may name p otherwise
    assert calls.count("names") == 2


def _bank(n: int, seed: int = 0) -> list[Example]:
    """Examples with many words, some right readings and some answer-less ones."""
    words = ["alpha", "beta", "gamma", "delta", "who", "which", "made", "wrote", "born", "kind"]
    out = []
    for i in range(n):
        said = [words[(i * 7 + k * 3 + seed) % len(words)] for k in range(4)] + ["<e>"]
        cands = []
        for j, pred in enumerate(("p", "q", "r", "s")):
            steps = [BankStep(predicate=pred, direction="out")] + (
                [BankStep(predicate="t", direction="in")] if (i + j) % 3 == 0 else [])
            cands.append(Candidate(entity=f"e{i % 7}", words=said, steps=steps, hand=0.1 * ((i + j) % 5),
                                   support=0.05 * j, unexplained=0.3 * (j % 2), strength=0.2 + 0.1 * j,
                                   gold=j == (i % 3), f1=1.0 if j == (i % 3) else 0.0))
        out.append(Example(id=f"x{i}", question=" ".join(said), candidates=cands))
    return out


def test_readers_sharing_features_are_the_readers_trained_alone():
    bank = _bank(60)
    rows = FeatureRows()
    train(_bank(40, seed=5), rows=rows)  # numbers the columns in another order first
    alone, shared = train(bank), train(bank, rows=rows)
    assert list(alone.weights.items()) == list(shared.weights.items())  # every bit, in the same order
    alone.stats.pop("seconds")
    shared.stats.pop("seconds")
    assert alone.to_json() == shared.to_json()
    held_alone = cross_fit(bank, 5)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=3) as pool:
        held_side_by_side = cross_fit(bank, 5, rows=FeatureRows(), pool=pool)
    assert held_alone.pairs == held_side_by_side.pairs and held_alone.unanswered == held_side_by_side.unanswered
    reader, _ = teach(bank)
    reader.stats.pop("seconds")
    assert reader.weights == alone.weights


@pytest.fixture(scope="module")
def atelier_items() -> list[DatasetItem]:
    examples = load_dataset(str(ATELIER / "examples.jsonl"))
    born = [e for e in examples if "born" in e.question.lower()]
    others = [e for e in examples if e not in born][:6]
    return born + others + load_dataset(str(ATELIER / "joins.jsonl"))[:3]


def test_one_tune_run_learns_what_separate_slow_passes_learn(atelier_home, atelier_items):
    """The lexicon pass and the bank pass as tune runs them (one run's caches, examples read side by
    side, the bank pass reusing the readings the new phrases cannot change) against each pass on
    its own (fresh tools, one example at a time): the same lexicon, the same bank."""
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    kg = open_kg("atelier", home=atelier_home)

    def tools(lexicon: Lexicon) -> KGTools:
        return KGTools.from_kg(kg, embedder=None, lexicon=lexicon, reader=None)

    async def slow() -> tuple[Lexicon, dict]:
        lexicon, _ = await derive_lexicon(SemanticLayer(tools(Lexicon()).toolbox()), atelier_items, min_count=2,
                                          concurrency=1)
        bank = await record_bank(SemanticLayer(tools(lexicon).toolbox(), reader=None), atelier_items,
                                 concurrency=1)
        return lexicon, bank.model_dump()

    async def fast() -> tuple[Lexicon, dict, TuneMemo]:
        memo, cache = TuneMemo(), KGReadCache()
        lexicon, _ = await derive_lexicon(SemanticLayer(cache.toolbox(tools(Lexicon()).toolbox())), atelier_items,
                                          min_count=2, memo=memo)
        memo.lexicon_changed(Lexicon(), lexicon)
        bank = await record_bank(SemanticLayer(cache.toolbox(tools(lexicon).toolbox()), reader=None),
                                 atelier_items, memo=memo)
        return lexicon, bank.model_dump(), memo

    try:
        slow_lexicon, slow_bank = asyncio.run(slow())
        fast_lexicon, fast_bank, memo = asyncio.run(fast())
    finally:
        kg.close()
    assert slow_lexicon.relations  # a phrase was learned: some readings had to be read again
    assert fast_lexicon == slow_lexicon
    assert json.dumps(fast_bank, sort_keys=True) == json.dumps(slow_bank, sort_keys=True)
    assert any(e["join"] for e in fast_bank["examples"])
    assert memo.kept and memo.reread  # readings the new phrase cannot change were kept, the others read again


def _tune_outputs(home: Path, examples: Path) -> dict[str, object]:
    from typer.testing import CliRunner

    from kgteam.cli.app import app

    done = CliRunner().invoke(app, ["tune", "atelier", "--examples", str(examples), "--home", str(home), "-q",
                                    "--min-count", "2"])
    assert done.exit_code == 0, done.output
    folder = home / "kgs" / "atelier"
    return {name: json.loads((folder / name).read_text(encoding="utf-8"))
            for name in ("examples.json", "reader.json", "lexicon.json")}


def test_a_second_process_reading_half_the_examples_learns_the_same(tmp_path, monkeypatch):
    """``kgteam tune`` with a second process reading every other chunk of the examples writes the
    same bank, reader and lexicon as one process reading them all."""
    import kgteam.eval.tune_worker as tuning
    from kgteam.tools.loading import build_kg

    examples = tmp_path / "examples.jsonl"
    examples.write_text((ATELIER / "examples.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    outputs = []
    started: list[tuning.SecondReader | None] = []
    real = tuning.SecondReader.start.__func__

    def start(cls, *args, **kwargs):
        second = real(cls, *args, **kwargs)
        started.append(second)
        return second

    monkeypatch.setattr(tuning.SecondReader, "start", classmethod(start))
    monkeypatch.setattr(tuning, "_cores", lambda: 2)
    for split in (False, True):
        home = tmp_path / f"home-{split}"
        build_kg([ATELIER / "atelier.ttl"], "atelier", home=home, progress=False, embed=False)
        monkeypatch.setattr(tuning, "SPLIT_AT", 2 if split else 10**9)
        outputs.append(_tune_outputs(home, examples))
    for out in outputs:
        out["reader.json"]["stats"].pop("seconds")
    assert outputs[0] == outputs[1]
    assert outputs[0]["lexicon.json"]["relations"]  # a phrase learned: the bank pass read some examples again
    assert started[0] is None and started[1] is not None and not started[1].failed
    assert started[1].theirs and started[1].mine


def test_when_the_second_process_fails_this_one_reads_its_share(tmp_path):
    import kgteam.eval.tune_worker as tuning

    items = [DatasetItem(id=f"i{i}", question=f"q{i}", answers=[GoldAnswer(label="a")]) for i in range(20)]
    second = tuning.SecondReader("no-such-kg", tmp_path, items, Lexicon())
    try:
        got = second.read(("lexicon", {}), items, lambda part: [it.id for it in part])
    finally:
        second.close()
    assert got == [it.id for it in items] and second.failed
