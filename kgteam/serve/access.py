"""Who is calling (API key from ``KGTEAM_API_KEYS``, or none) and whether they may call now.

A caller's identity is a hash of its key, which is what sessions record as their owner: keys are
never stored. Rate limits are a token bucket per key, or per client IP when there are no keys;
an empty bucket answers 429 with ``Retry-After``.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from dataclasses import dataclass

from fastapi import Request

from kgteam.serve.errors import ApiError
from kgteam.serve.settings import ServeSettings

MAX_BUCKETS = 10_000


@dataclass(frozen=True)
class Caller:
    owner: str | None  # None: auth is off, every session is visible
    limit_key: str


def owner_of(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:24]


class RateLimiter:
    def __init__(self, per_minute: int, burst: int, clock=time.monotonic):  # type: ignore[no-untyped-def]
        self.rate = per_minute / 60.0
        self.burst = float(max(1, burst))
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)

    def take(self, key: str) -> float:
        """0 when the request may go ahead, else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        tokens, at = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            if len(self._buckets) > MAX_BUCKETS:
                self._forget_full(now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) / self.rate

    def _forget_full(self, now: float) -> None:
        for key, (tokens, at) in list(self._buckets.items()):
            if tokens + (now - at) * self.rate >= self.burst:
                del self._buckets[key]


class Access:
    def __init__(self, settings: ServeSettings):
        self._owners = {owner_of(k): k for k in settings.api_keys}
        self.limiter = RateLimiter(settings.rate_per_minute, settings.rate_burst)

    @property
    def auth(self) -> bool:
        return bool(self._owners)

    def caller(self, request: Request) -> Caller:
        """The caller of ``request``; raises 401 / 429 as :class:`ApiError`."""
        owner = None
        if self.auth:
            header = request.headers.get("authorization", "")
            scheme, _, key = header.partition(" ")
            key = key.strip()
            if scheme.lower() != "bearer" or not key:
                raise ApiError(401, "unauthorized", "this server needs an API key: send 'Authorization: Bearer KEY'",
                               {"WWW-Authenticate": "Bearer"})
            owner = owner_of(key)
            known = self._owners.get(owner)
            if known is None or not hmac.compare_digest(known.encode(), key.encode()):
                raise ApiError(401, "unauthorized", "the API key is not valid", {"WWW-Authenticate": "Bearer"})
        limit_key = f"key:{owner}" if owner else f"ip:{request.client.host if request.client else '?'}"
        wait = self.limiter.take(limit_key)
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            raise ApiError(429, "rate_limited", f"too many requests: try again in {seconds} s",
                           {"Retry-After": str(seconds)})
        return Caller(owner=owner, limit_key=limit_key)
