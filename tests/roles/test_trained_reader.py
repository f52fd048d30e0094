"""The example bank and the trained reader (issue 23): examples teach a KG's readings.

Atelier's "Who made the Heron Vase?" is misread by the hand scorer ("made" ~ "made from"); three
examples of "Who made X?" with their gold queries teach the reader "crafted by".
"""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.eval.datasets import DatasetItem, GoldAnswer
from kgteam.eval.teaching import record_bank, record_example
from kgteam.protocols.payloads import CONFIDENCE_SUPPORT, platt
from kgteam.roles.semantic import SemanticLayer
from kgteam.roles.semantic.reader import (
    NONE,
    ReaderScorer,
    TrainedReader,
    candidate_view,
    cross_fit,
    fit_calibration,
    kind_head,
    path_signature,
    symbolic_features,
    teach,
    train,
    without_answer,
)
from kgteam.tools.example_bank import BankStep, Candidate, Example

A = "http://example.org/atelier/"
MISREAD = "Who made the Heron Vase?"


def _made(thing: str, iri: str, maker: str) -> DatasetItem:
    return DatasetItem(id=f"made-{iri}", question=f"Who made the {thing}?", answers=[GoldAnswer(label=maker)],
                       gold_query=f"SELECT ?answer WHERE {{ <{A}{iri}> <{A}craftedBy> ?answer }}")


EXAMPLES = [_made("Ember Bowl", "EmberBowl", "Caspar Wren"), _made("Tide Tapestry", "TideTapestry", "Sabine Rook"),
            _made("North Wind Rug", "NorthWindRug", "Teodor Vance")]


@pytest.fixture(scope="module")
def atelier_tools(atelier_home):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(open_kg("atelier", home=atelier_home), embedder=None)
    yield tools
    tools.close()


def _top(ranking) -> str:
    return "|".join(s.predicate for s in ranking.paths[0].steps)


async def test_the_bank_records_the_readings_that_reach_the_gold_answers(atelier_tools):
    layer = SemanticLayer(atelier_tools.toolbox(), reader=None)
    example = await record_example(layer, EXAMPLES[0])
    assert example.readings, "some candidate reaches the gold answer"
    assert [s.predicate for s in example.readings[0].steps] == [A + "craftedBy"]
    assert all(c.f1 < 1.0 for c in example.candidates if not c.gold)
    assert any(not c.gold for c in example.candidates)  # the misreadings are kept, to learn from


async def test_a_few_examples_teach_the_reader_a_reading_the_hand_scorer_gets_wrong(atelier_tools):
    hand = SemanticLayer(atelier_tools.toolbox(), reader=None)
    assert _top(await hand.rank(MISREAD)) == A + "madeFrom"  # the misreading this test is about
    bank = await record_bank(hand, EXAMPLES)
    reader = train(bank.examples)
    taught = await SemanticLayer(atelier_tools.toolbox(), reader=reader).rank(MISREAD)
    assert _top(taught) == A + "craftedBy"
    assert taught.paths[0].learned_from and set(taught.paths[0].learned_from) <= {e.id for e in EXAMPLES}
    assert taught.paths[0].answers[0]["value"] == A + "OdileStrand"


async def test_without_a_bank_nothing_changes(atelier_tools):
    box = atelier_tools.toolbox()
    assert box.reader is None  # the KG folder holds no reader.json
    layer = SemanticLayer(box)
    assert layer.reader is None
    scorer = await layer.scorer(MISREAD, None, [])
    assert type(scorer) is not ReaderScorer
    # and a reader that learned nothing is the hand scorer: same paths, same scores, same confidence
    hand = await SemanticLayer(box, reader=None).rank(MISREAD)
    prior = await SemanticLayer(box, reader=TrainedReader({})).rank(MISREAD)
    assert [(p.key, p.score) for p in prior.paths] == [(p.key, p.score) for p in hand.paths]
    assert prior.confidence == hand.confidence


def _synthetic(n_topics: int, per_topic: int) -> list[Example]:
    """Examples whose right reading is ``p`` when the question says "alpha", else ``q``."""
    out = []
    for t in range(n_topics):
        for k in range(per_topic):
            word = "alpha" if (t + k) % 2 else "beta"
            cands = [Candidate(entity=f"e{t}", words=["who", word, "<e>"], hand=0.5 if pred == "q" else 0.4,
                               steps=[BankStep(predicate=pred, direction="out")], gold=(pred == "p") == (word == "alpha"))
                     for pred in ("p", "q")]
            out.append(Example(id=f"t{t}-{k}", question=f"who {word} T{t}", candidates=cands))
    return out


def test_cross_fitting_never_scores_an_example_with_a_reader_trained_on_it():
    examples = _synthetic(12, 3)
    held = cross_fit(examples, k=4)
    assert held.scored == len(examples)
    topic = {e.id: e.topic for e in examples}
    for eid, seen in held.trained_on.items():
        assert eid not in seen
        assert not any(topic[s] == topic[eid] for s in seen)  # grouped by topic: no paraphrase leaks
    assert held.hand_rate == pytest.approx(0.5, abs=0.1)  # the hand scorer always says q
    assert held.reader_rate == 1.0  # "alpha" -> p learned on other topics
    a, b = fit_calibration(held.pairs) or (1.0, 0.0)
    assert a > 0  # a higher reader probability still means likelier right


def test_tune_writes_the_bank_and_examples_lists_and_edits_it(atelier_home, tmp_path):
    shutil.copytree(atelier_home / "kgs" / "atelier", tmp_path / "kgs" / "atelier")
    file = tmp_path / "examples.jsonl"
    file.write_text("".join(json.dumps(e.model_dump(exclude_none=True)) + "\n" for e in EXAMPLES), encoding="utf-8")
    runner = CliRunner()
    done = runner.invoke(app, ["tune", "atelier", "--examples", str(file), "--home", str(tmp_path), "-q",
                               "--no-lexicon"])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "kgs" / "atelier" / "reader.json").exists()
    listed = runner.invoke(app, ["examples", "atelier", "--home", str(tmp_path), "--json"])
    assert listed.exit_code == 0, listed.output
    rows = [json.loads(line) for line in listed.output.splitlines()]
    assert [r["id"] for r in rows] == [e.id for e in EXAMPLES]
    assert rows[0]["reading"]["steps"][0]["predicate"] == A + "craftedBy"
    asked = runner.invoke(app, ["ask", MISREAD, "--model", "none", "--kg", "atelier", "--home", str(tmp_path)])
    assert asked.exit_code == 0, asked.output
    assert "Odile Strand" in asked.output and "trained reader" in asked.output
    removed = runner.invoke(app, ["examples", "atelier", "--home", str(tmp_path), "--remove", EXAMPLES[0].id])
    assert removed.exit_code == 0 and "the bank holds 2" in removed.output
    unknown = runner.invoke(app, ["examples", "atelier", "--home", str(tmp_path), "--remove", "nope"])
    assert unknown.exit_code == 2 and "no example 'nope'" in unknown.output and "Traceback" not in unknown.output
    none = runner.invoke(app, ["examples", "atelier", "--home", str(atelier_home)])
    assert none.exit_code == 1 and "no example bank" in none.output


def _unnamed(n_topics: int) -> list[Example]:
    """Examples whose right reading ``p`` no word names for the hand scorer (support 0), saying "about"."""
    out = []
    for t in range(n_topics):
        cands = [Candidate(entity=f"e{t}", words=["what", "is", "<e>", "about"], hand=0.3 if pred == "q" else 0.2,
                           support=0.0, steps=[BankStep(predicate=pred, direction="out")], gold=pred == "p",
                           answers_key=pred)
                 for pred in ("p", "q")]
        out.append(Example(id=f"u{t}", question=f"what is T{t} about", candidates=cands))
    return out


def test_a_path_the_examples_taught_counts_as_named_and_so_can_be_stated():
    from kgteam.roles.semantic.reader import top_reading

    examples = _unnamed(12)
    reader = train(examples[:10])
    held_out = examples[10]
    hand_top, hand_conf = top_reading(None, held_out)
    assert hand_top.steps[0].predicate == "q" and hand_conf == 0.0  # unnamed: the hand scorer never states it
    top, conf = top_reading(reader, held_out)
    assert top.steps[0].predicate == "p"
    assert reader.vouches(candidate_view(top)) and conf > 0.5  # named by the examples, ahead of its rival
    assert not reader.vouches(candidate_view(next(c for c in held_out.candidates if c.steps[0].predicate == "q")))


def test_readings_that_answer_alike_are_no_rivals_in_the_held_out_confidence():
    from kgteam.roles.semantic.reader import top_reading

    example = _unnamed(1)[0]
    for c in example.candidates:
        c.support = 0.5
    apart = top_reading(None, example)[1]
    for c in example.candidates:
        c.answers_key = "same"
    together = top_reading(None, example)[1]
    assert apart < 0.9 and together == 1.0


def test_the_confidence_map_stays_finite_on_pairs_the_confidence_separates():
    pairs = [(0.0, False)] * 20 + [(1.0, True)] * 40 + [(0.3, True)] * 5
    a, b = fit_calibration(pairs)
    assert 0 < a < 10 and abs(b) < 10
    from kgteam.protocols.payloads import platt

    assert platt(1.0, (a, b)) > platt(0.3, (a, b)) > platt(0.0, (a, b))
    assert 0.0 < platt(0.0, (500.0, 80.0)) <= 1.0  # a map written by hand cannot overflow


@pytest.mark.parametrize("answer", [GoldAnswer(label="Caspar Wren", iri=A + "CasparWren"), GoldAnswer(label="Caspar Wren")])
async def test_an_example_without_a_gold_query_is_read_by_its_answers_iris_or_labels(atelier_tools, answer):
    item = DatasetItem(id="made-x", question="Who made the Ember Bowl?", answers=[answer])
    example = await record_example(SemanticLayer(atelier_tools.toolbox(), reader=None), item)
    assert [s.predicate for s in example.readings[0].steps] == [A + "craftedBy"]
    assert all(c.answers_key for c in example.candidates)  # readings that answer alike are known as such
    assert len({c.answers_key for c in example.candidates}) > 1


def test_a_question_naming_two_entities_is_left_to_the_hand_scorer():
    from kgteam.roles.semantic.reader import top_reading

    examples = _unnamed(12)
    for e in examples:  # "what is <e> about <e>": two named entities, so the reading is their join
        for c in e.candidates:
            c.words = [*c.words, "<e>"]
    reader = train(examples[:10])
    assert reader.stats["examples"] == 0  # their single paths teach nothing
    taught = train(_unnamed(10))
    joined = examples[10]
    assert top_reading(taught, joined) == top_reading(None, joined)  # a taught reader leaves it alone too


TOPIC_BACK = "Who has a bench at the workshop started by Maren Holt?"  # reaches Maren Holt herself


async def test_the_bank_records_how_a_reading_does_under_each_way_of_counting(atelier_tools):
    layer = SemanticLayer(atelier_tools.toolbox(), reader=None)
    item = DatasetItem(id="bench-1", question=TOPIC_BACK, answers=[GoldAnswer(label="Jonas Pike", iri=A + "JonasPike")])
    example = await record_example(layer, item)
    back = [c for c in example.candidates if [s.predicate for s in c.steps] == [A + "startedBy", A + "benchAt"]]
    assert back and back[0].f1 == pytest.approx(2 / 3, abs=1e-3)
    assert back[0].f1_under == {"no_topic": 1.0, "free_walks_no_topic": 1.0}  # no step walks back: no free walk
    assert all(not c.f1_under for c in example.candidates if len(c.steps) == 1)  # they never reach her
    assert example.join is None  # one named entity: no join to record
    same = DatasetItem(id="bench-2", question="Who works at the same workshop as Jonas Pike?",
                       answers=[GoldAnswer(label="Maren Holt", iri=A + "MarenHolt")])
    example = await record_example(layer, same)
    round_trip = [c for c in example.candidates if [(s.predicate, s.direction) for s in c.steps]
                  == [(A + "benchAt", "out"), (A + "benchAt", "in")]]
    assert round_trip and round_trip[0].f1 == 1.0  # the walk back leaves him out ...
    assert round_trip[0].f1_under == {"free_walks": pytest.approx(2 / 3, abs=1e-3)}  # ... unless walks are free


def _topic_back(n: int, *, kept: int = 0) -> list[Example]:
    """Examples whose best reading also reaches its topic: the gold leaves the topic out, except in
    the last ``kept`` of them."""
    out = []
    for t in range(n):
        in_gold = t >= n - kept
        c = Candidate(entity=f"e{t}", words=["who", "<e>"], hand=0.5, steps=[BankStep(predicate="p", direction="out")],
                      f1=1.0 if in_gold else 0.5, f1_under={"no_topic": 0.5 if in_gold else 1.0,
                                                            "free_walks_no_topic": 0.5 if in_gold else 1.0}, gold=True)
        out.append(Example(id=f"b{t}", question=f"who T{t}", candidates=[c]))
    return out


def test_examples_that_leave_the_topic_out_teach_chains_to_leave_it_out():
    from kgteam.roles.semantic.reader import CONVENTION_EVIDENCE, teach

    reader = teach(_topic_back(10))[0]
    assert reader.convention == "no_topic"  # the simpler of two that read the examples alike
    assert reader.chain_convention.drop_topic and not reader.chain_convention.free_walks
    assert teach(_topic_back(CONVENTION_EVIDENCE - 1))[0].convention == "default"  # too few to tell
    assert teach(_topic_back(10, kept=3))[0].convention == "default"  # some examples count the topic: keep it
    assert teach(_synthetic(6, 2))[0].convention == "default"  # no reading changes: nothing learned
    assert TrainedReader.from_json(reader.to_json()).convention == "no_topic"
    assert TrainedReader.from_json({"weights": {}, "convention": "a later one"}).chain_convention.name == "default"


async def test_a_recorded_join_fits_the_kgs_map_for_joins(atelier_tools):
    from kgteam.roles.semantic.reader import teach
    from kgteam.tools.example_bank import JoinRecord

    item = DatasetItem(id="join-1", question="Which maker has a bench at Greywater Pottery and is a native of Ostrand?",
                       answers=[GoldAnswer(label="Caspar Wren", iri=A + "CasparWren")])
    example = await record_example(SemanticLayer(atelier_tools.toolbox(), reader=None), item)
    assert example.join is not None and example.join.right and 0.0 < example.join.confidence <= 1.0
    few = [example.model_copy(update={"id": f"j{i}"}) for i in range(29)]
    assert teach(few)[0].join_calibration is None  # under 30 joins: no map
    right = [Example(id=f"r{i}", question="q", join=JoinRecord(confidence=0.4, f1=1.0)) for i in range(30)]
    lots = [Example(id=f"s{i}", question="q", join=JoinRecord(confidence=0.4, f1=1.0)) for i in range(300)]
    from kgteam.protocols.payloads import platt

    thirty, three_hundred = teach(right)[0], teach(lots)[0]
    assert thirty.join_calibration and three_hundred.join_calibration  # all right: fitted all the same
    assert 0.5 < platt(0.4, thirty.join_calibration) < platt(0.4, three_hundred.join_calibration) < 1.0
    wrong = [Example(id=f"w{i}", question="q", join=JoinRecord(confidence=0.4, f1=0.5)) for i in range(40)]
    assert platt(0.4, teach(wrong)[0].join_calibration) < 0.4  # partly right sets are wrong answers
    assert TrainedReader.from_json(thirty.to_json()).join_calibration == thirty.join_calibration
    mixed = [Example(id=f"m{i}", question="q", join=JoinRecord(confidence=0.34 if i % 3 else 0.99, f1=1.0))
             for i in range(400)]
    cal = teach(mixed)[0].join_calibration
    assert cal is not None and cal[0] > 0  # all right says nothing of the slope: never flat, never backwards
    assert platt(0.001, cal) < platt(0.34, cal) < platt(0.99, cal)


def test_tune_records_the_joins_of_examples_naming_two_entities(atelier_home, tmp_path):
    from pathlib import Path

    shutil.copytree(atelier_home / "kgs" / "atelier", tmp_path / "kgs" / "atelier")
    joins = Path(__file__).resolve().parents[1] / "data" / "kgs" / "atelier" / "joins.jsonl"
    runner = CliRunner()
    done = runner.invoke(app, ["tune", "atelier", "--examples", str(joins), "--home", str(tmp_path), "-q",
                               "--no-lexicon"])
    assert done.exit_code == 0, done.output
    listed = runner.invoke(app, ["examples", "atelier", "--home", str(tmp_path), "--json"])
    rows = [json.loads(line) for line in listed.output.splitlines()]
    recorded = [r for r in rows if r["join"]]
    assert len(recorded) >= len(rows) // 2  # most of them read as a join
    assert sum(r["join"]["f1"] == 1.0 for r in recorded) >= len(recorded) // 2
    assert f"{len(recorded)} examples were read as a join of two entities" in done.output
    assert "too few to refit their confidence" in done.output  # 12 examples: no map
    table = runner.invoke(app, ["examples", "atelier", "--home", str(tmp_path)], env={"COLUMNS": "240"})
    assert "join of two entities" in table.output


def test_leaving_the_topic_out_changes_which_reading_was_right():
    from kgteam.roles.semantic.reader import under_convention

    back = Candidate(entity="e", words=["who", "<e>"], hand=0.5, steps=[BankStep(predicate="p", direction="out")],
                     f1=0.5, f1_under={"no_topic": 1.0})
    around = Candidate(entity="e", words=["who", "<e>"], hand=0.4, steps=[BankStep(predicate="q", direction="out")],
                       f1=1.0, gold=True)
    (read,) = under_convention([Example(id="x", question="who e", candidates=[back, around])], "no_topic")
    assert [c.gold for c in read.candidates] == [True, True] and read.candidates[0].f1 == 1.0


def test_each_chain_convention_counts_its_own_answers():
    from kgteam.roles.semantic.paths import CHAIN_CONVENTIONS, chain_graph
    from kgteam.tools.query_builder import compile_query

    back = [(A + "benchAt", "out"), (A + "benchAt", "in")]  # "who works where X works"
    plain = compile_query(chain_graph(A + "JonasPike", back))
    free = compile_query(chain_graph(A + "JonasPike", back, convention=CHAIN_CONVENTIONS["free_walks"]))
    both = compile_query(chain_graph(A + "JonasPike", back, convention=CHAIN_CONVENTIONS["free_walks_no_topic"]))
    assert "!=" in plain and "!=" not in free and both == plain  # free walks, then the topic left out again
    one = compile_query(chain_graph(A + "JonasPike", [(A + "apprenticeOf", "out")], convention=CHAIN_CONVENTIONS["no_topic"]))
    assert f"!= <{A}JonasPike>" in one  # a self-loop too
    assert all(CHAIN_CONVENTIONS[c.name] is c for c in CHAIN_CONVENTIONS.values())


@pytest.mark.parametrize("broken", [{"weights": []}, {"weights": {}, "join_calibration": [1.0]},
                                    {"weights": {}, "calibration": ["a", 1]}, {"weights": {}, "convention": 3},
                                    {"weights": {"none": "high"}}, {"weights": {"none": float("nan")}}])
def test_a_broken_reader_file_is_a_clear_error(atelier_home, tmp_path, broken):
    shutil.copytree(atelier_home / "kgs" / "atelier", tmp_path / "kgs" / "atelier")
    (tmp_path / "kgs" / "atelier" / "reader.json").write_text(json.dumps(broken), encoding="utf-8")
    asked = CliRunner().invoke(app, ["ask", MISREAD, "--model", "none", "--kg", "atelier", "--home", str(tmp_path)])
    assert asked.exit_code != 0 and "reader.json" in asked.output and "Traceback" not in asked.output


def test_a_reading_that_answers_nothing_under_the_convention_is_no_candidate_then():
    from kgteam.roles.semantic.reader import under_convention
    from kgteam.tools.example_bank import ANSWERS_NOTHING

    only_topic = Candidate(entity="e", words=["who", "<e>"], hand=0.5, steps=[BankStep(predicate="p", direction="out")],
                           f1=0.0, f1_under={"no_topic": ANSWERS_NOTHING})
    other = Candidate(entity="e", words=["who", "<e>"], hand=0.4, steps=[BankStep(predicate="q", direction="out")],
                      f1=1.0, gold=True)
    (read,) = under_convention([Example(id="x", question="who e", candidates=[only_topic, other])], "no_topic")
    assert [c.steps[0].predicate for c in read.candidates] == ["q"]


def test_examples_naming_two_entities_fit_no_chain_map():
    """Their single paths are never the answer (the join is): scored, they would tell the chain map
    that every chain is a guess, and single-entity questions on that KG would go unanswered."""
    from kgteam.roles.semantic.reader import teach

    examples = _unnamed(40)
    for e in examples:
        for c in e.candidates:
            c.words = [*c.words, "<e>"]
    reader, held = teach(examples)
    assert held.scored == 0 and reader.calibration is None


def _genre_bank(topics: int) -> list[Example]:
    """Two kinds of example share the word "genre": "what genre is X" (the genre step) and "what
    genre are the films that share a director with X" (director, back, genre). The hand scorer
    keeps the long path far down in the first kind, so training never pushes it down there."""
    out = []
    for t in range(topics):
        for kind in ("A", "B"):
            words = (["what", "genr", "is", "<e>"] if kind == "A"
                     else ["what", "genr", "are", "the", "film", "that", "share", "director", "with", "<e>"])
            gold = "genre" if kind == "A" else "dir>^dir>genre"
            cands = [Candidate(entity=f"e{t}", words=words,
                               steps=[BankStep(predicate=p.lstrip("^"), direction="in" if p[0] == "^" else "out")
                                      for p in sig.split(">")],
                               hand={"genre": 0.3, "dir": 0.0}.get(sig, -0.5), gold=sig == gold,
                               f1=1.0 if sig == gold else 0.0)
                     for sig in ("genre", "dir>^dir>genre", "dir", "genre>^genre")]
            out.append(Example(id=f"{kind}{t}", question=" ".join(words), candidates=cands))
    return out


def test_an_example_asked_as_if_its_entity_lacked_the_answer_loses_its_readings_and_their_walks():
    example = _genre_bank(1)[0]
    lacking = without_answer(example)
    assert lacking is not None
    assert sorted(path_signature(c.steps) for c in lacking.candidates) == ["dir", "dir>^dir>genre"]
    assert not any(c.gold for c in lacking.candidates)
    only_right = example.model_copy(update={"candidates": [c for c in example.candidates if c.gold]})
    assert without_answer(only_right) is None
    walked_on = without_answer(_genre_bank(1)[1])  # "... the films that share a director with X"
    assert walked_on is not None
    assert sorted(path_signature(c.steps) for c in walked_on.candidates) == ["genre", "genre>^genre"]  # not "dir"


def test_the_reader_stops_vouching_for_a_path_one_word_pulls_when_the_asked_relation_is_missing():
    """"What genre is X?" where X has no genre: the genre step's pull must not vouch for the genres
    of X's director's other films (a taught MetaQA reader stated them)."""
    bank = _genre_bank(100)
    lacking = without_answer(bank[0])
    assert lacking is not None
    long_path = next(candidate_view(c) for c in lacking.candidates if len(c.steps) == 3)
    golds = [candidate_view(c) for e in bank[:2] for c in e.candidates if c.gold]

    plain = train(bank, unanswered=0.0)
    assert NONE not in plain.weights
    assert plain.support(long_path) == pytest.approx(CONFIDENCE_SUPPORT)  # the defect: fully named

    reader = train(bank)
    assert reader.weights[NONE] > 0
    assert reader.support(long_path) < 0.5 * CONFIDENCE_SUPPORT
    for view in golds:  # the readings the examples do name keep their support
        assert reader.vouches(view)
        assert reader.support(view) > 0.95 * CONFIDENCE_SUPPORT


def test_a_one_step_paths_word_features_are_counted_once():
    step = [BankStep(predicate="p", direction="out")]
    naming, _ = symbolic_features(["who", "alpha", "<e>"], step, False)
    assert len(naming) == len(set(naming))
    reader = TrainedReader({"w=alpha|p": 0.6})
    assert reader.symbolic(["who", "alpha", "<e>"], step, False)[0] == pytest.approx(0.6)


def test_teach_says_how_many_answer_less_examples_would_still_be_answered():
    reader, held = teach(_genre_bank(40))
    assert len(held.unanswered) == held.scored  # each held-out example asked again without its answer
    assert reader.stats["held_out_unanswered_stated"] == pytest.approx(
        sum(platt(c, reader.calibration) >= 0.5 for c in held.unanswered) / len(held.unanswered))


def test_the_word_naming_the_answers_kind_is_crossed_with_the_last_step_only():
    steps = [BankStep(predicate="p", direction="out"), BankStep(predicate="q", direction="in")]
    naming, _ = symbolic_features(["which", "actor", "appear", "in", "<e>"], steps, False)
    assert [f for f in naming if f.startswith("head=")] == ["head=actor|last=^q"]
    for words in (["who", "direct", "<e>"], ["which", "<e>", "film"], ["where", "is", "<e>"], ["what", "is", "the", "genr"]):
        assert not any(f.startswith("head=") for f in symbolic_features(words, steps, False)[0])
    assert kind_head(["how", "many", "film", "did", "<e>", "direct"]) == "film"


async def test_at_run_time_the_examples_vouching_is_worth_their_belief_against_none(atelier_tools):
    """The layer's support for a path the examples vouch for: full without "none", back to the hand
    scorer's own naming against a "none" the path cannot beat."""
    from kgteam.roles.semantic.text import stem

    box, question = atelier_tools.toolbox(), "What is the Heron Vase about?"
    hand = await SemanticLayer(box, reader=None).rank(question)
    unnamed = next(p for p in hand.paths if p.hops == 1 and p.steps[0].predicate == A + "shapedWith")
    assert unnamed.support < 0.5 * CONFIDENCE_SUPPORT  # no word names it for the hand scorer
    taught = {f"w={stem('about')}|{A}shapedWith": 3.0}

    async def support(weights):
        ranking = await SemanticLayer(box, reader=TrainedReader(weights)).rank(question)
        return next(p.support for p in ranking.paths if p.key == unnamed.key)

    assert await support(taught) == pytest.approx(CONFIDENCE_SUPPORT)
    assert await support({**taught, NONE: 60.0}) == pytest.approx(unnamed.support, abs=1e-3)


def test_the_none_weight_survives_the_reader_file_however_small():
    reader = TrainedReader({"w=a|p": 0.5, NONE: 3e-6})
    again = TrainedReader.from_json(json.loads(json.dumps(reader.to_json())))
    assert again.weights[NONE] == pytest.approx(0.0, abs=1e-5)  # rounded, but there
    assert again.none_weight(0.0) > 0 and TrainedReader({"w=a|p": 0.5}).none_weight(0.0) == 0.0
