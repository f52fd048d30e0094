"""The built-in team: Triad on the demo MetaQA KG, so ``kgteam ask/chat/demo`` work with no YAML.

The model comes from the environment when ``KGTEAM_LLM_BASE_URL`` / ``KGTEAM_LLM_MODEL`` point at
an OpenAI-compatible API; otherwise the embedded SmolLM2 server is started.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kgteam.config.schema import KGSpec, ModelSpec, TeamSpec, WebSpec, check_kgs
from kgteam.protocols.budgets import Budgets

DEMO_KG = "metaqa"

# Public MetaQA dev questions (CC BY 3.0) whose answers the bundled KB reproduces exactly.
DEMO_QUESTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("what movies did Temuera Morrison act in", ("Once Were Warriors", "River Queen", "Tracker")),
    ("the director of Cube Zero was who", ("Ernie Barbarash",)),
    ("what are the languages spoken in the films directed by Joel Zwick", ("Greek",)),
    ("the films acted by Sharon Tate were released in which years", ("1967", "1968")),
)


def model_from_env() -> ModelSpec:
    """``openai`` when the environment names an API, else the embedded ``local`` model."""
    if os.environ.get("KGTEAM_LLM_BASE_URL") or os.environ.get("KGTEAM_LLM_MODEL"):
        mode = os.environ.get("KGTEAM_LLM_STRUCTURED_MODE") or "auto"
        return ModelSpec(provider="openai", base_url=os.environ.get("KGTEAM_LLM_BASE_URL"),
                         model=os.environ.get("KGTEAM_LLM_MODEL"), structured_mode=mode)  # type: ignore[arg-type]
    return ModelSpec(provider="local")


# The embedded 135M model on a small shared CPU needs minutes, not seconds, per question.
LOCAL_MODEL_TIMEOUT_S = 900.0


def default_team_spec() -> TeamSpec:
    model = model_from_env()
    extra = {"budgets": Budgets(timeout_s=LOCAL_MODEL_TIMEOUT_S)} if model.provider == "local" else {}
    return TeamSpec(name="triad", description="Triad (generalist, decision maker, advisor) on the demo MetaQA KG",
                    model=model, kg=KGSpec(backend="oxigraph", name=DEMO_KG), playbook="triad", **extra)


MODEL_FLAG_FORMS = "none, local, openai:MODEL, openai:MODEL@BASE_URL or scripted:FILE"


def model_from_flag(flag: str) -> ModelSpec:
    """``--model`` / ``model=`` as a spec: ``none``, ``local``, ``openai:MODEL[@BASE_URL]``, ``scripted:FILE``."""
    provider, _, rest = flag.partition(":")
    if provider == "scripted" and rest:
        return ModelSpec(provider="scripted", script=str(Path(rest).expanduser().resolve()))
    if provider in ("none", "local") and not rest:
        return ModelSpec(provider=provider)  # type: ignore[arg-type]
    if provider == "openai" and rest:
        model, _, base_url = rest.partition("@")
        return ModelSpec(provider="openai", model=model, base_url=base_url or None)
    raise ValueError(f"{flag!r}: expected {MODEL_FLAG_FORMS}")


def kg_from_flag(kg: str) -> KGSpec:
    """``--kg`` / ``kg=`` as a spec: a folder when one exists there, else an installed KG's name."""
    path = Path(kg).expanduser()
    return KGSpec(path=str(path.resolve())) if path.exists() else KGSpec(name=kg)


def with_overrides(spec: TeamSpec, *, kg: str | Sequence[str] | None = None, model: str | ModelSpec | None = None,
                   corpus: str | None = None) -> TeamSpec:
    """``spec`` with another KG (a folder when ``kg`` is one, else a KG name), model (a spec or a
    ``--model`` form) and/or document corpus (its web search becomes that local corpus, keeping a
    corpus ``mode`` the file set); what ``--kg``/``--model``/``--corpus`` and the Python API do.
    Several KGs (a list of two or more) replace the team's KG(s) with ``kgs``; one replaces them with ``kg``."""
    updates: dict[str, object] = {}
    if corpus is not None:
        mode = spec.web.mode if spec.web is not None and spec.web.provider == "corpus" else "hybrid"
        updates["web"] = WebSpec(provider="corpus", corpus=corpus, mode=mode)
    if model is not None:
        updates["model"] = model if isinstance(model, ModelSpec) else model_from_flag(model)
    if kg is not None:
        names = [kg] if isinstance(kg, str) else list(kg)
        if not names:
            raise ValueError("kg: an empty list names no KG")
        if len(names) == 1:
            updates["kg"], updates["kgs"] = kg_from_flag(names[0]), None
        else:  # checked as a team file's `kgs:` is (each KG once); `kg` back to its unset default
            updates["kgs"] = check_kgs([kg_from_flag(n) for n in names])
            updates["kg"] = TeamSpec.model_fields["kg"].get_default(call_default_factory=True)
    return spec.model_copy(update=updates) if updates else spec
