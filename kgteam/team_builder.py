"""Build a runnable :class:`TeamRunner` from a validated :class:`TeamSpec`.

Everything a spec names is resolved here: roles through the registry (entry points), routes
from the spec or its playbook, the chat model(s), the KG store and label index, budgets.
Resources that must be released (the local llama.cpp server, KG stores) are registered on an
``ExitStack``; :func:`open_team` owns one for callers that just want a team for a while.
"""

from __future__ import annotations

import atexit
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from kgteam.config import registry
from kgteam.config.backend_calls import BackendCall, labels_call, signature_problem, store_call
from kgteam.config.resolve import resolve_team
from kgteam.config.schema import KGSpec, ModelSpec, TeamSpec
from kgteam.llm.base import ChatMessage, ChatModel, ChatReply, ModelError

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


class TeamBuildError(RuntimeError):
    """The spec is valid but something it names cannot be opened (KG missing, no API key ...)."""


class DefaultMaxTokens:
    """Caps completions at the spec's ``max_tokens`` when a role does not ask for a limit itself."""

    def __init__(self, inner: ChatModel, max_tokens: int):
        self.inner = inner
        self.max_tokens = max_tokens
        self.name = getattr(inner, "name", "model")

    async def chat(self, messages: list[ChatMessage], *, role: str, json_schema: dict[str, Any] | None = None,
                   temperature: float = 0.0, max_tokens: int | None = None, **kwargs: Any) -> ChatReply:
        return await self.inner.chat(messages, role=role, json_schema=json_schema, temperature=temperature,
                                     max_tokens=max_tokens if max_tokens is not None else self.max_tokens,
                                     **kwargs)

    def __getattr__(self, name: str) -> Any:  # e.g. ScriptedModel.calls in tests
        return getattr(self.inner, name)


# ---------------------------------------------------------------- models


def _api_key(spec: ModelSpec) -> str | None:
    if spec.api_key:
        return spec.api_key
    if spec.api_key_env:
        value = os.environ.get(spec.api_key_env)
        if not value:
            raise TeamBuildError(f"model.api_key_env names {spec.api_key_env!r}, but that environment variable "
                                 "is not set")
        return value
    return None


class _ModelPool:
    """Builds models, sharing identical configurations (one local server for the whole team)."""

    def __init__(self, stack: contextlib.ExitStack):
        self.stack = stack
        self._models: dict[str, ChatModel] = {}
        self._local_server: Any = None

    def get(self, spec: ModelSpec) -> ChatModel:
        key = spec.model_dump_json(exclude={"max_tokens"})
        if key not in self._models:
            self._models[key] = self._build(spec)
        return self._models[key]

    def _build(self, spec: ModelSpec) -> ChatModel:
        if spec.provider == "scripted":
            from kgteam.llm.scripted import ScriptedModel

            assert spec.script is not None  # schema guarantees it
            path = Path(spec.script)
            if not path.exists():
                raise TeamBuildError(f"model.script: script file {path} does not exist")
            try:
                return ScriptedModel.from_file(path)
            except (ValueError, OSError, yaml.YAMLError) as exc:  # a malformed script is a team error
                raise TeamBuildError(f"model.script: {path}: {exc}" if str(path) not in str(exc)
                                     else f"model.script: {exc}") from exc
        from kgteam.llm.openai_model import OpenAIChatModel

        extra: dict[str, Any] = {"timeout_s": spec.timeout_s, "max_retries": spec.max_retries,
                                 "temperature": spec.temperature}
        if spec.provider == "local":
            if self._local_server is None:
                from kgteam.llm.local_server import LocalModelServer, LocalServerError

                server = LocalModelServer()
                try:
                    self.stack.enter_context(server)
                except LocalServerError as exc:  # llama-cpp missing, model absent, never healthy
                    raise TeamBuildError(f"model: provider 'local': {exc}") from exc
                self._local_server = server
            if spec.structured_mode != "auto":
                extra["structured_mode"] = spec.structured_mode
            return OpenAIChatModel.for_local_server(self._local_server, **extra)
        model = spec.model or os.environ.get("KGTEAM_LLM_MODEL")
        if not model:
            raise TeamBuildError("model.model is not set (nor KGTEAM_LLM_MODEL): name the model to use, "
                                 "e.g. 'model: gpt-4o-mini'")
        base_url = spec.base_url or os.environ.get("KGTEAM_LLM_BASE_URL") or DEFAULT_OPENAI_BASE_URL
        extra["structured_mode"] = "json_schema" if spec.structured_mode == "auto" else spec.structured_mode
        try:
            return OpenAIChatModel(base_url, model, api_key=_api_key(spec), **extra)
        except (ModelError, ValueError) as exc:  # e.g. a base URL without a scheme
            raise TeamBuildError(f"model: {exc}") from exc


def build_models(spec: TeamSpec, stack: contextlib.ExitStack) -> tuple[ChatModel, dict[str, ChatModel]]:
    """The team's model and, for role instances that override model settings, their own models."""
    team = resolve_team(spec)
    pool = _ModelPool(stack)

    def make(mspec: ModelSpec) -> ChatModel:
        model = pool.get(mspec)
        return DefaultMaxTokens(model, mspec.max_tokens) if mspec.max_tokens else model

    default = make(spec.model)
    role_models = {inst: make(rspec.model.apply_to(spec.model))
                   for inst, rspec in team.roles.items() if rspec.model is not None}
    return default, role_models


# ---------------------------------------------------------------- KG


def open_kg_tools(kg: KGSpec, stack: contextlib.ExitStack, home: Path | None = None) -> Any:
    """KGTools over the spec's store and label index (closed when ``stack`` closes)."""
    from kgteam.tools.kg_tools import KGTools

    if kg.backend == "oxigraph":
        from kgteam.tools.kg import open_kg

        target = kg.path or kg.name
        assert target is not None
        try:
            graph = open_kg(target, home=home)
        except FileNotFoundError as exc:
            hint = " (run 'kgteam demo' or 'kgteam load' first)" if kg.name else ""
            raise TeamBuildError(f"kg: cannot open KG {target!r}: {exc}{hint}") from exc
        stack.callback(graph.close)
        return KGTools(graph.store, graph.labels, default_timeout_s=kg.timeout_s, max_rows=kg.max_rows)
    store = _construct(store_call(kg))
    _close_later(stack, store)
    labels = _open_labels(kg)
    _close_later(stack, labels)
    return KGTools(store, labels, default_timeout_s=kg.timeout_s, max_rows=kg.max_rows)


def _close_later(stack: contextlib.ExitStack, obj: Any) -> None:
    close = getattr(obj, "close", None)
    if callable(close):
        stack.callback(close)


def _construct(call: BackendCall | None) -> Any:
    """Calls a backend constructor; bad options or an unopenable resource become a TeamBuildError."""
    assert call is not None  # schema: non-oxigraph KGs have a store and labels
    try:
        factory = registry.load("backends", call.backend)
    except (registry.UnknownName, ImportError) as exc:
        raise TeamBuildError(f"{call.path}: {exc}") from exc
    if problem := signature_problem(factory, call):
        raise TeamBuildError(f"{call.path}: {problem}")
    from kgteam.tools.types import ToolError

    try:
        return factory(*call.args, **call.kwargs)
    except (TypeError, ValueError, OSError, ToolError) as exc:
        raise TeamBuildError(f"{call.opened_path}: backend {call.backend!r} cannot be opened: {exc}") from exc


def _open_labels(kg: KGSpec) -> Any:
    labels = kg.labels
    assert labels is not None  # schema: non-oxigraph backends need labels
    # A folder that is not an index fails in the constructor, which _construct reports too.
    if labels.backend == "tantivy" and not Path(labels.path or "").exists():
        raise TeamBuildError(f"kg.labels.path: tantivy index folder {labels.path} does not exist")
    return _construct(labels_call(kg))


# ---------------------------------------------------------------- roles and team


def build_roles(spec: TeamSpec) -> dict[str, Any]:
    roles: dict[str, Any] = {}
    for inst, rspec in resolve_team(spec).roles.items():
        cls = registry.role_class(rspec.role)
        settings_model = getattr(cls, "settings_model", None)
        settings = settings_model.model_validate(rspec.settings) if settings_model is not None else None
        roles[inst] = cls(settings, instance_name=inst)
    return roles


def build_team(spec: TeamSpec, *, stack: contextlib.ExitStack | None = None, home: Path | None = None,
               model: ChatModel | None = None, tools: Any = None, session_store: Any = None,
               trace: Any = None) -> Any:
    """A ready ``TeamRunner``. ``model``/``tools`` replace what the spec would build (tests, eval).

    Servers and stores are registered on ``stack``; without one, the runner gets its own as
    ``runner.resources`` (close it when done; it is also closed at interpreter exit).
    """
    from kgteam.agents.team import TeamRunner

    own = stack is None
    if stack is None:
        stack = contextlib.ExitStack()
        atexit.register(stack.close)
    try:
        team = resolve_team(spec)
        roles = build_roles(spec)
        if tools is None:
            tools = open_kg_tools(spec.kg, stack, home)
        role_models: dict[str, ChatModel] = {}
        if model is None:
            model, role_models = build_models(spec, stack)
        runner = TeamRunner(roles, team.routes, model, tools, team.budgets, entry_role=team.entry,
                            answer_role=team.answer_role, session_store=session_store, trace=trace,
                            role_models=role_models)
    except BaseException:
        if own:
            stack.close()
        raise
    if own:
        runner.resources = stack
    return runner


@contextlib.contextmanager
def open_team(spec: TeamSpec, **kwargs: Any) -> Iterator[Any]:
    """``with open_team(spec) as runner: await runner.ask(...)`` — releases servers and stores after."""
    with contextlib.ExitStack() as stack:
        yield build_team(spec, stack=stack, **kwargs)
