"""One ``kgteam`` worker in its own OS process, for test_two_workers.py: a real Team (Triad,
``model: none``, the orchard KG) on a shared session store, asking what stdin says.

Reads lines ``ASK <session> <question>``; for each prints ``HISTORY <n>`` (turns visible before
asking) then ``ANSWER <json>``; ``QUIT`` ends it. Usage: worker_process.py HOME STORE_URL
"""

import json
import sys

from kgteam import Team


def main(home: str, url: str) -> None:
    with Team.default(kg="orchard", model="none", home=home, sessions=url) as team:
        print("READY", flush=True)
        for line in sys.stdin:
            command, _, rest = line.strip().partition(" ")
            if command == "QUIT":
                break
            session_id, _, question = rest.partition(" ")
            chat = team.session(session_id)
            print("HISTORY", json.dumps([q for q, _ in chat.history()]), flush=True)
            answer = chat.ask(question)
            print("ANSWER", json.dumps({"text": answer.text, "history": len(chat.history())}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
