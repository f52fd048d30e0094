"""Run by test_sessions.py in a subprocess: one complete turn, then a turn that hangs until killed.

Prints ``EVENT <kind>`` for every envelope (after it is persisted) so the test knows when to kill.
"""

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from agents_playbook import Sleeper, any_reply_model, sleeper_routes  # noqa: E402

from kgteam.agents.sessions import SqliteSessionStore  # noqa: E402
from kgteam.agents.team import TeamRunner  # noqa: E402


async def main(db: str, session_id: str) -> None:
    store = SqliteSessionStore(db)
    team = TeamRunner(roles={"sleeper": Sleeper(steps=3, sleep_at=2)}, routes=sleeper_routes(),
                      model=any_reply_model(), tools=None, session_store=store)

    def show(envelope):
        print(f"EVENT {envelope.turn} {envelope.kind}", flush=True)

    await team.ask("fast question", session_id=session_id, on_event=show)
    await team.ask("slow question", session_id=session_id, on_event=show)  # sleeps at step 2


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
