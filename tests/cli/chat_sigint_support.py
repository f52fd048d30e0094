"""Run ``kgteam`` in a subprocess with one extra test role, ``t_sleeper``, that takes its time.

Used by the Ctrl-C test: a real SIGINT must reach a real process with a real event loop.
"""

from __future__ import annotations

import asyncio
import sys

from kgteam.config import registry
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer, Payload
from kgteam.roles.base import Role, RoleContext


class Relay(Role):
    """Passes the question on at once, so the test sees the run has started."""

    name = "t_relay"
    consumes = ("question",)
    produces = ("question",)

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        return [message.payload]


class Sleeper(Role):
    """Answers after a long pause, unless the run is cancelled first."""

    name = "t_sleeper"
    consumes = ("question",)
    produces = ("answer",)

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        await asyncio.sleep(60)
        return [Answer(text="slept")]


def main() -> None:
    registry.BUILTIN_ROLES["t_sleeper"] = f"{__name__}:Sleeper"
    registry.BUILTIN_ROLES["t_relay"] = f"{__name__}:Relay"
    registry.refresh()
    from kgteam.cli.app import app

    app(prog_name="kgteam", args=sys.argv[1:])


if __name__ == "__main__":
    main()
