"""The YAML team spec (pydantic), its loader with file:line:field errors, and the plugin registry."""

from kgteam.config.loader import ConfigIssue, TeamConfigError, load_team, load_team_text
from kgteam.config.resolve import ResolvedTeam, resolve_team
from kgteam.config.schema import KGSpec, LabelsSpec, ModelOverride, ModelSpec, RoleSpec, TeamSpec

__all__ = [
    "ConfigIssue", "KGSpec", "LabelsSpec", "ModelOverride", "ModelSpec", "ResolvedTeam", "RoleSpec",
    "TeamConfigError", "TeamSpec", "load_team", "load_team_text", "resolve_team",
]
