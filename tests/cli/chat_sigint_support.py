"""Run ``kgteam`` in a subprocess with extra test roles that take their time.

Used by the Ctrl-C test (a real SIGINT must reach a real process with a real event loop) and the
kill -9 test (``t_stepper`` writes a long chain of messages to kill in the middle of).
"""

from __future__ import annotations

import asyncio
import sys

from kgteam.config import registry
from kgteam.protocols.payloads import Answer, MissingInfo, Question
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
        return [Answer(confidence=1.0, text="slept")]


class Stepper(Role):
    """A chain of steps, each a message the session store writes as it happens: two for a question,
    ``SLOW_STEPS`` (a few seconds) for a question containing "slow" — something to kill mid-write."""

    name = "t_stepper"
    reads = (Question, MissingInfo)
    SLOW_STEPS = 400

    @handles
    async def on_step(self, msg: Question | MissingInfo, ctx: RoleContext) -> list[MissingInfo | Answer]:
        step = 1 + len(ctx.ancestors(MissingInfo))
        asked = ctx.ancestor(Question)
        slow = asked is not None and "slow" in asked.text
        if step >= (self.SLOW_STEPS if slow else 2):
            return [Answer(confidence=1.0, text=f"done after {step} steps")]
        if slow:
            await asyncio.sleep(0.005)
        return [MissingInfo(description=f"step {step}")]


def main() -> None:
    for name, target in (("t_sleeper", "Sleeper"), ("t_relay", "Relay"), ("t_stepper", "Stepper")):
        registry.entry_table("roles")[name] = registry.Entry("roles", name, f"{__name__}:{target}", "tests")
    from kgteam.cli.app import app

    app(prog_name="kgteam", args=sys.argv[1:])


if __name__ == "__main__":
    main()
