"""A deterministic ChatModel for tests and evaluation: replies keyed by role and prompt.

Rules are tried in order; the first whose role and pattern match the call answers. A pattern is a
substring or a regex matched against the last user message (or the whole conversation); a reply
is a string, a JSON-able value, a sequence consumed one per call (for repair tests) or a callable
that receives the messages. Anything unscripted raises :class:`UnexpectedPrompt` — a test that
reaches a prompt nobody planned for should fail loudly, not get a plausible default.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kgteam.llm.base import ChatMessage, ChatReply
from kgteam.llm.usage import estimate_prompt_tokens, estimate_tokens

ReplyFn = Callable[[list[ChatMessage]], Any]
MatchOn = Literal["last_user", "all"]
ANY_ROLE = "*"


class UnexpectedPrompt(Exception):  # noqa: N818 - the name says what happened
    """No rule matched (or a reply sequence ran out). Deliberately not a ModelError: no fallback."""

    def __init__(self, role: str, prompt: str, reason: str = "no scripted rule matches"):
        excerpt = prompt if len(prompt) <= 300 else prompt[:300] + "..."
        super().__init__(f"{reason} for role {role!r}; prompt: {excerpt!r}")
        self.role = role
        self.prompt = prompt


@dataclass
class ScriptedCall:
    role: str
    messages: list[ChatMessage]
    reply: str
    json_schema: dict[str, Any] | None = None
    rule_index: int | None = None


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass
class Rule:
    """``role`` (``"*"`` = any), ``pattern`` (substring, compiled regex, or None = any prompt)."""

    role: str
    pattern: str | re.Pattern[str] | None
    reply: Any
    on: MatchOn = "last_user"
    _queue: list[Any] | None = field(default=None, repr=False)
    _is_sequence: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.reply, Sequence) and not isinstance(self.reply, str | bytes):
            self._is_sequence = True
            self._queue = list(self.reply)

    def matches(self, role: str, messages: list[ChatMessage]) -> bool:
        if self.role != ANY_ROLE and self.role != role:
            return False
        if self.pattern is None:
            return True
        text = _match_text(messages, self.on)
        if isinstance(self.pattern, re.Pattern):
            return self.pattern.search(text) is not None
        return self.pattern in text

    @property
    def exhausted(self) -> bool:
        return self._is_sequence and not self._queue

    def next_reply(self, messages: list[ChatMessage]) -> str:
        if self._is_sequence:
            assert self._queue is not None
            value = self._queue.pop(0)
        else:
            value = self.reply
        if callable(value):
            value = value(messages)
        return _as_text(value)


def _last_user(messages: list[ChatMessage]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            return m.get("content") or ""
    return ""


def _match_text(messages: list[ChatMessage], on: MatchOn) -> str:
    if on == "all":
        return "\n".join(m.get("content") or "" for m in messages)
    return _last_user(messages)


class ScriptedModel:
    """Implements ``ChatModel``; usage is characters/4 and latency zero so budgets can be exercised."""

    def __init__(self, rules: Iterable[Rule | tuple[Any, ...]] = (), *, name: str = "scripted"):
        self.name = name
        self.rules: list[Rule] = []
        self.calls: list[ScriptedCall] = []
        self.unexpected: list[UnexpectedPrompt] = []
        for r in rules:
            if isinstance(r, Rule):
                self.rules.append(r)
            else:
                self.add(*r)

    def add(
        self,
        role: str,
        pattern: str | re.Pattern[str] | None,
        reply: Any,
        *,
        regex: bool = False,
        on: MatchOn = "last_user",
    ) -> ScriptedModel:
        """Append a rule; ``regex=True`` compiles a string pattern. Returns self for chaining."""
        if regex and isinstance(pattern, str):
            pattern = re.compile(pattern, re.DOTALL)
        self.rules.append(Rule(role=role, pattern=pattern, reply=reply, on=on))
        return self

    # ------------------------------------------------------------------ ChatModel
    async def chat(
        self,
        messages: list[ChatMessage],
        *,
        role: str,
        json_schema: dict[str, Any] | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> ChatReply:
        snapshot = [dict(m) for m in messages]
        exhausted_match = False
        for index, rule in enumerate(self.rules):
            if not rule.matches(role, snapshot):
                continue
            if rule.exhausted:
                exhausted_match = True
                continue  # a later rule may still answer
            text = rule.next_reply(snapshot)
            self.calls.append(ScriptedCall(role, snapshot, text, json_schema, index))
            return ChatReply(
                text=text,
                prompt_tokens=estimate_prompt_tokens(snapshot),
                completion_tokens=estimate_tokens(text),
                latency_s=0.0,
                model=self.name,
                raw={"rule": index},
                usage_estimated=True,
            )
        reason = "scripted reply sequence exhausted" if exhausted_match else "no scripted rule matches"
        err = UnexpectedPrompt(role, _last_user(snapshot) or _match_text(snapshot, "all"), reason)
        self.unexpected.append(err)
        raise err

    # ------------------------------------------------------------------ assertions helpers
    def calls_for(self, role: str) -> list[ScriptedCall]:
        return [c for c in self.calls if c.role == role]

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_dict(cls, data: dict[str, Any] | list[Any], *, source: str = "<script>") -> ScriptedModel:
        """``{"name": ..., "rules": [{role, match|regex, reply|replies, on}]}`` or a bare rule list."""
        if isinstance(data, list):
            data = {"rules": data}
        if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
            raise ValueError(f"{source}: expected a mapping with a 'rules' list")
        model = cls(name=str(data.get("name") or "scripted"))
        for i, item in enumerate(data["rules"]):
            where = f"{source}: rules[{i}]"
            if not isinstance(item, dict):
                raise ValueError(f"{where}: expected a mapping")
            unknown = set(item) - {"role", "match", "regex", "reply", "replies", "on"}
            if unknown:
                raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}")
            if "match" in item and "regex" in item:
                raise ValueError(f"{where}: give 'match' (substring) or 'regex', not both")
            if ("reply" in item) == ("replies" in item):
                raise ValueError(f"{where}: give exactly one of 'reply' or 'replies'")
            on = item.get("on", "last_user")
            if on not in ("last_user", "all"):
                raise ValueError(f"{where}: 'on' must be 'last_user' or 'all'")
            reply = item["reply"] if "reply" in item else item["replies"]
            if "replies" in item and not isinstance(reply, list):
                raise ValueError(f"{where}: 'replies' must be a list")
            if "reply" in item and isinstance(reply, list):
                reply = _as_text(reply)  # a JSON array reply, not a sequence
            for key in ("match", "regex"):
                if key in item and not isinstance(item[key], str):
                    raise ValueError(f"{where}: '{key}' must be a string, not {type(item[key]).__name__}")
            if "regex" in item:
                try:
                    pattern: str | re.Pattern[str] | None = re.compile(str(item["regex"]), re.DOTALL)
                except re.error as exc:
                    raise ValueError(f"{where}: bad regex: {exc}") from exc
            else:
                pattern = item.get("match")
            model.rules.append(
                Rule(role=str(item.get("role", ANY_ROLE)), pattern=pattern, reply=reply, on=on)
            )
        return model

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """Load a YAML or JSON script (``kgteam ask --model scripted:FILE``)."""
        p = Path(path)
        text = p.read_text(encoding="utf-8")
        if p.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml

            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:  # a ValueError, so callers report it like any bad script
                raise ValueError(f"{p}: invalid YAML: {exc}") from exc
        return cls.from_dict(data, source=str(p))
