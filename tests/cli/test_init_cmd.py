"""``kgteam init``: a commented starter team file that validates, also with its comments undone."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.config.loader import load_team
from kgteam.config.resolve import resolve_team

runner = CliRunner()


def _uncommented(text: str) -> str:
    """The file with its commented-out YAML (budgets, role settings) switched on."""
    return re.sub(r"^# (?=(budgets:|roles:| ))", "", text, flags=re.M)


def test_init_writes_a_commented_file_that_validates(tmp_path):
    path = tmp_path / "teams" / "movies.yaml"  # a missing folder is made
    result = runner.invoke(app, ["init", str(path)])
    assert result.exit_code == 0, result.output
    text = path.read_text(encoding="utf-8")
    assert text.count("\n#") > 20  # commented: what each part is and what can be changed
    spec = load_team(path)
    assert (spec.name, spec.playbook, spec.kg.name, spec.model.provider) == ("movies", "triad", "metaqa", "openai")
    assert runner.invoke(app, ["validate", str(path)]).exit_code == 0


def test_every_commented_setting_is_real_and_validates_when_switched_on(tmp_path):
    path = tmp_path / "team.yaml"
    assert runner.invoke(app, ["init", str(path), "--model", "none", "--kg", "mykg"]).exit_code == 0
    on = tmp_path / "on.yaml"
    on.write_text(_uncommented(path.read_text(encoding="utf-8")), encoding="utf-8")
    spec = load_team(on)  # unknown settings would be errors (extra="forbid")
    assert spec.roles["advisor"].settings["min_confidence"] == 0.5
    assert spec.budgets.max_llm_calls == resolve_team(load_team(path)).budgets.max_llm_calls
    assert (spec.model.provider, spec.kg.name) == ("none", "mykg")


def test_init_takes_the_model_and_a_kg_folder(tmp_path):
    path = tmp_path / "t.yaml"
    result = runner.invoke(app, ["init", str(path), "--model", "openai:my-model@http://127.0.0.1:9/v1",
                                 "--kg", str(tmp_path)])
    assert result.exit_code == 0, result.output
    spec = load_team(path)
    assert (spec.model.model, spec.model.base_url) == ("my-model", "http://127.0.0.1:9/v1")
    assert spec.kg.path == str(tmp_path.resolve()) and spec.kg.name is None


def test_init_refuses_to_overwrite_without_force(tmp_path):
    path = tmp_path / "team.yaml"
    path.write_text("mine", encoding="utf-8")
    refused = runner.invoke(app, ["init", str(path)])
    assert refused.exit_code == 2 and "use --force" in refused.output
    assert path.read_text(encoding="utf-8") == "mine"  # nothing lost
    forced = runner.invoke(app, ["init", str(path), "--force"])
    assert forced.exit_code == 0 and load_team(path).playbook == "triad"


def test_bad_input_is_a_clear_error_and_writes_nothing(tmp_path):
    for args, message in ((["--model", "gpt4"], "--model 'gpt4'"), (["--playbook", "nope"], "unknown playbook 'nope'")):
        result = runner.invoke(app, ["init", str(tmp_path / "t.yaml"), *args])
        assert result.exit_code == 2 and message in result.output, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
    folder = runner.invoke(app, ["init", str(tmp_path)])
    assert folder.exit_code == 2 and "is a folder" in folder.output
    assert list(tmp_path.iterdir()) == []
