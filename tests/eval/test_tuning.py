"""``kgteam tune``: a word the KG's labels lack is learned from examples, written as data, and used.

The orchard KG calls who looks after a tree ``tendedBy`` (other name "gardener"); the examples
say "zorp" (a made-up word: no embedder links it). Lexical similarity only, so the word can be linked by nothing but the lexicon.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.eval.datasets import DatasetItem, GoldAnswer
from kgteam.eval.tuning import derive_lexicon
from kgteam.roles.semantic import SemanticLayer
from kgteam.tools.lexicon import LEXICON_FILE, Lexicon, LexiconError, read_lexicon, write_lexicon

TTL = Path(__file__).resolve().parents[1] / "data" / "orchard.ttl"
E = "http://example.org/orchard/"
KEEPERS = [("Old Elm", "Ada"), ("Tall Ash", "Ada"), ("Young Oak", "Bo")]


def _examples() -> list[DatasetItem]:
    names = {"Ada": "Ada Quill", "Bo": "Bo Lark"}
    return [DatasetItem(id=f"k{i}", question=f"who is the zorp of {tree}",
                        answers=[GoldAnswer(label=names[who], iri=E + who)])
            for i, (tree, who) in enumerate(KEEPERS)]


@pytest.fixture()
def orchard(tmp_path):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.loading import build_kg

    build_kg([TTL], "orchard", home=tmp_path, progress=False, embed=False)
    kg = open_kg("orchard", home=tmp_path)
    yield kg
    kg.close()


async def test_a_word_learned_from_examples_names_the_relation(orchard):
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(orchard, embedder=None)
    before = await SemanticLayer(tools.toolbox()).rank("who is the zorp of Old Elm")
    assert before.confidence < 0.5  # no label says "zorp": a guess at best
    lexicon, report = await derive_lexicon(SemanticLayer(tools.toolbox()), _examples())
    assert lexicon.relations == {E + "tendedBy": ["zorp"]}
    assert report.reached == 3 and [p.count for p in report.learned] == [3]
    write_lexicon(lexicon, orchard.path)
    tuned = KGTools.from_kg(orchard, embedder=None)  # reads <kg>/lexicon.json
    after = await SemanticLayer(tuned.toolbox()).rank("who is the zorp of Young Oak")
    assert [(s.predicate, s.words) for s in after.best.steps] == [(E + "tendedBy", "zorp")]
    assert [a["value"] for a in after.best.answers] == [E + "Bo"]


async def test_too_few_examples_learn_nothing(orchard):
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(orchard, embedder=None)
    lexicon, _ = await derive_lexicon(SemanticLayer(tools.toolbox()), _examples()[:2])  # min_count 3
    assert lexicon.relations == {}


def test_a_broken_lexicon_file_is_a_clear_error(tmp_path):
    (tmp_path / LEXICON_FILE).write_text('{"relations": {"not an iri": ["x"]}}', encoding="utf-8")
    with pytest.raises(LexiconError, match="not a predicate IRI"):
        read_lexicon(tmp_path)
    (tmp_path / LEXICON_FILE).write_text("{", encoding="utf-8")
    with pytest.raises(LexiconError, match="cannot read the lexicon"):
        read_lexicon(tmp_path)
    merged = Lexicon(relations={E + "a": ["x"]}).merged(Lexicon(relations={E + "a": ["X ", "y"]}))
    assert merged.relations == {E + "a": ["x", "y"]}


def test_the_tune_command_writes_the_lexicon_and_keeps_the_kg(tmp_path):
    from kgteam.tools.loading import build_kg

    build_kg([TTL], "orchard", home=tmp_path, progress=False, embed=False)
    examples = tmp_path / "examples.jsonl"
    examples.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in _examples()),
                        encoding="utf-8")
    runner = CliRunner()
    dry = runner.invoke(app, ["tune", "orchard", "--examples", str(examples), "--home", str(tmp_path), "--dry-run",
                              "-q"])
    assert dry.exit_code == 0, dry.output
    assert "zorp" in dry.output and "nothing written" in dry.output
    lexicon_file = tmp_path / "kgs" / "orchard" / LEXICON_FILE
    assert not lexicon_file.exists()
    done = runner.invoke(app, ["tune", "orchard", "--examples", str(examples), "--home", str(tmp_path), "-q"])
    assert done.exit_code == 0, done.output
    assert json.loads(lexicon_file.read_text())["relations"] == {E + "tendedBy": ["zorp"]}
    missing = runner.invoke(app, ["tune", "orchard", "--examples", str(tmp_path / "none.jsonl"),
                                  "--home", str(tmp_path)])
    assert missing.exit_code == 2 and "cannot read the examples" in missing.output
    assert "Traceback" not in missing.output


def test_a_broken_lexicon_stops_tune_and_team_builds_with_a_clear_message(tmp_path):
    from contextlib import ExitStack

    from kgteam.config.schema import KGSpec
    from kgteam.team_builder import TeamBuildError, open_kg_tools
    from kgteam.tools.loading import build_kg

    build_kg([TTL], "orchard", home=tmp_path, progress=False, embed=False)
    broken = tmp_path / "kgs" / "orchard" / LEXICON_FILE
    broken.write_text("{", encoding="utf-8")
    examples = tmp_path / "examples.jsonl"
    examples.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in _examples()),
                        encoding="utf-8")
    runner = CliRunner()
    refused = runner.invoke(app, ["tune", "orchard", "--examples", str(examples), "--home", str(tmp_path), "-q"])
    assert refused.exit_code == 1 and "cannot read the lexicon" in refused.output and "--replace" in refused.output
    assert broken.read_text() == "{"  # left as it was
    with pytest.raises(TeamBuildError, match="cannot read the lexicon"), ExitStack() as stack:
        open_kg_tools(KGSpec(name="orchard"), stack, home=tmp_path)
    replaced = runner.invoke(app, ["tune", "orchard", "--examples", str(examples), "--home", str(tmp_path), "-q",
                                   "--replace"])
    assert replaced.exit_code == 0, replaced.output
    assert json.loads(broken.read_text())["relations"] == {E + "tendedBy": ["zorp"]}


async def test_a_relation_said_again_in_the_same_direction_learns_its_own_word(orchard):
    """Young Oak is a seedling of Tall Ash, a seedling of Old Elm: "the zorp of the parent tree of
    Young Oak" walks seedling-of twice, the same way. The second step is not a walk back, so the
    word left over ("zorp") names it."""
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(orchard, embedder=None)
    items = [DatasetItem(id=f"g{i}", question=q, answers=[GoldAnswer(label="Old Elm", iri=E + "Elm")])
             for i, q in enumerate(["which tree is the zorp of the parent tree of Young Oak",
                                    "name the zorp of the parent tree of Young Oak",
                                    "what is the zorp of the parent tree of Young Oak"])]
    lexicon, report = await derive_lexicon(SemanticLayer(tools.toolbox()), items)
    assert report.reached == 3
    assert "zorp" in lexicon.relations.get(E + "seedOf", [])
