"""ChatModel over any OpenAI-compatible chat API (OpenAI, vLLM, Ollama, llama.cpp server, LM Studio).

One retry policy (tenacity, exponential backoff with jitter, ``Retry-After`` honoured and capped)
on 429/5xx/connection errors/timeouts; the openai client's own retries are off so the two never
multiply. Permanent errors (400/401/403/404/422 ...) fail at once with a message that names the
status, the server's words, the base URL and the model, because that is what a user must fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import hashlib
import json
import os
import random
import re
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from kgteam.llm.base import ChatMessage, ChatReply, ModelError
from kgteam.llm.retries import ModelRetry, announce_retry
from kgteam.llm.slots import ModelSlots
from kgteam.llm.usage import estimate_prompt_tokens, estimate_tokens

if TYPE_CHECKING:
    from kgteam.llm.local_server import LocalModelServer

StructuredMode = Literal["json_schema", "json_object_schema", "json_object", "none"]
STRUCTURED_MODES: tuple[str, ...] = ("json_schema", "json_object_schema", "json_object", "none")

# llama.cpp compiles a schema into a grammar by unrolling repetition bounds; a large
# ``maxLength``/``maxItems`` makes it exceed its rule limit and the server drops the
# connection. Bounds above this are removed from the grammar (pydantic still enforces them).
GRAMMAR_MAX_BOUND = 256


def grammar_safe_schema(schema: Any) -> Any:
    """Copy of ``schema`` with repetition bounds too large for a llama.cpp grammar removed."""
    if isinstance(schema, dict):
        return {
            key: grammar_safe_schema(value)
            for key, value in schema.items()
            if not (key in ("maxLength", "maxItems") and isinstance(value, int) and value > GRAMMAR_MAX_BOUND)
        }
    if isinstance(schema, list):
        return [grammar_safe_schema(item) for item in schema]
    return schema

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Statuses worth retrying: rate limits, server trouble, request timeouts and conflicts.
TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})
LOCAL_DUMMY_KEY = "sk-no-key-needed"
# A chat completion is a few KB; a reply far larger is a wrong endpoint or a runaway server.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


class _Transient(Exception):
    """Internal: one failed attempt that is worth retrying (carries a ``Retry-After`` hint)."""

    def __init__(self, message: str, *, status: int | None = None, retry_after_s: float | None = None,
                 timed_out: bool = False, reason: str = "model call failed"):
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s
        self.timed_out = timed_out
        self.reason = reason  # the short words a progress line shows


def env_configured() -> bool:
    """True when the environment points kgteam at a model API (so the demo need not start SmolLM2)."""
    return bool(os.environ.get("KGTEAM_LLM_BASE_URL") or os.environ.get("KGTEAM_LLM_MODEL"))


def schema_instruction(json_schema: dict[str, Any]) -> str:
    """Prompt text that asks for JSON matching a schema (for servers without schema support)."""
    return (
        "Reply with one JSON object only, no prose and no code fences. "
        "It must conform to this JSON Schema:\n" + json.dumps(json_schema, separators=(",", ":"))
    )


def _schema_name(json_schema: dict[str, Any]) -> str:
    title = str(json_schema.get("title") or "output")
    return re.sub(r"[^A-Za-z0-9_-]", "_", title)[:64] or "output"


def _parse_retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (delta seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
    except Exception:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            msg = err.get("message") or err.get("detail") or err.get("msg")
            if msg:
                return str(msg)
        elif isinstance(err, str):
            return err
        detail = body.get("detail")
        if detail:
            return json.dumps(detail)[:500] if not isinstance(detail, str) else detail
    elif isinstance(body, str) and body:
        return body[:500]
    try:
        text = exc.response.text
    except Exception:
        text = ""
    return (text or exc.message or "").strip()[:500]


def _looks_like_html(response: Any) -> bool:
    head = bytes(response.content[:512]).lstrip().lower()
    return "html" in response.headers.get("content-type", "") or head.startswith((b"<!doctype html", b"<html"))


def describe_body(body: bytes, content_type: str) -> str:
    """What a non-JSON reply is, in words a user can act on ("returned an HTML page titled 'Login'")."""
    head = bytes(body[:4096]).lstrip()
    kind = content_type.split(";")[0].strip() or "no content-type"
    if "html" in kind or head.lower().startswith((b"<!doctype html", b"<html")):
        title = _TITLE.search(head)
        named = f" titled {' '.join(title.group(1).decode(errors='replace').split())[:80]!r}" if title else ""
        return f"returned an HTML page{named} ({kind})"
    if not head:
        return f"returned an empty body ({kind})"
    snippet = " ".join(head[:80].decode(errors="replace").split())
    return f"returned text that is not JSON ({kind}): {snippet!r}"


def check_base_url(base_url: str) -> str:
    """``base_url`` if it is an http(s) URL with a host; otherwise a permanent ModelError at once,
    since a typo like ``notaurl`` would else be retried as a connection failure."""
    try:
        parts = urlsplit(str(base_url))
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        if ok:
            _ = parts.port  # raises ValueError for a non-numeric or out-of-range port
    except ValueError:
        ok = False
    if not ok:
        raise ModelError(f"invalid base_url {base_url!r}: expected an http(s) URL with a host, "
                         "e.g. http://127.0.0.1:8080/v1 or https://api.openai.com/v1", permanent=True)
    return str(base_url)


class OpenAIChatModel:
    """Implements ``ChatModel`` for an OpenAI-compatible ``/chat/completions`` endpoint.

    ``structured_mode`` says how a ``json_schema`` argument reaches the server:
    ``json_schema`` (OpenAI structured outputs), ``json_object_schema`` (llama.cpp server:
    ``{"type": "json_object", "schema": ...}``), ``json_object`` (JSON mode + schema in the
    prompt) or ``none`` (schema in the prompt only).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        *,
        structured_mode: StructuredMode = "json_schema",
        strict_schema: bool = False,
        temperature: float | None = None,
        seed: int | None = None,
        default_max_tokens: int | None = None,
        max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
        backoff_initial_s: float = 0.5,
        backoff_max_s: float = 20.0,
        retry_after_cap_s: float = 30.0,
        cache: bool = False,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        extra_body: dict[str, Any] | None = None,
        name: str | None = None,
        slots: ModelSlots | None = None,
    ):
        if structured_mode not in STRUCTURED_MODES:
            raise ValueError(f"structured_mode must be one of {STRUCTURED_MODES}, got {structured_mode!r}")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.base_url = check_base_url(base_url).rstrip("/")
        self.model = model
        self.api_key = api_key or os.environ.get("KGTEAM_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.structured_mode: StructuredMode = structured_mode
        self.strict_schema = strict_schema
        self.temperature = temperature
        self.seed = seed
        self.default_max_tokens = default_max_tokens
        self.max_tokens_param = max_tokens_param
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self.retry_after_cap_s = retry_after_cap_s
        self.max_response_bytes = max_response_bytes
        self.extra_body = dict(extra_body or {})
        self.name = name or model
        self.slots = slots  # None: the server takes every request at once
        self._cache: dict[str, ChatReply] | None = {} if cache else None
        self._client: openai.AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    # ------------------------------------------------------------------ construction helpers
    @classmethod
    def from_env(cls, **overrides: Any) -> OpenAIChatModel:
        """``KGTEAM_LLM_BASE_URL`` (default OpenAI), ``KGTEAM_LLM_MODEL`` (required),
        ``KGTEAM_LLM_API_KEY`` or ``OPENAI_API_KEY``, optional ``KGTEAM_LLM_STRUCTURED_MODE``."""
        model = overrides.pop("model", None) or os.environ.get("KGTEAM_LLM_MODEL")
        if not model:
            raise ModelError(
                "no model configured: set KGTEAM_LLM_MODEL (and KGTEAM_LLM_BASE_URL for a non-OpenAI server)",
                permanent=True,
            )
        base_url = (
            overrides.pop("base_url", None) or os.environ.get("KGTEAM_LLM_BASE_URL") or DEFAULT_BASE_URL
        )
        mode = os.environ.get("KGTEAM_LLM_STRUCTURED_MODE")
        if mode and "structured_mode" not in overrides:
            overrides["structured_mode"] = mode
        return cls(base_url, model, **overrides)

    @classmethod
    def for_local_server(cls, server: LocalModelServer, **overrides: Any) -> OpenAIChatModel:
        """Client for a running :class:`LocalModelServer` (llama.cpp takes ``json_object`` + schema)."""
        overrides.setdefault("structured_mode", "json_object_schema")
        overrides.setdefault("api_key", LOCAL_DUMMY_KEY)
        overrides.setdefault("timeout_s", 120.0)
        overrides.setdefault("max_retries", 2)
        overrides.setdefault("seed", 0)
        # llama.cpp generates up to the context size when no cap is sent; a rambling 135M model
        # would take minutes, so cap replies unless the caller asks for more.
        overrides.setdefault("default_max_tokens", 512)
        overrides.setdefault("slots", getattr(server, "slots", None))  # one request at a time; the rest queue here
        return cls(server.base_url, server.model_name, **overrides)

    # ------------------------------------------------------------------ client lifecycle
    def _get_client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            # An httpx pool is bound to the loop that created it; tests and CLIs may use several loops.
            # Our own pool, not the openai client's default one: that one closes itself from __del__
            # by scheduling a task on whatever loop runs then, which fails (and prints a traceback)
            # when the pool was left behind by a loop that has ended.
            self._client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key or LOCAL_DUMMY_KEY,
                timeout=self.timeout_s,
                max_retries=0,
                http_client=openai.DefaultAsyncHttpxClient(timeout=self.timeout_s),
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._client_loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = None
        self._client_loop = None

    # ------------------------------------------------------------------ request building
    def build_request(
        self,
        messages: list[ChatMessage],
        *,
        json_schema: dict[str, Any] | None,
        temperature: float,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` (public so tests can inspect it)."""
        msgs = [dict(m) for m in messages]
        kwargs: dict[str, Any] = {"model": self.model}
        if json_schema is not None:
            mode = self.structured_mode
            if mode == "json_schema":
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": _schema_name(json_schema),
                        "schema": json_schema,
                        "strict": self.strict_schema,
                    },
                }
            elif mode == "json_object_schema":
                kwargs["response_format"] = {"type": "json_object", "schema": grammar_safe_schema(json_schema)}
            else:
                if mode == "json_object":
                    kwargs["response_format"] = {"type": "json_object"}
                msgs = _with_instruction(msgs, schema_instruction(json_schema))
        kwargs["messages"] = msgs
        kwargs["temperature"] = self.temperature if self.temperature is not None else temperature
        if max_tokens is None:
            max_tokens = self.default_max_tokens
        if max_tokens is not None:
            kwargs[self.max_tokens_param] = max_tokens
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if self.extra_body:
            kwargs["extra_body"] = dict(self.extra_body)
        return kwargs

    def _cache_key(self, kwargs: dict[str, Any]) -> str:
        blob = json.dumps({"base_url": self.base_url, **kwargs}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    # ------------------------------------------------------------------ the call
    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        role: str,
        json_schema: dict[str, Any] | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> ChatReply:
        kwargs = self.build_request(
            messages, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens
        )
        key = None
        if self._cache is not None:
            key = self._cache_key(kwargs)
            hit = self._cache.get(key)
            if hit is not None:
                return replace(hit, latency_s=0.0, raw={**hit.raw, "cached": True})

        async with self.slots.hold() if self.slots is not None else contextlib.nullcontext():
            return await self._chat_uncached(kwargs, key, role)

    async def _chat_uncached(self, kwargs: dict[str, Any], key: str | None, role: str) -> ChatReply:
        attempts = 0
        started = time.perf_counter()  # after the slot wait: latency is the server's work
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception(lambda e: isinstance(e, _Transient)),
            before_sleep=self._announce,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    attempts += 1
                    completion = await self._once(kwargs)
        except _Transient as exc:
            message = (f"the model {self.model!r} at {self.base_url} did not answer within {self.timeout_s:g} s "
                       f"(after {attempts} attempt(s))" if exc.timed_out
                       else f"model call failed after {attempts} attempt(s): {exc} {self._where()}")
            raise ModelError(
                message,
                permanent=False,
                status=exc.status,
            ) from exc
        latency = time.perf_counter() - started
        reply = self._to_reply(completion, kwargs["messages"], latency, attempts, role)
        if key is not None and self._cache is not None:
            self._cache[key] = reply
        return reply

    def _wait(self, state: RetryCallState) -> float:
        """Exponential backoff with full jitter, or the server's ``Retry-After`` (capped)."""
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, _Transient) and exc.retry_after_s is not None:
            return min(exc.retry_after_s, self.retry_after_cap_s)
        ceiling = min(self.backoff_max_s, self.backoff_initial_s * (2 ** (state.attempt_number - 1)))
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _announce(self, state: RetryCallState) -> None:
        """Said as it happens (the run's trace, a server's stream), not only after the last try."""
        exc = state.outcome.exception() if state.outcome is not None else None
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        announce_retry(ModelRetry(retry=state.attempt_number, of=self.max_retries,
                                  reason=getattr(exc, "reason", "model call failed"), wait_s=round(float(wait), 3)))

    def _where(self) -> str:
        return f"[model={self.model!r} base_url={self.base_url}]"

    async def _once(self, kwargs: dict[str, Any]) -> Any:
        client = self._get_client()
        try:
            # Hard wall-clock cap on top of httpx's per-operation timeouts (a slow drip never trips those).
            async with asyncio.timeout(self.timeout_s + 1.0):
                raw = await client.chat.completions.with_raw_response.create(**kwargs)
        except TimeoutError as exc:
            raise _Transient(f"no answer within {self.timeout_s:g} s", timed_out=True,
                             reason="model did not answer in time") from exc
        except openai.APITimeoutError as exc:
            raise _Transient(f"no answer within {self.timeout_s:g} s", timed_out=True,
                             reason="model did not answer in time") from exc
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            # by class name: the openai client may bundle its own copy of httpx
            if type(cause).__name__ == "ConnectError":
                raise _Transient(f"cannot connect to the model server: {cause}", reason="model not reachable") from exc
            raise _Transient(f"the connection to the model server broke before a complete reply "
                             f"({type(cause).__name__}: {str(cause) or 'closed or reset by the server'})",
                             reason="model connection broke") from exc
        except openai.APIStatusError as exc:
            status = exc.status_code
            message = describe_body(exc.response.content, exc.response.headers.get("content-type", "")) \
                if _looks_like_html(exc.response) else _server_message(exc)
            if status in TRANSIENT_STATUSES or status >= 500:
                raise _Transient(
                    f"HTTP {status}: {message}",
                    status=status,
                    retry_after_s=_parse_retry_after(exc.response.headers),
                    reason=f"model server answered HTTP {status}",
                ) from exc
            hint = {
                401: " (check KGTEAM_LLM_API_KEY / OPENAI_API_KEY)",
                403: " (the key may lack access to this model)",
                404: " (check base_url and model name)",
            }.get(status, "")
            raise ModelError(
                f"model request rejected: HTTP {status}: {message}{hint} {self._where()}",
                permanent=True,
                status=status,
            ) from exc
        return self._completion(raw)

    def _completion(self, raw: Any) -> Any:
        """The parsed completion of a 2xx reply, or a ModelError that says what the server sent instead."""
        response = raw.http_response
        body = response.content
        if len(body) > self.max_response_bytes:
            raise ModelError(
                f"the model server sent a {len(body) / 1e6:.1f} MB reply, more than the "
                f"{self.max_response_bytes / 1e6:.1f} MB a chat completion may be {self._where()}", permanent=True)
        content_type = response.headers.get("content-type", "")
        try:
            data = json.loads(body)
        except ValueError:  # a 200 that is not JSON: a proxy or login page, a wrong URL ...
            what = describe_body(body, content_type)
            hint = "; is base_url right (OpenAI-compatible servers end in /v1)?" if "HTML" in what else ""
            raise ModelError(f"the model server {what} with HTTP {response.status_code}, not a JSON chat "
                             f"completion{hint} {self._where()}", permanent=True) from None
        if not isinstance(data, dict) or "choices" not in data:
            keys = sorted(data)[:6] if isinstance(data, dict) else type(data).__name__
            raise ModelError(f"the model server returned JSON that is not a chat completion (no 'choices'; "
                             f"got {keys}) {self._where()}", permanent=True)
        try:
            return raw.parse()
        except (ValueError, TypeError) as exc:
            raise ModelError(f"the model server's chat completion could not be read ({type(exc).__name__}: "
                             f"{str(exc)[:200]}) {self._where()}", permanent=True) from exc

    def _to_reply(
        self, completion: Any, sent: list[ChatMessage], latency: float, attempts: int, role: str
    ) -> ChatReply:
        choices = getattr(completion, "choices", None)
        if not choices:
            raise ModelError(f"the model server returned a chat completion with no choices {self._where()}",
                             permanent=True)
        choice = choices[0]
        text = (choice.message.content if choice.message is not None else None) or ""
        usage = getattr(completion, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", None) if usage is not None else None
        completion_tokens = getattr(usage, "completion_tokens", None) if usage is not None else None
        estimated = prompt_tokens is None or completion_tokens is None
        if prompt_tokens is None:
            prompt_tokens = estimate_prompt_tokens(sent)
        if completion_tokens is None:
            completion_tokens = estimate_tokens(text)
        return ChatReply(
            text=text,
            prompt_tokens=int(prompt_tokens),
            completion_tokens=int(completion_tokens),
            latency_s=latency,
            model=getattr(completion, "model", None) or self.model,
            raw={
                "id": getattr(completion, "id", None),
                "finish_reason": getattr(choice, "finish_reason", None),
                "attempts": attempts,
                "role": role,
            },
            usage_estimated=estimated,
        )


def _with_instruction(messages: list[dict[str, Any]], instruction: str) -> list[dict[str, Any]]:
    """Append the schema instruction to the first system message (or add one), keeping order valid."""
    for m in messages:
        if m.get("role") == "system":
            m["content"] = f"{m.get('content') or ''}\n\n{instruction}".strip()
            return messages
    return [{"role": "system", "content": instruction}, *messages]
