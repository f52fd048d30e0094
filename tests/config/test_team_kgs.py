"""`kgs:` in team files and several `kg` overrides: validation, names, and one-KG teams unchanged."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kgteam.config.defaults import default_team_spec, with_overrides
from kgteam.config.schema import KGSpec, TeamSpec


def team(**extra: object) -> TeamSpec:
    return TeamSpec.model_validate({"name": "t", "playbook": "triad", **extra})


def test_kgs_takes_names_and_specs() -> None:
    spec = team(kgs=["mykg", {"path": "/data/kgs/notes"}])
    assert [k.name for k in spec.kg_specs] == ["mykg", None]
    assert spec.kg_title == "mykg + notes" and spec.kg_id == "mykg + notes"


def test_kg_alone_is_unchanged() -> None:
    spec = team(kg={"name": "metaqa"})
    assert spec.kgs is None and spec.kg_specs == [KGSpec(name="metaqa")] and spec.kg_id == "metaqa"


@pytest.mark.parametrize(("extra", "message"), [
    ({"kg": {"name": "a"}, "kgs": ["b"]}, "either 'kg'"),
    ({"kgs": []}, "'kgs' is empty"),
    ({"kgs": ["a", "a"]}, "'a' more than once"),
    ({"kgs": ["a", {"backend": "sparql", "endpoint": "http://127.0.0.1:1/sparql",
                    "labels": {"path": "/tmp/x"}}]}, "cannot be joined"),
])
def test_kgs_validation_says_what_is_wrong(extra: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        team(**extra)


def test_overrides_take_one_kg_or_several() -> None:
    several = with_overrides(default_team_spec(), kg=["mykg", "metaqa"])
    assert [k.name for k in several.kg_specs] == ["mykg", "metaqa"]
    one = with_overrides(several, kg=["other"])
    assert one.kgs is None and one.kg.name == "other"
    with pytest.raises(ValueError, match="more than once"):
        with_overrides(default_team_spec(), kg=["a", "a"])


def test_other_kgs_are_not_trusted_unless_the_team_says_so() -> None:
    """Issue 40: a KG names and links (owl:sameAs) other KGs' entities only when the team opts in."""
    assert team(kgs=["a", "b"]).trust_other_kgs is False
    assert team(kgs=["a", "b"], trust_other_kgs=True).trust_other_kgs is True
    with pytest.raises(ValidationError, match="trust_other_kgs"):
        team(kgs=["a", "b"], trust_other_kgs="maybe")
