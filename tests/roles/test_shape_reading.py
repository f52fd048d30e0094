"""Model-free shape reading (``roles/semantic/shape.py``) on hand-written questions.

The names are made up (Ava Marsh, the Vorn, Norland...), so no rule can lean on a dataset's
words: each case shows which closed-class English word decides the shape. The gold-SPARQL form
used by ``benchmarks/shape_reading.py`` is checked at the end.
"""

from __future__ import annotations

import runpy
import time
from pathlib import Path

import pytest

from kgteam.roles.semantic.shape import ShapeReading, read_shape
from kgteam.roles.semantic.text import tokenize

REPO = Path(__file__).resolve().parents[2]

# question -> the fields the reading must have (fields left out are not checked here)
CASES: list[tuple[str, dict]] = [
    # --- chains and literals -------------------------------------------------------------------
    ("What is the capital of Norland?", {"shape": "chain", "answer_kind": "entity", "form": "select"}),
    ("Who composed the Sea Suite?", {"shape": "chain", "answer_kind": "entity", "negated": False}),
    ("Where was Ava Marsh born?", {"shape": "chain", "answer_kind": "entity"}),
    ("List all bridges over the Vorn.", {"shape": "chain", "kind_words": "bridges"}),
    ("Which sea does the Rhine flow into?", {"shape": "chain", "kind_words": "sea"}),
    ("Which country borders Hungary?", {"shape": "chain", "kind_words": "country"}),
    ("Who won the Budapest Open?", {"shape": "chain", "order": None}),  # -est inside a name
    ("Who played in an under 21 team for the Rovers?", {"shape": "chain", "comparison": None}),
    ("Who coached the under twenty one side of Norland?", {"shape": "chain", "comparison": None}),
    ("Who was the First Officer of the Sea Queen?", {"shape": "chain", "order": None}),  # an ordinal in a name
    ("What is the population of Tarnow?", {"shape": "chain", "answer_kind": "entity"}),  # no KG told us
    ("How high is Mont Blanc?", {"shape": "literal", "answer_kind": "number"}),
    ("How old is Ann Bell?", {"shape": "literal", "answer_kind": "number"}),
    ("How far is Oldport from Newport?", {"shape": "literal", "answer_kind": "number"}),
    ("How much did the bridge cost?", {"shape": "literal", "answer_kind": "number"}),
    ("How many people live in Tarnow?", {"shape": "literal", "answer_kind": "number"}),
    ("How many years did Ava Marsh live in Oldport?", {"shape": "literal", "answer_kind": "number"}),
    ("When was the Vale Tower built?", {"shape": "literal", "answer_kind": "date"}),
    ("In which year did the bridge open?", {"shape": "literal", "answer_kind": "date"}),
    ("What year did the Vale Tower open?", {"shape": "literal", "answer_kind": "date"}),
    ("On which date was the treaty of Norbury signed?", {"shape": "literal", "answer_kind": "date"}),
    ("What is the birth date of Ava Marsh?", {"shape": "literal", "answer_kind": "date"}),
    ("Give me the birthdays of the Marsh sisters.", {"shape": "literal", "answer_kind": "date"}),
    # --- yes/no --------------------------------------------------------------------------------
    ("Did Ava Marsh ever win an award?", {"form": "ask", "shape": "ask", "answer_kind": "boolean"}),
    ("Is it true that the Seine flows through Paris?", {"form": "ask", "shape": "ask"}),
    ("Was Heat not directed by Michael Mann?", {"form": "ask", "shape": "ask", "negated": True}),
    ("Has Ava Marsh never won the Gold Quill?", {"form": "ask", "negated": True}),
    ("Isn't the Moor Canal longer than the Fen Canal?",
     {"form": "ask", "negated": False, "comparison": ">", "order_words": "longer"}),
    ("Is the Rhine longer than the Danube?", {"form": "ask", "shape": "ask", "comparison": ">", "number": None}),
    ("Are there lakes deeper than 300 metres in Norland?", {"form": "ask", "comparison": ">", "number": "300"}),
    ("If Ava Marsh was born in 1950, did she see the war?", {"form": "ask", "shape": "ask"}),
    ("Were the Linden Bridge and the Ash Bridge designed by the same engineer?",
     {"form": "ask", "conjunction": "and"}),
    # alternative questions start like yes/no ones but ask for one of the alternatives
    ("Does Ava Marsh or Bo Carr have more children?",
     {"form": "select", "shape": "superlative", "order": "max", "answer_kind": "entity"}),
    # --- imperatives ---------------------------------------------------------------------------
    ("Tell me who wrote Dune.", {"form": "select", "shape": "chain"}),
    ("Name the films starring Ann Bell that came out before 1995.",
     {"form": "select", "shape": "comparative", "kind_words": "films", "comparison": "<", "number": "1995"}),
    # --- counts --------------------------------------------------------------------------------
    ("How many films did Ava Marsh direct?", {"shape": "count", "answer_kind": "number", "kind_words": "films"}),
    ("How many countries does the Danube flow through?", {"shape": "count", "kind_words": "countries"}),
    ("Count the lakes of Finland.", {"shape": "count", "answer_kind": "number"}),
    ("What is the number of moons of Saturn?", {"shape": "count", "kind_words": "moons"}),
    ("What is the total number of bridges over the Vorn?", {"shape": "count", "kind_words": "bridges"}),
    ("Give me a count of the bridges over the Vorn.", {"shape": "count", "kind_words": "bridges"}),
    ("How often did Ava Marsh win the Gold Quill?", {"shape": "count", "answer_kind": "number"}),
    ("In how many years did the Rovers win the league?", {"shape": "count", "kind_words": "years"}),
    # --- superlatives --------------------------------------------------------------------------
    ("Which river is the longest?",
     {"shape": "superlative", "order": "max", "order_words": "longest", "kind_words": "river"}),
    ("What is the highest mountain in Austria?",
     {"shape": "superlative", "order": "max", "order_words": "highest", "kind_words": "mountain"}),
    ("Which stadium has the largest capacity?",
     {"shape": "superlative", "order": "max", "order_words": "capacity", "kind_words": "stadium"}),
    ("What is the most populous city of Norway?",
     {"shape": "superlative", "order": "max", "order_words": "populous", "kind_words": "city"}),
    ("Which actor appeared in the most films?",
     {"shape": "superlative", "order": "max", "order_words": "films", "kind_words": "actor"}),
    ("Who directed the fewest films?", {"shape": "superlative", "order": "min", "order_words": "films"}),
    ("Show me the youngest player of the squad.",
     {"shape": "superlative", "order": "min", "order_words": "youngest", "kind_words": "player"}),
    ("What is the smallest country by area?", {"shape": "superlative", "order": "min"}),
    ("Which town is the closest to Oldport?", {"shape": "superlative", "order": "min"}),
    ("Who is the eldest child of Ava Marsh?", {"shape": "superlative", "order": "max", "kind_words": "child"}),
    ("What is the second largest city in Poland?", {"shape": "superlative", "order": "max"}),
    ("Which painter lived longest?", {"shape": "superlative", "order": "max", "kind_words": "painter"}),
    ("What was the first novel by Ava Marsh?",
     {"shape": "superlative", "order": "min", "order_words": "first", "kind_words": "novel"}),
    ("Which of her novels was published first?",
     {"shape": "superlative", "order": "min", "kind_words": "novels"}),
    ("Give me the top 5 highest towers in Norland.",
     {"shape": "superlative", "order": "max", "order_words": "highest", "kind_words": "towers"}),
    # "which of two": the better of the named alternatives
    ("Who is older, Ann Bell or Bo Carr?",
     {"shape": "superlative", "order": "max", "order_words": "older", "comparison": None}),
    ("Which river is longer, the Rhine or the Elbe?",
     {"shape": "superlative", "order": "max", "kind_words": "river"}),
    ("Which is bigger: Lake Vorn or Lake Tarn?", {"shape": "superlative", "order": "max"}),
    # --- comparisons ---------------------------------------------------------------------------
    ("Which film released after 2010 did Ava Marsh direct?",
     {"shape": "comparative", "answer_kind": "entity", "kind_words": "film", "comparison": ">", "number": "2010"}),
    ("Give me all rivers longer than 1,000 kilometres.",
     {"shape": "comparative", "comparison": ">", "number": "1,000", "order_words": "longer"}),
    ("Which cities have more than 2 million inhabitants?",
     {"shape": "comparative", "comparison": ">", "number": "2 million", "kind_words": "cities"}),
    ("Which mountains are at least 4000 metres high?", {"shape": "comparative", "comparison": ">=", "number": "4000"}),
    ("Which clubs have won the cup at most twice?", {"shape": "comparative", "comparison": "<=", "number": "twice"}),
    ("Which squads had fewer than 20 players?", {"shape": "comparative", "comparison": "<", "number": "20"}),
    ("Who scored no more than 3 goals?", {"shape": "comparative", "comparison": "<=", "negated": False}),
    ("Which team has fewer players than Rovers?",
     {"shape": "comparative", "comparison": "<", "order_words": "players", "number": None}),
    ("Which ships were launched between 1900 and 1910?", {"shape": "comparative", "comparison": ">=", "number": "1900"}),
    ("Which towers were built prior to 1850?", {"shape": "comparative", "comparison": "<", "number": "1850"}),
    ("Which clubs did Ann Bell play for since 2015?", {"shape": "comparative", "comparison": ">=", "number": "2015"}),
    ("Show me all films by Ava Marsh that were made after the year 2001.",
     {"shape": "comparative", "comparison": ">", "number": "2001"}),
    ("Which companies have over 10,000 employees?", {"shape": "comparative", "comparison": ">", "number": "10,000"}),
    # --- negation and coordination -------------------------------------------------------------
    ("Which players have not scored a goal?", {"shape": "negation", "negated": True, "kind_words": "players"}),
    ("Which composer never married?", {"shape": "negation", "negated": True}),
    ("Which films were directed by Ava Marsh but not written by her?", {"shape": "negation", "negated": True}),
    ("Name the rivers that do not flow into the sea.", {"shape": "negation", "kind_words": "rivers"}),
    ("List the books written by Ann Bell or Bo Carr.", {"shape": "union", "conjunction": "or"}),
    ("Which languages are official in both Switzerland and Italy?",
     {"shape": "intersection", "conjunction": "and", "kind_words": "languages"}),
    ("Who played for both Ajax and Celtic?", {"shape": "intersection", "conjunction": "and"}),
    ("Which films did Ava Marsh write as well as direct?", {"shape": "intersection", "conjunction": "and"}),
    # a bare "and" between two names may be one title: the reader stays with a chain
    ("Who wrote Dune and The Hobbit?", {"shape": "chain", "conjunction": "and"}),
]


@pytest.mark.parametrize(("question", "expected"), CASES, ids=[q for q, _ in CASES])
def test_shape_of_hand_written_questions(question: str, expected: dict) -> None:
    reading = read_shape(question)
    got = {key: getattr(reading, key) for key in expected}
    assert got == expected


def test_at_least_forty_cases_cover_every_shape_and_kind() -> None:
    shapes = {e["shape"] for _, e in CASES if "shape" in e}
    kinds = {read_shape(q).answer_kind for q, _ in CASES}
    assert len(CASES) >= 40
    assert shapes == {"chain", "intersection", "union", "negation", "count", "superlative", "comparative",
                      "ask", "literal"}
    assert kinds == {"entity", "number", "date", "boolean"}


def _cue_words(question: str, reading: ShapeReading) -> list[str]:
    tokens = tokenize(question)
    return [tokens[i].lower for i in sorted(reading.cue_positions)]


@pytest.mark.parametrize(("question", "cues"), [
    ("How many films did Ava Marsh direct?", ["how", "many"]),
    ("Which river is the longest?", ["the", "longest"]),
    ("Which film released after 2010 did Ava Marsh direct?", ["after"]),
    ("Was Heat not directed by Michael Mann?", ["was", "not"]),
    ("Is it true that the Seine flows through Paris?", ["is", "it", "true", "that"]),
    ("Which languages are official in both Switzerland and Italy?", ["both", "and"]),
    ("Which cities have more than 2 million inhabitants?", ["more", "than"]),
    ("What is the capital of Norland?", []),
])
def test_cue_positions_are_the_shape_words(question: str, cues: list[str]) -> None:
    # the relation matcher skips these; the kind noun and the relation words stay out of them
    assert _cue_words(question, read_shape(question)) == cues


def test_kind_noun_is_not_a_cue() -> None:
    reading = read_shape("How many rivers flow through Norland?")
    tokens = tokenize("How many rivers flow through Norland?")
    assert reading.kind_words == "rivers"
    assert 2 not in reading.cue_positions and tokens[2].lower == "rivers"


def test_the_kgs_literal_relations_make_a_literal_question() -> None:
    literals = {"population": "number", "height": "number", "date of founding": "date"}
    assert read_shape("What is the population of Tarnow?", literals).answer_kind == "number"
    assert read_shape("What is the population of Tarnow?", literals).shape == "literal"
    assert read_shape("What is the height of the Vale Tower?", literals).answer_kind == "number"
    assert read_shape("Give me the date of founding of Oldport.", literals).answer_kind == "date"
    # a relation the KG holds as a link stays an entity question
    assert read_shape("What is the capital of Norland?", literals).shape == "chain"
    # the KG's words never override the question's own form
    assert read_shape("How many towns have a population over 5000?", literals).shape == "count"


def test_a_count_the_kg_stores_as_a_number_is_a_literal() -> None:
    question = "How many employees does Acme have?"
    assert read_shape(question).shape == "count"  # text alone: count them
    stored = read_shape(question, {"number of employees": "number"})
    assert (stored.shape, stored.answer_kind) == ("literal", "number")
    # a date-valued or differently named literal changes nothing
    assert read_shape(question, {"employees": "date", "number of staff": "number"}).shape == "count"


def test_odd_input_reads_as_a_plain_chain() -> None:
    for text in ("", "   ", "?!", "the", "Ava Marsh"):
        reading = read_shape(text)
        assert reading.form == "select" and reading.shape == "chain"
        assert reading.cue_positions == frozenset()


def test_reading_is_well_under_a_millisecond() -> None:
    questions = [q for q, _ in CASES] * 20
    start = time.perf_counter()
    for q in questions:
        read_shape(q)
    per_question = (time.perf_counter() - start) / len(questions)
    assert per_question < 0.001


# --- the benchmark's gold form of a SPARQL query -----------------------------------------------

@pytest.fixture(scope="module")
def gold_shape():
    return runpy.run_path(str(REPO / "benchmarks" / "shape_reading.py"))["gold_shape"]


@pytest.mark.parametrize(("sparql", "shape"), [
    ("ASK WHERE { <http://x/a> <http://x/p> <http://x/b> }", "ask"),
    ("SELECT (COUNT(DISTINCT ?x) AS ?c) WHERE { ?x <http://x/p> <http://x/b> }", "count"),
    ("SELECT ?x WHERE { ?x <http://x/h> ?h } ORDER BY DESC(?h) LIMIT 1", "superlative"),
    # "who made the most films": the answer is the person, ordered by a count
    ("SELECT ?x WHERE { ?f <http://x/by> ?x } GROUP BY ?x ORDER BY DESC(COUNT(?f)) LIMIT 1", "superlative"),
    ("SELECT ?r WHERE { <http://x/a> <http://x/h> ?a . <http://x/b> <http://x/h> ?b "
     "BIND(IF(?a > ?b, <http://x/a>, <http://x/b>) AS ?r) }", "superlative"),
    ("SELECT ?x WHERE { ?x <http://x/year> ?y FILTER(?y >= 2000) }", "comparative"),
    ("SELECT ?x WHERE { ?x <http://x/p> ?y } GROUP BY ?x HAVING (COUNT(?y) > 2)", "comparative"),
    # an IRI's angle brackets and "!=" compare nothing
    ("SELECT ?x WHERE { ?x <http://x/p> ?y FILTER(?x != <http://x/b>) }", "other"),
    ("SELECT ?x WHERE { ?x <http://x/p> ?y FILTER(lang(?y) = 'en') }", "other"),
    ("PREFIX x: <http://x/> SELECT ?x WHERE { ?x x:p x:b }", "other"),
])
def test_gold_shape_of_sparql(gold_shape, sparql: str, shape: str) -> None:
    assert gold_shape(sparql) == shape


def test_a_number_or_a_comparative_counts_the_number_itself():
    from kgteam.roles.semantic.shape import read_shape

    older = read_shape("Which players of Brazil are 30 or older?")
    assert (older.shape, older.comparison, older.number) == ("comparative", ">=", "30")
    earlier = read_shape("Which films came out in 1990 or earlier?")
    assert (earlier.comparison, earlier.number) == ("<=", "1990")
    assert read_shape("Who is older, Ann Lee or Bo Park?").shape == "superlative"  # two named alternatives


def test_the_noun_a_comparison_is_about_is_kept_apart_from_the_set():
    from kgteam.roles.semantic.shape import read_shape

    assert read_shape("Which Xyz players wear a number above 20?").compared_noun == "number"
    assert read_shape("Which Xyz players wear a number lower than 5?").compared_noun == "number"
    assert read_shape("Which towns in Xyz were founded before 1500?").compared_noun == "founded"  # passive
    assert read_shape("Which films did Xyz direct before 1980?").compared_noun is None  # names the set
