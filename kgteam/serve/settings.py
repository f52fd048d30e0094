"""The server's limits and keys, read from the environment (keys never go on a command line)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field


class SettingsError(ValueError):
    """An environment variable the server reads has a value it cannot use."""


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: expected a whole number") from None
    if value < minimum:
        raise SettingsError(f"{name}={raw!r}: must be at least {minimum}")
    return value


@dataclass(frozen=True)
class ServeSettings:
    """``api_keys`` empty: no auth. A limit of 0 switches that limit off."""

    api_keys: tuple[str, ...] = field(default=(), repr=False)
    max_request_bytes: int = 1_048_576
    max_question_chars: int = 4000
    rate_per_minute: int = 600  # requests per key (or client IP without keys)
    rate_burst: int = 60
    max_running: int = 512  # questions accepted at once in this process (running or waiting in line)
    max_active: int = 32  # of those, answered at once; the rest wait in line

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ServeSettings:
        env = os.environ if env is None else env
        keys = tuple(k.strip() for k in env.get("KGTEAM_API_KEYS", "").split(",") if k.strip())
        return cls(
            api_keys=keys,
            max_request_bytes=_int(env, "KGTEAM_MAX_REQUEST_BYTES", cls.max_request_bytes, 1024),
            max_question_chars=_int(env, "KGTEAM_MAX_QUESTION_CHARS", cls.max_question_chars, 1),
            rate_per_minute=_int(env, "KGTEAM_RATE_LIMIT", cls.rate_per_minute),
            rate_burst=_int(env, "KGTEAM_RATE_BURST", cls.rate_burst, 1),
            max_running=_int(env, "KGTEAM_MAX_RUNNING", cls.max_running),
            max_active=_int(env, "KGTEAM_MAX_ACTIVE", cls.max_active),
        )
