"""Claim sets drawn from real KGs: every gold label is re-checked on the KG it came from."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.eval.claims import (
    INVERSE_SUFFIX,
    ClaimSettings,
    ClaimSpec,
    Step,
    check_claim,
    claim_stats,
    generate_claims,
    read_edges,
    relation_phrase,
    render_claim,
    triple_ask,
)
from kgteam.eval.datasets import DatasetError, load_dataset
from kgteam.roles.semantic.paths import NAMING_PREDICATES


def _draw(tools, n: int, seed: int = 0, kg: str = "kg", view=None):
    return asyncio.run(generate_claims(tools, ClaimSettings(n=n, seed=seed), kg=kg, view=view))


@pytest.fixture(scope="module")
def metaqa_view(metaqa_demo):
    """MetaQA's edges read once for the tests that draw several sets from it."""
    return asyncio.run(read_edges(metaqa_demo[1]))


async def _ask(tools, sparql: str) -> bool:
    return bool((await tools.run_sparql(sparql)).boolean)


def _audit(tools, items) -> list[str]:
    """Independent of the generator's own check: facts exist, swapped ends and absent relations do not."""

    async def run() -> list[str]:
        problems = []
        for it in items:
            spec = ClaimSpec.model_validate({**it.extra["claim"], "facts": it.extra["facts"]})
            verdict = it.answers[0].label
            assert verdict == spec.verdict
            if verdict == "supported":
                assert len(it.extra["facts"]) == it.hops
                problems += [f"{it.id}: missing {f}" for f in it.extra["facts"] if not await _ask(tools, triple_ask(f))]
            elif verdict == "refuted" and it.hops == 1:
                (p, d), = spec.steps
                swapped = [spec.start, p, spec.end] if d == "out" else [spec.end, p, spec.start]
                if await _ask(tools, triple_ask(swapped)):
                    problems.append(f"{it.id}: swapped fact {swapped} is in the KG")
            elif verdict == "not enough info":
                assert it.extra["facts"] == []
            problems += [f"{it.id}: {p}" for p in await check_claim(tools, spec)]
        return problems

    return asyncio.run(run())


# ------------------------------------------------------------------------------------- wording

@pytest.mark.parametrize(("label", "phrase"), [
    ("directed by", "is directed by"), ("has genre", "has genre"), ("plays in club", "plays in club"),
    ("release year", "has release year"), ("in language", "is in language"), ("part of country", "is part of country"),
    ("is aged", "is aged"), ("starred actors", "has starred actors"),
])
def test_relation_labels_become_verb_phrases(label, phrase):
    assert relation_phrase(label) == phrase


def test_claims_are_worded_from_labels_with_named_unknowns():
    labels = {"f": "Kismet", "d": "William Dieterle", "p:dir": "directed by", "p:act": "starred actors",
              "a": "Diane Keaton", "w": "Woody Allen"}
    assert render_claim("f", [Step("p:dir", "out")], "d", labels) == "Claim: Kismet is directed by William Dieterle."
    assert render_claim("d", [Step("p:dir", "in")], "f", labels) == "Claim: Kismet is directed by William Dieterle."
    two = render_claim("w", [Step("p:dir", "in"), Step("p:act", "out")], "a", labels)
    assert two == ("Claim: there is an entity X such that X is directed by Woody Allen and X has starred actors "
                   "Diane Keaton.")
    three = render_claim("f", [Step("p:dir", "out"), Step("p:dir", "in"), Step("p:act", "out")], "a", labels)
    assert three.startswith("Claim: there are entities X and Y such that Kismet is directed by X, Y is directed by X")


# ---------------------------------------------------------------------------------- real KGs

def test_metaqa_claims_are_balanced_and_every_gold_holds_on_the_kg(metaqa_demo, metaqa_view):
    _, tools = metaqa_demo
    items = _draw(tools, 60, kg="metaqa", view=metaqa_view)
    stats = claim_stats(items)
    assert stats["verdicts"] == {"supported": 20, "refuted": 20, "not enough info": 20}
    assert set(stats["hops"]) == {1, 2, 3}
    assert all(it.question.startswith("Claim: ") and it.tags["kind"] == "claim" for it in items)
    assert len({it.question for it in items}) == len(items)
    used = {p for it in items for p, _ in it.extra["claim"]["steps"]}
    assert not used & NAMING_PREDICATES
    assert _audit(tools, items) == []


def test_the_same_seed_draws_the_same_claims(metaqa_demo, metaqa_view):
    _, tools = metaqa_demo
    first, other = _draw(tools, 15, view=metaqa_view), _draw(tools, 15, seed=7, view=metaqa_view)
    again = _draw(tools, 15)  # its own reading of the KG
    assert [it.question for it in first] == [it.question for it in again]
    assert [it.question for it in first] != [it.question for it in other]


def test_a_kg_of_our_own_gets_claims_too(atelier_kg):
    _, tools = atelier_kg
    items = _draw(tools, 30, kg="atelier")
    verdicts = Counter(it.answers[0].label for it in items)
    assert len(items) == 30 and verdicts["supported"] >= 10 and verdicts["refuted"] >= 5
    assert not any("type" in it.question.lower() for it in items)  # rdf:type is not a relation between entities
    assert _audit(tools, items) == []


def test_wc2014_claims_hold_and_a_kg_without_gaps_has_no_not_enough_info(wc2014_kg):
    _, tools = wc2014_kg
    items = _draw(tools, 60, kg="wc2014")
    stats = claim_stats(items)
    # every player has every relation: no claim the KG is silent on; the slots go to the other two verdicts
    assert stats["n"] == 60 and stats["verdicts"]["not enough info"] == 0
    assert abs(stats["verdicts"]["supported"] - stats["verdicts"]["refuted"]) <= 1
    assert _audit(tools, items) == []


INVERSE_KB = """\
Ada\tmentors\tBen
Ben\tmentors_inverse\tAda
Ben\tmentors\tCal
Cal\tmentors_inverse\tBen
Cal\tmentors\tDee
Dee\tmentors_inverse\tCal
Eve\tmentors\tFay
Fay\tmentors_inverse\tEve
Ada\tlives_in\tOslo
Oslo\tlives_in_inverse\tAda
Ben\tlives_in\tRome
Rome\tlives_in_inverse\tBen
Cal\tlives_in\tOslo
Oslo\tlives_in_inverse\tCal
Eve\tlives_in\tRome
Rome\tlives_in_inverse\tEve
Gus\tlives_in\tLima
Lima\tlives_in_inverse\tGus
Hal\tmentors\tIda
Ida\tmentors_inverse\tHal
"""


@pytest.fixture(scope="module")
def doubled_kg(tmp_path_factory):
    """A KG that keeps every edge twice, as ``r`` and ``r_inverse`` (loaded without folding)."""
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("doubled_home")
    src = home / "kb.tsv"
    src.write_text(INVERSE_KB, encoding="utf-8")
    build_kg([src], "doubled", home=home, format="tsv", inverse_suffix=None, progress=False)
    tools = KGTools.from_kg(open_kg("doubled", home=home), embedder=None)
    yield home, tools
    tools.close()


def test_inverse_duplicates_are_never_walked_and_still_count_in_the_checks(doubled_kg):
    _, tools = doubled_kg
    items = _draw(tools, 12, kg="doubled")
    assert items
    assert not [p for it in items for p, _ in it.extra["claim"]["steps"] if p.endswith(INVERSE_SUFFIX)]
    assert all(it.extra["claim"]["inverse"] for it in items)  # r -> r_inverse, used by the ASK checks
    assert _audit(tools, items) == []


def test_a_claim_the_kg_contradicts_is_caught(metaqa_demo):
    _, tools = metaqa_demo
    e, r = "http://example.org/metaqa/e/", "http://example.org/metaqa/r/"
    true = ClaimSpec(verdict="refuted", start=e + "Kismet", steps=[(r + "directed_by", "out")],
                     end=e + "William%20Dieterle")
    assert "the claimed end is reachable: the claim holds" in asyncio.run(check_claim(tools, true))
    known = ClaimSpec(verdict="not enough info", start=e + "Kismet", steps=[(r + "written_by", "out")],
                      end=e + "Woody%20Allen")
    assert "the KG holds the relation for the start's side" in asyncio.run(check_claim(tools, known))


# ------------------------------------------------------------------------ dataset spec and CLI

def test_claims_dataset_spec_draws_from_a_named_kg(atelier_kg):
    home, _ = atelier_kg
    items = load_dataset("claims:atelier:9:3", home=home)
    assert len(items) == 9 and items[0].id == "claims-atelier-s3-00000"
    assert [it.question for it in items] == [it.question for it in load_dataset("claims:atelier:9:3", home=home)]
    for bad, says in (("claims:", "expected claims:<kg>"), ("claims:atelier:many", "whole numbers"),
                      ("claims:atelier:0", "n >= 1"), ("claims:nosuchkg", "cannot draw claims from KG 'nosuchkg'")):
        with pytest.raises(DatasetError, match=says):
            load_dataset(bad, home=home)


def test_kgteam_claims_writes_a_file_eval_can_read(atelier_kg, tmp_path):
    home, _ = atelier_kg
    out = tmp_path / "sets" / "claims.jsonl"
    result = CliRunner().invoke(app, ["claims", "atelier", "--n", "6", "--seed", "2", "--out", str(out),
                                      "--home", str(home)])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout.strip().splitlines()[-1])
    assert stats["n"] == 6 and sum(stats["verdicts"].values()) == 6
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["kind"] for r in rows} == {"claim"} and all(set(r) >= {"question", "answers", "facts", "hops"} for r in rows)
    items = load_dataset(str(out))
    assert [it.question for it in items] == [r["question"] for r in rows]
    assert items[0].extra["facts"] == rows[0]["facts"] and items[0].tags["kind"] == "claim"
    assert [it.question for it in items] == [it.question for it in load_dataset("claims:atelier:6:2", home=home)]


def test_kgteam_claims_refuses_an_unknown_kg_and_a_folder(atelier_kg, tmp_path: Path):
    home, _ = atelier_kg
    missing = CliRunner().invoke(app, ["claims", "nosuchkg", "--home", str(home)])
    assert missing.exit_code == 2 and "cannot open KG 'nosuchkg'" in " ".join(missing.output.split())
    folder = CliRunner().invoke(app, ["claims", "atelier", "--out", str(tmp_path), "--home", str(home)])
    assert folder.exit_code == 2 and "is a folder" in " ".join(folder.output.split())
