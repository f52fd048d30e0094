"""The team YAML, as pydantic models: what a person may write, checked strictly (unknown fields fail).

Only structure lives here. Names that depend on what is installed (roles, backends, tools,
payload kinds, playbooks) are checked by :mod:`kgteam.config.loader` against the registry, so
this module imports nothing beyond the protocols.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kgteam.protocols.budgets import Budgets
from kgteam.protocols.routes import Route

SESSION_SCHEMES = ("sqlite", "postgresql", "postgres", "postgresql+psycopg")  # see kgteam.sessions.urls
Provider = Literal["openai", "local", "scripted", "none"]
StructuredMode = Literal["auto", "json_schema", "json_object_schema", "json_object", "none"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelSpec(_Strict):
    """Which chat model a team (or one role) talks to.

    ``openai`` is any OpenAI-compatible API (OpenAI, vLLM, Ollama, llama.cpp server ...);
    ``local`` starts the embedded llama.cpp server with SmolLM2; ``scripted`` replays a script
    file (tests, demos without a model); ``none`` runs the team on its deterministic scorers alone.
    """

    provider: Provider = "openai"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = Field(None, description="name of the env variable holding the API key")
    api_key: str | None = Field(None, description="usually written as ${SOME_ENV_VAR}", repr=False)
    structured_mode: StructuredMode = "auto"
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(4, ge=0)
    backoff_s: float = Field(0.5, ge=0, le=60, description="the wait before the first retry (it doubles each "
                                                           "retry, with jitter)")
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, gt=0)
    script: str | None = Field(None, description="scripted provider: path to the script (YAML/JSON)")

    @model_validator(mode="after")
    def _provider_needs(self) -> ModelSpec:
        if self.provider == "scripted" and not self.script:
            raise ValueError("provider 'scripted' needs 'script: <path to script file>'")
        if self.api_key and self.api_key_env:
            raise ValueError("give either 'api_key' or 'api_key_env', not both")
        return self


class ModelOverride(_Strict):
    """Per-role override: only the fields given replace the team's model settings."""

    provider: Provider | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    api_key: str | None = Field(None, repr=False)
    structured_mode: StructuredMode | None = None
    timeout_s: float | None = Field(None, gt=0)
    max_retries: int | None = Field(None, ge=0)
    backoff_s: float | None = Field(None, ge=0, le=60)
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, gt=0)
    script: str | None = None

    def apply_to(self, base: ModelSpec) -> ModelSpec:
        merged = base.model_dump()
        merged.update(self.model_dump(exclude_none=True))
        if "api_key" in self.model_fields_set and self.api_key:
            merged["api_key_env"] = None
        if "api_key_env" in self.model_fields_set and self.api_key_env:
            merged["api_key"] = None
        return ModelSpec.model_validate(merged)


class LabelsSpec(_Strict):
    """Label search next to a SPARQL endpoint: a tantivy folder or an Elasticsearch index."""

    backend: str = "tantivy"
    path: str | None = None  # tantivy index folder
    url: str | None = None  # elastic
    index: str | None = None  # elastic index name
    api_key_env: str | None = None  # elastic
    lexicon: str | None = Field(None, description="a lexicon.json of words for the KG's relations (default: the "
                                                    "one in the KG folder, if any; see `kgteam tune`)")
    options: dict[str, Any] = Field(default_factory=dict)  # passed to plugin backends

    @model_validator(mode="after")
    def _backend_needs(self) -> LabelsSpec:
        if self.backend == "tantivy" and not self.path:
            raise ValueError("labels backend 'tantivy' needs 'path' (the index folder)")
        if self.backend == "elastic" and not self.url:
            raise ValueError("labels backend 'elastic' needs 'url'")
        return self


class EmbedderSpec(_Strict):
    """Which text embedder the KG tools use (relation search, ``similar_triples``, path scoring).

    ``wordllama`` is the embedded default (no server, no download); ``openai`` is any
    OpenAI-compatible ``/v1/embeddings`` server; ``none`` turns dense search off.
    """

    provider: Literal["wordllama", "openai", "none"] = "wordllama"
    base_url: str | None = Field(None, description="openai: e.g. http://127.0.0.1:8080/v1")
    model: str | None = Field(None, description="openai: the embedding model name the server expects")
    api_key_env: str | None = Field(None, description="name of the env variable holding the API key")
    batch_size: int = Field(64, gt=0)
    timeout_s: float = Field(30.0, gt=0)

    @model_validator(mode="after")
    def _provider_needs(self) -> EmbedderSpec:
        if self.provider == "openai" and not (self.base_url and self.model):
            raise ValueError("embedder provider 'openai' needs 'base_url' and 'model'")
        return self


class KGSpec(_Strict):
    """The knowledge graph: an installed/embedded Oxigraph KG, or a SPARQL endpoint + label index."""

    backend: str = "oxigraph"
    name: str | None = Field(None, description="a KG installed under <kg_home>/kgs/<name>")
    path: str | None = Field(None, description="a KG folder (store/, labels/, manifest.json)")
    endpoint: str | None = None
    labels: LabelsSpec | None = None
    timeout_s: float = Field(10.0, gt=0, description="per-query timeout for the KG tools")
    max_rows: int = Field(10_000, gt=0)
    max_result_bytes: int = Field(2 * 1024 * 1024, gt=0, description="run_sparql result cap in bytes of values")
    embedder: EmbedderSpec = Field(default_factory=EmbedderSpec, description="text embedder (default: embedded "
                                   "WordLlama)")
    lexicon: str | None = Field(None, description="a lexicon.json of words for the KG's relations (default: the "
                                                    "one in the KG folder, if any; see `kgteam tune`)")
    label_predicates: list[str] = Field(default_factory=list, description=(
        "IRIs of the KG's own naming predicates beyond rdfs:label, skos:prefLabel, schema:name, foaf:name "
        "and dcterms:title, preferred over them (an installed KG also keeps those it was loaded with)"))
    lang: str | None = Field(None, description="label language shown first (a tag such as de or pt-br); "
                             "default: untagged and English names, then any")
    vectors: str | None = Field(None, description=(
        "backend 'sparql': a vector index for the endpoint's triples, a KG folder (or its vectors/ folder) made "
        "by `kgteam kg connect` + `kgteam embed` (an installed KG finds its own)"))
    options: dict[str, Any] = Field(default_factory=dict)  # passed to plugin backends

    @field_validator("label_predicates")
    @classmethod
    def _naming_iris(cls, value: list[str]) -> list[str]:
        from kgteam.tools.naming import check_name_predicate

        return [check_name_predicate(p) for p in value]

    @field_validator("lang")
    @classmethod
    def _lang_tag(cls, value: str | None) -> str | None:
        from kgteam.tools.naming import check_lang

        return check_lang(value)

    @model_validator(mode="after")
    def _backend_needs(self) -> KGSpec:
        if self.backend == "oxigraph":
            if not (self.name or self.path):
                raise ValueError("backend 'oxigraph' needs 'name' (an installed KG) or 'path'")
            if self.name and self.path:
                raise ValueError("give either 'name' or 'path', not both")
            if self.vectors:
                raise ValueError("'vectors' is for backend 'sparql': an installed or folder KG uses its own vectors/")
        elif self.backend == "sparql":
            if not self.endpoint:
                raise ValueError("backend 'sparql' needs 'endpoint' (the SPARQL endpoint URL)")
            if self.labels is None:
                raise ValueError("backend 'sparql' needs 'labels' (tantivy path or elastic settings)")
        return self


def kg_source_name(kg: KGSpec) -> str:
    """The short name evidence uses for a KG: its installed name, its folder's name, or its endpoint."""
    if kg.name:
        return kg.name
    if kg.path:
        return kg.path.rstrip("/").rsplit("/", 1)[-1] or kg.path
    return str(kg.endpoint)


def check_kgs(kgs: list[KGSpec]) -> list[KGSpec]:
    """A ``kgs`` list: not empty, each KG once (its name tags the evidence it gives)."""
    if not kgs:
        raise ValueError("'kgs' is empty: name at least one KG (or use 'kg')")
    names = [kg_source_name(k) for k in kgs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"'kgs' names {', '.join(repr(n) for n in twice)} more than once: name each KG once")
    remote = [kg_source_name(k) for k in kgs if k.backend != "oxigraph"]
    if len(kgs) > 1 and remote:
        raise ValueError(f"'kgs': {', '.join(remote)} cannot be joined with other KGs: several KGs are read "
                         "together from installed or folder KGs (backend oxigraph), not SPARQL endpoints")
    return kgs


class WebSpec(_Strict):
    """Where ``web_search`` looks: a local corpus (``kgteam corpus add``), a SearxNG instance, or
    the Brave Search API (key in an environment variable). See docs/web_search.md."""

    provider: Literal["corpus", "searxng", "brave"] = "corpus"
    corpus: str | None = Field(None, description="corpus: a corpus made by `kgteam corpus add` (under the kgteam home)")
    mode: Literal["hybrid", "bm25", "dense"] = Field("hybrid", description="corpus: how chunks are ranked")
    url: str | None = Field(None, description="searxng: the instance, e.g. http://127.0.0.1:8888")
    api_key_env: str | None = Field(None, description="brave: env variable holding the API key (default "
                                                      "BRAVE_API_KEY)")
    language: str | None = Field(None, description="searxng/brave: results' language, e.g. en")
    timeout_s: float = Field(10.0, gt=0, description="searxng/brave: seconds per request")
    max_retries: int = Field(2, ge=0, le=10, description="searxng/brave: retries after a timeout or 5xx")

    @model_validator(mode="after")
    def _provider_needs(self) -> WebSpec:
        if self.provider == "corpus" and not self.corpus:
            raise ValueError("web provider 'corpus' needs 'corpus: <name>' (a corpus made by `kgteam corpus add`)")
        if self.provider == "searxng":
            if not self.url:
                raise ValueError("web provider 'searxng' needs 'url' (e.g. http://127.0.0.1:8888)")
            if not self.url.startswith(("http://", "https://")):
                raise ValueError(f"web.url must start with http:// or https:// (got {self.url!r})")
        wrong = [f for f, used in (("corpus", self.provider == "corpus"), ("url", self.provider == "searxng"),
                                   ("api_key_env", self.provider == "brave"))
                 if getattr(self, f) is not None and not used]
        if wrong:
            raise ValueError(f"web provider {self.provider!r} does not use {', '.join(wrong)}")
        return self


class RoleSpec(_Strict):
    """One role instance: which installed role (short name), its settings, an optional model, and
    the tools it may call (default: the tools the role's class says it needs)."""

    role: str
    settings: dict[str, Any] = Field(default_factory=dict)
    model: ModelOverride | None = None
    tools: list[str] | None = Field(None, description="tool names granted to this role")


def normalise_roles(value: Any) -> Any:
    """Accept the friendly shapes and return ``{instance: {role: ..., ...}}``.

    - mapping ``{advisor: {role: advisor, settings: {...}}}``; ``role`` defaults to the key;
      a bare string value ``{fmt: answer_formatter}`` names the role;
    - list ``[generalist, {name: fmt, role: answer_formatter}]``.
    """
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, spec in value.items():
            if spec is None:
                spec = {}
            if isinstance(spec, str):
                spec = {"role": spec}
            if isinstance(spec, dict) and "role" not in spec:
                spec = {"role": key, **spec}
            out[key] = spec
        return out
    if isinstance(value, list):
        out = {}
        for item in value:
            if isinstance(item, str):
                out[item] = {"role": item}
            elif isinstance(item, dict):
                item = dict(item)
                name = item.pop("name", None) or item.get("role")
                if "role" not in item and name is not None:
                    item["role"] = name
                out[name] = item
            else:
                out[item] = item  # let pydantic report the wrong type
        return out
    return value


class SubteamSpec(_Strict):
    """Another playbook run as one part of this one: a router in front of a KG team, say.

    Its roles join this team under ``<name>_<role>``; its entry takes the ``question`` that
    ``question_from`` emits, and its answer goes to ``answer_to`` instead of ending the run."""

    playbook: str
    question_from: str = Field(description="the role whose question the sub-team answers")
    answer_to: list[str] = Field(description="the roles that receive the sub-team's answer")

    @model_validator(mode="before")
    @classmethod
    def _one_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("answer_to"), str):
            return {**data, "answer_to": [data["answer_to"]]}
        return data


class SubteamChoice(_Strict):
    """A team file's choice of which installed playbook fills a playbook's sub-team slot."""

    playbook: str


class PlaybookSpec(_Strict):
    """A playbook file: role instances, routes, entry and answer role, default budgets."""

    name: str
    description: str = ""
    roles: dict[str, RoleSpec] = Field(default_factory=dict)
    routes: list[Route] = Field(default_factory=list)
    entry: str | None = None
    answer_role: str | None = None
    budgets: Budgets = Field(default_factory=Budgets)
    subteams: dict[str, SubteamSpec] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _friendly_shapes(cls, data: Any) -> Any:
        return _friendly(data, ("routes",))


class TeamSpec(_Strict):
    """A whole team: model, KG, roles, how messages flow (routes or a playbook), budgets."""

    name: str
    description: str = ""
    model: ModelSpec = Field(default_factory=ModelSpec)
    kg: KGSpec = Field(default_factory=lambda: KGSpec(name="metaqa"))
    kgs: list[KGSpec] | None = Field(None, description="several KGs the team reads at once (instead of 'kg'): "
                                     "each a KG spec or an installed KG's name; entities that are the same "
                                     "across them are joined (docs/teams.md)")
    trust_other_kgs: bool = Field(False, description="with several KGs: let a KG name other KGs' entities and "
                                  "join them with owl:sameAs (default: each KG speaks only for its own entities, "
                                  "so a second KG never changes what the first says; docs/teams.md)")
    web: WebSpec | None = Field(None, description="documents for the web_search tool (none: the tool says so)")
    roles: dict[str, RoleSpec] = Field(default_factory=dict)
    playbook: str | None = None
    routes: list[Route] | None = None
    extra_routes: list[Route] = Field(default_factory=list, description="appended to the playbook's routes")
    budgets: Budgets = Field(default_factory=Budgets)
    entry: str | None = None
    answer_role: str | None = None
    concurrency: int = Field(4, ge=1, le=64, description="deliveries run at once (independent branches)")
    calibration: str = Field("auto", min_length=1, description="score -> probability map for the answers' "
                             "confidence: 'auto' (the map shipped for this playbook without a model, if any), "
                             "'none' (raw scores) or a file written by `kgteam calibrate`")
    subteams: dict[str, SubteamChoice] = Field(default_factory=dict,
                                               description="which playbook fills each sub-team slot of the playbook")
    sessions: str | None = Field(None, description="where sessions are kept: a file path or sqlite:///PATH "
                                 "(SQLite), or postgresql://USER@HOST:PORT/DB (default: the CLI's "
                                 "<home>/sessions.sqlite; in memory from Python)")

    @field_validator("calibration")
    @classmethod
    def _calibration(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("'calibration' is empty: give 'auto', 'none' or a map file written by `kgteam calibrate`")
        return value

    @field_validator("sessions")
    @classmethod
    def _session_url(cls, value: str | None) -> str | None:
        if value is not None:
            head, sep, _ = value.partition("://")
            if not value.strip():
                raise ValueError("'sessions' is empty: give a file path or a postgresql:// URL")
            if sep and "/" not in head and head.lower() not in SESSION_SCHEMES:
                raise ValueError(f"unknown session store {head}://: use a file path, sqlite:///PATH or "
                                 "postgresql://USER@HOST:PORT/DATABASE")
        return value

    @field_validator("kgs", mode="before")
    @classmethod
    def _kg_names(cls, value: Any) -> Any:
        """``kgs: [metaqa, mykg]``: a bare name is an installed KG."""
        if isinstance(value, list):
            return [{"name": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("kgs")
    @classmethod
    def _distinct_kgs(cls, value: list[KGSpec] | None) -> list[KGSpec] | None:
        return None if value is None else check_kgs(value)

    @property
    def kg_specs(self) -> list[KGSpec]:
        """The KGs the team reads: ``kgs`` when given, else the one ``kg``."""
        return list(self.kgs) if self.kgs else [self.kg]

    @property
    def kg_title(self) -> str:
        """The team's KG(s) as people read them: ``metaqa`` or ``prefs + metaqa``."""
        return " + ".join(kg_source_name(k) for k in self.kg_specs)

    @property
    def kg_id(self) -> str:
        """Which KG(s) the team runs on, as sessions record it: the one KG's name, folder or endpoint."""
        if self.kgs and len(self.kgs) > 1:
            return self.kg_title
        kg = self.kg_specs[0]
        return str(kg.name or kg.path or kg.endpoint)

    @model_validator(mode="before")
    @classmethod
    def _friendly_shapes(cls, data: Any) -> Any:
        return _friendly(data, ("routes", "extra_routes"))

    @model_validator(mode="after")
    def _kg_or_kgs(self) -> TeamSpec:
        if self.kgs is not None and "kg" in self.model_fields_set:
            raise ValueError("give either 'kg' (one KG) or 'kgs' (a list of KGs), not both")
        return self

    @model_validator(mode="after")
    def _routes_or_playbook(self) -> TeamSpec:
        if self.routes is not None and self.playbook:
            raise ValueError("give either 'routes' or 'playbook', not both (use 'extra_routes' to add routes)")
        if self.routes is None and not self.playbook:
            raise ValueError("a team needs 'routes' or 'playbook' (e.g. 'playbook: triad')")
        if self.routes is not None and not self.roles:
            raise ValueError("a team with explicit 'routes' needs 'roles'")
        return self


def _friendly(data: Any, route_keys: tuple[str, ...]) -> Any:
    """Roles as a mapping or list of names, a route's ``to`` as one name: the canonical shapes."""
    if isinstance(data, dict):
        data = dict(data)
        if "roles" in data:
            data["roles"] = normalise_roles(data["roles"])
        for key in route_keys:
            if isinstance(data.get(key), list):
                data[key] = [_route_to_list(r) for r in data[key]]
    return data


def _route_to_list(route: Any) -> Any:
    if isinstance(route, dict) and isinstance(route.get("to"), str):
        return {**route, "to": [route["to"]]}
    return route
