"""Built-in role settings reject unknown fields, and a team file says where the mistake is."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kgteam.config import TeamConfigError, load_team
from kgteam.roles.contextualizer import ContextualizerSettings
from kgteam.roles.triad.advisor import AdvisorSettings
from kgteam.roles.triad.decision_maker import DecisionMakerSettings
from kgteam.roles.triad.generalist import GeneralistSettings

TEAM = """\
name: t
model:
  provider: openai
  base_url: http://127.0.0.1:9/v1
  model: tiny
kg:
  backend: oxigraph
  name: metaqa
playbook: triad
roles:
  advisor:
    role: advisor
    settings:
      max_retries: 2
      bogus: 1
"""


@pytest.mark.parametrize("model", [GeneralistSettings, DecisionMakerSettings, AdvisorSettings,
                                   ContextualizerSettings])
def test_unknown_setting_is_rejected(model):
    with pytest.raises(ValidationError):
        model.model_validate({"bogus": 1})


def test_team_file_with_a_bogus_advisor_setting_names_file_and_line(tmp_path):
    path = tmp_path / "team.yaml"
    path.write_text(TEAM, encoding="utf-8")
    with pytest.raises(TeamConfigError) as info:
        load_team(path)
    issues = info.value.issues
    bogus = [i for i in issues if "bogus" in i.field]
    assert bogus, [str(i) for i in issues]
    assert bogus[0].line == 15 and str(path) in str(bogus[0])
