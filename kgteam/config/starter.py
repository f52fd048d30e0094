"""A commented starter team file (``kgteam init``): a playbook, a KG and a model, with every
budget and role setting the playbook has written out as comments to uncomment.

The text is built from the playbook, the roles' settings models and the budgets model, so the
comments name real settings with their real defaults.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kgteam.config.defaults import DEMO_KG, model_from_flag
from kgteam.config.playbooks import load_playbook
from kgteam.config.role_settings import describe_settings
from kgteam.config.schema import ModelSpec
from kgteam.protocols.budgets import Budgets


def _scalar(value: object) -> str:
    """A YAML scalar (JSON's form is valid YAML and quotes whatever needs quoting)."""
    return json.dumps(value, ensure_ascii=False)


def team_name(path: Path) -> str:
    """The file's stem as a team name (letters, digits, ``-``, ``_``)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", path.stem).strip("-") or "my-team"


def _model_block(model: ModelSpec) -> list[str]:
    head = ["model:",
            "  # provider: openai (any OpenAI-compatible API: OpenAI, vLLM, Ollama, llama.cpp server, LM Studio),",
            "  # local (the embedded SmolLM2 server), none (no model: the deterministic scorers decide),",
            "  # scripted (replays a script file; for tests)."]
    if model.provider == "openai":
        base_url = model.base_url or "${KGTEAM_LLM_BASE_URL:-https://api.openai.com/v1}"
        name = model.model or "${KGTEAM_LLM_MODEL:-gpt-4o-mini}"
        return head + [
            "  provider: openai",
            f"  base_url: {_scalar(base_url)}",
            f"  model: {_scalar(name)}",
            "  # The key is read from KGTEAM_LLM_API_KEY or OPENAI_API_KEY; to use another variable:",
            "  # api_key_env: MY_PROVIDER_KEY    (never write the key itself in a team file)",
            "  structured_mode: auto            # json_schema | json_object_schema (llama.cpp) | json_object | none",
            "  timeout_s: 60                    # seconds per model call",
            "  max_retries: 4                   # transient errors (429, 5xx, timeouts) retried with backoff",
            "  temperature: 0.0",
        ]
    if model.provider == "scripted":
        return head + ["  provider: scripted", f"  script: {_scalar(model.script)}"]
    return head + [f"  provider: {model.provider}"]


def _kg_block(kg: str) -> list[str]:
    folder = Path(kg).expanduser()
    where = (f"  path: {_scalar(str(folder.resolve()))}       # a KG folder" if folder.is_dir()
             else f"  name: {_scalar(kg)}       # an installed KG: `kgteam load FILE --name NAME`")
    return ["kg:", "  backend: oxigraph", where,
            "  # name: an installed KG, or path: a KG folder; other backends (a SPARQL endpoint ...): docs/teams.md"]


def _budget_lines(budgets: Budgets) -> list[str]:
    lines = ["# budgets:                        # per question; a field left out keeps the playbook's value"]
    for name, info in Budgets.model_fields.items():
        setting = f"{name}: {_scalar(getattr(budgets, name))}"
        lines.append(f"#   {setting:<30}   # {info.description}" if info.description else f"#   {setting}")
    return lines


def _role_lines(roles: dict[str, str]) -> list[str]:
    from kgteam.config import registry

    lines = ["# Role settings: uncomment a line to change it (all of them: `kgteam roles --markdown`).",
             "# roles:"]
    for instance, role in roles.items():
        lines.append(f"#   {instance}:")
        if instance != role:
            lines.append(f"#     role: {role}")
        lines.append("#     settings:")
        for name, entry in describe_settings(registry.role_class(role).settings_model).items():
            if "settings" in entry:  # nested settings: named, not expanded
                lines.append(f"#       {name + ': {}':<30} # nested: {entry['type']} (see docs/roles.md)")
                continue
            about = ", ".join(x for x in (entry["type"], entry["range"], entry["description"]) if x)
            lines.append(f"#       {name + ': ' + _scalar(entry['default']):<30} # {about}")
    return lines


def starter_team(path: Path, *, playbook: str = "triad", kg: str = DEMO_KG, model: str = "openai") -> str:
    """The starter file's text. ``model`` is a ``--model`` form; ``openai`` alone reads the model
    and URL from the environment. Raises ValueError for an unknown model form, TeamConfigError
    for a playbook that is not installed."""
    spec = ModelSpec() if model == "openai" else model_from_flag(model)
    book = load_playbook(playbook).spec
    name = team_name(path)
    lines = [
        f"# kgteam team file for {name}, written by `kgteam init`.",
        f"# Check it:  kgteam validate {path}",
        f"# Use it:    kgteam ask \"your question\" --team {path}",
        "# Every field: docs/teams.md. Values may read the environment: ${VAR} or ${VAR:-default}.",
        f"name: {_scalar(name)}",
        f"description: {_scalar(book.description or playbook)}",
        "",
        *_model_block(spec),
        "",
        *_kg_block(kg),
        "",
        f"playbook: {_scalar(playbook)}" + "               # roles and routes; or write `roles:` and `routes:` yourself",
        "",
        *_budget_lines(book.budgets),
        "",
        *_role_lines({inst: r.role for inst, r in book.roles.items()}),
    ]
    return "\n".join(lines) + "\n"
