"""Team building: a validated :class:`TeamSpec` in, a runnable :class:`TeamRunner` out.

Everything a spec names is resolved here and nowhere else: roles and tools through the registry
(entry points), routes from the spec or its playbook, the chat model(s), the KG store and label
index (checked against the ``TripleStore``/``LabelIndex`` protocols), budgets, and which tools
each role is granted. Resources that must be released (the local llama.cpp server, KG stores)
are registered on an ``ExitStack``; :func:`open_team` owns one for callers that just want a team
for a while.
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
from kgteam.config.schema import KGSpec, ModelSpec, RoleSpec, TeamSpec
from kgteam.llm.base import ChatMessage, ChatModel, ChatReply, ModelError
from kgteam.protocols.errors import ContractError, KgteamError
from kgteam.tools.backends.base import LabelIndex, TripleStore
from kgteam.tools.example_bank import BankError
from kgteam.tools.lexicon import LexiconError
from kgteam.tools.toolbox import Toolbox

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


class TeamBuildError(KgteamError, RuntimeError):
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
        if spec.provider == "none":
            from kgteam.llm.no_model import NoModel

            return NoModel()
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
                                 "backoff_initial_s": spec.backoff_s, "temperature": spec.temperature}
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
        key = _api_key(spec) or os.environ.get("KGTEAM_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
        if not key and base_url.rstrip("/") == DEFAULT_OPENAI_BASE_URL:  # a local server needs none; OpenAI does
            raise TeamBuildError(f"model {model!r} at {base_url} needs an API key: set KGTEAM_LLM_API_KEY or "
                                 "OPENAI_API_KEY (or model.api_key_env in the team file), or point "
                                 "KGTEAM_LLM_BASE_URL / model.base_url at a server that needs none")
        try:
            return OpenAIChatModel(base_url, model, api_key=key, **extra)
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


def open_team_kg_tools(spec: TeamSpec, stack: contextlib.ExitStack, home: Path | None = None) -> Any:
    """The team's KG tools: one KG's :class:`KGTools`, or a :class:`KGUnion` over its ``kgs``."""
    if not spec.kgs or len(spec.kgs) == 1:
        return open_kg_tools(spec.kgs[0] if spec.kgs else spec.kg, stack, home,
                             where="kgs[0]" if spec.kgs else "kg")
    from kgteam.config.schema import kg_source_name
    from kgteam.tools.kg_union import KGUnion
    from kgteam.tools.types import ToolError

    parts = {kg_source_name(kg): open_kg_tools(kg, stack, home, where=f"kgs[{i}]") for i, kg in enumerate(spec.kgs)}
    try:
        union = KGUnion(parts, trust_other_kgs=spec.trust_other_kgs)
    except ToolError as exc:
        raise TeamBuildError(f"kgs: {exc}") from exc
    stack.callback(union.close)
    return union


def open_kg_tools(kg: KGSpec, stack: contextlib.ExitStack, home: Path | None = None, *, where: str = "kg") -> Any:
    """KGTools over the spec's store, label index, vectors and embedder (closed when ``stack`` closes)."""
    from kgteam.tools.embedding import EmbeddingError, build_embedder
    from kgteam.tools.kg_tools import KGTools

    try:
        embedder = build_embedder(kg.embedder)
    except EmbeddingError as exc:
        raise TeamBuildError(f"{where}.embedder: {exc}") from exc

    if kg.backend == "oxigraph":
        from kgteam.tools.kg import open_kg

        target = kg.path or kg.name
        assert target is not None
        try:
            graph = open_kg(target, home=home)
        except FileNotFoundError as exc:
            hint = " (run 'kgteam demo' or 'kgteam load' first)" if kg.name else ""
            raise TeamBuildError(f"{where}: cannot open KG {target!r}: {exc}{hint}") from exc
        stack.callback(graph.close)
        extra: dict[str, Any] = {"lexicon": _lexicon(kg.lexicon)} if kg.lexicon else {}
        if kg.label_predicates or kg.lang:
            from kgteam.tools.naming import naming_of

            extra["naming"] = naming_of(graph.manifest, kg.label_predicates, lang=kg.lang)
        try:
            return KGTools.from_kg(graph, embedder=embedder, default_timeout_s=kg.timeout_s, max_rows=kg.max_rows,
                                   max_result_bytes=kg.max_result_bytes, **extra)
        except (LexiconError, BankError) as exc:  # a broken lexicon.json or reader.json in the KG folder
            raise TeamBuildError(f"{where}: {exc}") from exc
    store = _construct(store_call(kg))
    _close_later(stack, store)
    _check_protocol(store, TripleStore, "kg.backend", kg.backend)
    labels = _open_labels(kg)
    _close_later(stack, labels)
    _check_protocol(labels, LabelIndex, "kg.labels.backend", kg.labels.backend if kg.labels else "?")
    from kgteam.tools.naming import Naming

    return KGTools(store, labels, default_timeout_s=kg.timeout_s, max_rows=kg.max_rows,
                   max_result_bytes=kg.max_result_bytes, embedder=embedder, vectors=_endpoint_vectors(kg, where),
                   lexicon=_lexicon(kg.lexicon) if kg.lexicon else None,
                   naming=Naming.with_predicates(kg.label_predicates, kg.lang))


def _endpoint_vectors(kg: KGSpec, where: str) -> Any:
    """``kg.vectors`` of a ``backend: sparql`` KG: a KG folder or its ``vectors/`` folder; None when not given."""
    if not kg.vectors:
        return None
    from kgteam.tools.embedding import EmbeddingError
    from kgteam.tools.loading.layout import VECTORS_DIR
    from kgteam.tools.vectors.store import KGVectors

    path = Path(kg.vectors).expanduser()
    try:
        found = KGVectors.open(path.parent if path.name == VECTORS_DIR else path)
    except EmbeddingError as exc:
        raise TeamBuildError(f"{where}.vectors: {exc}") from exc
    if found is None:
        raise TeamBuildError(f"{where}.vectors: no vector index at {path} (build one with `kgteam embed NAME`)")
    return found


def _lexicon(path: str) -> Any:
    """The lexicon file a team names (``kg.lexicon``); a missing or broken one stops the build."""
    from pathlib import Path

    from kgteam.tools.lexicon import read_lexicon

    try:
        found = read_lexicon(Path(path).expanduser())
    except LexiconError as exc:
        raise TeamBuildError(f"kg.lexicon: {exc}") from exc
    if found is None:
        raise TeamBuildError(f"kg.lexicon: no file at {path}")
    return found


def _check_protocol(obj: Any, protocol: type, where: str, name: str) -> None:
    """A plugin backend must offer the protocol's methods, or the tools fail later and obscurely."""
    missing = [m for m in ("query", "search", "close") if hasattr(protocol, m) and not callable(getattr(obj, m, None))]
    if missing or not isinstance(obj, protocol):
        raise TeamBuildError(f"{where}: backend {name!r} ({type(obj).__name__}) is not a {protocol.__name__}: "
                             f"it lacks {', '.join(missing) or 'required attributes'}")


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


# ---------------------------------------------------------------- roles, tools and team


def build_roles(spec: TeamSpec) -> dict[str, Any]:
    return roles_from(resolve_team(spec).roles)


def roles_from(specs: dict[str, RoleSpec]) -> dict[str, Any]:
    """Role instances from role specs (settings validated by each role's settings model)."""
    roles: dict[str, Any] = {}
    for inst, rspec in specs.items():
        cls = registry.role_class(rspec.role)
        roles[inst] = cls(cls.settings_model.model_validate(rspec.settings), instance_name=inst)
    return roles


def open_web_search(spec: TeamSpec, stack: contextlib.ExitStack, home: Path | None = None) -> Any:
    """The team's ``WebSearch`` (from its ``web:`` section; without one, a search that says how to add it)."""
    from kgteam.tools.web import WebSearchError, build_web_search

    try:
        return build_web_search(spec.web, home=home, stack=stack)
    except WebSearchError as exc:
        raise TeamBuildError(f"web: {exc}") from exc


def build_toolbox(kg_tools: Any, web: Any = None) -> Toolbox:
    """Every installed tool (entry point group ``kgteam.tools``), bound to the team's KG tools and
    web search (``web_search`` gets an unconfigured one when ``web`` is None)."""
    if web is None:
        from kgteam.tools.web import WebSearch

        web = WebSearch(None)
    callables = {}
    for name in registry.installed("tools"):
        try:
            callables[name] = registry.load("tools", name)
        except (registry.PluginLoadError, ImportError) as exc:
            raise TeamBuildError(f"tool {name!r}: {exc}") from exc
    try:
        box = Toolbox.from_callables(callables, [r for r in (kg_tools, web) if r is not None])
    except ContractError as exc:
        raise TeamBuildError(str(exc)) from exc
    box.reader = getattr(kg_tools, "reader", None)  # the KG's trained reader, for every semantic layer
    from kgteam.tools.kg_tools import is_kg_tool

    # the KG's own read-only tools may be reused within a question (kgteam.tools.tool_cache); plugins not
    return Toolbox({n: t.cached(is_kg_tool(n, callables[n])) for n, t in box.items()}, reader=box.reader,
                   bank=getattr(kg_tools, "bank", None),  # the bank: model prompts' worked examples
                   profile=getattr(kg_tools, "profile", None))  # classes, typing, schema nodes


def grants_of(specs: dict[str, RoleSpec]) -> dict[str, list[str]]:
    """Tools written for a role in the YAML; roles without a list get what their class needs."""
    return {inst: list(r.tools) for inst, r in specs.items() if r.tools is not None}


def team_calibration(spec: TeamSpec, model: Any, role_models: dict[str, Any]) -> Any:
    """The team's confidence map (``calibration`` in the team file); a map fitted without a model
    is applied only when no role talks to one."""
    from kgteam.protocols.calibration import CalibrationError, resolve_calibration

    names = {getattr(m, "name", None) for m in (model, *role_models.values())}
    model_name = "none" if names <= {"none"} else "model"
    try:
        return resolve_calibration(spec.calibration, playbook=spec.playbook, model=model_name)
    except CalibrationError as exc:
        raise TeamBuildError(f"calibration: {exc}") from None


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
        roles = roles_from(team.roles)
        if tools is None:
            tools = open_team_kg_tools(spec, stack, home)
        toolbox = tools if isinstance(tools, Toolbox) else build_toolbox(tools, open_web_search(spec, stack, home))
        role_models: dict[str, ChatModel] = {}
        if model is None:
            model, role_models = build_models(spec, stack)
        runner = TeamRunner(roles, team.routes, model, toolbox, team.budgets, entry_role=team.entry,
                            answer_role=team.answer_role, session_store=session_store, trace=trace,
                            role_models=role_models, grants=grants_of(team.roles), concurrency=spec.concurrency,
                            kg=None if isinstance(tools, Toolbox) else tools,
                            calibration=team_calibration(spec, model, role_models))
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


def playbook_runner(name: str, model: ChatModel, tools: Any, *, settings: dict[str, dict[str, Any]] | None = None,
                    budgets: Any = None, subteams: dict[str, str] | None = None, **kwargs: Any) -> Any:
    """A ``TeamRunner`` for an installed playbook with a given model and tools (scripts, benchmarks,
    tests): its roles (``settings`` per role instance), routes, sub-teams, entry, answer role and budgets."""
    from kgteam.agents.team import TeamRunner
    from kgteam.config.playbooks import load_playbook
    from kgteam.config.resolve import playbook_parts

    book = load_playbook(name).spec
    roles, routes = playbook_parts(name, subteams)
    specs = {inst: rspec.model_copy(update={"settings": {**rspec.settings, **(settings or {}).get(inst, {})}})
             for inst, rspec in roles.items()}
    return TeamRunner(roles_from(specs), routes, model, tools, budgets or book.budgets,
                      entry_role=book.entry, answer_role=book.answer_role, grants=grants_of(specs), **kwargs)
