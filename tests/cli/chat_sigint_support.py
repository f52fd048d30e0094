"""Run ``kgteam`` in a subprocess with one extra test role, ``t_sleeper``, that takes its time.

Used by the Ctrl-C test: a real SIGINT must reach a real process with a real event loop.
"""

from __future__ import annotations

import asyncio
import sys

from kgteam.config import registry
from kgteam.protocols.payloads import Answer, Question
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contract import handles


class Relay(Role):
    """Passes the question on at once, so the test sees the run has started."""

    name = "t_relay"

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Question]:
        return [q]


class Sleeper(Role):
    """Answers after a long pause, unless the run is cancelled first."""

    name = "t_sleeper"

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Answer]:
        await asyncio.sleep(60)
        return [Answer(text="slept")]


def main() -> None:
    for name, target in (("t_sleeper", "Sleeper"), ("t_relay", "Relay")):
        registry.entry_table("roles")[name] = registry.Entry("roles", name, f"{__name__}:{target}", "tests")
    from kgteam.cli.app import app

    app(prog_name="kgteam", args=sys.argv[1:])


if __name__ == "__main__":
    main()
