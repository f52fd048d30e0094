"""Run by test_sessions.py in a subprocess: one complete turn, then a turn that hangs until killed.

Prints ``EVENT <turn> <kind>`` for every envelope ``stream`` yields (it yields only what the store
has committed) so the test knows when to kill. ``argv[1]`` is a session store path or URL.
"""

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from agents_playbook import Sleeper, any_reply_model, sleeper_routes  # noqa: E402

from kgteam.agents.team import TeamRunner  # noqa: E402
from kgteam.sessions import open_session_store  # noqa: E402


async def main(db: str, session_id: str) -> None:
    store = open_session_store(db)  # a path or a URL
    team = TeamRunner(roles={"sleeper": Sleeper(steps=3, sleep_at=2)}, routes=sleeper_routes(),
                      model=any_reply_model(), tools=None, session_store=store)

    for question in ("fast question", "slow question"):  # the slow one sleeps at step 2
        async for envelope in team.stream(question, session_id=session_id):
            print(f"EVENT {envelope.turn} {envelope.kind}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
