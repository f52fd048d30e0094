"""Model-server faults: what kgteam does when its model server misbehaves, in twelve ways.

For every mode of the fault server (``tests/llm/fault_server.py``: a real HTTP server on
127.0.0.1) two runs are timed:

* ``client``: one ``OpenAIChatModel.chat`` call (timeout ``--timeout`` s, one retry): the reply
  text, or the ``ModelError`` text that says what the server did;
* ``team``: the built-in Triad team answering a question over the small orchard KG of the tests
  with that server as its model (same timeout and retry): status, exit code ``kgteam ask`` would
  give (1 for status error), the answer text.

``clean`` is true when the run ended in an answer, or in an error that names the model server
and what it did; never a library exception, never a silent "I don't know".

    .venv/bin/python benchmarks/model_faults.py              # JSON lines on stdout, one per mode
    .venv/bin/python benchmarks/model_faults.py --modes hang html_200
    .venv/bin/python benchmarks/model_faults.py --modes hang --timeout 30 --run-timeout 3   # budget ends first
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "llm"))  # the fault server lives with the tests that use it

from fault_server import MODES, FaultServer  # noqa: E402

from kgteam.llm.base import ModelError  # noqa: E402
from kgteam.llm.openai_model import OpenAIChatModel  # noqa: E402

QUESTION = "who tended Old Elm"
TEAM = """\
name: faults
model: {{provider: openai, model: fault-model, base_url: "{base_url}", timeout_s: {timeout}, max_retries: 1}}
kg: {{backend: oxigraph, name: orchard}}
playbook: triad
budgets: {{timeout_s: {run_timeout}}}
"""


async def client_run(server: FaultServer, timeout: float) -> dict[str, Any]:
    model = OpenAIChatModel(server.base_url, "fault-model", api_key="k", timeout_s=timeout, max_retries=1,
                            backoff_initial_s=0.05, backoff_max_s=0.2)
    started = time.perf_counter()
    try:
        reply = await model.chat([{"role": "user", "content": "Say ok."}], role="bench")
        out = {"outcome": "answer", "text": reply.text[:120], "clean": True}
    except ModelError as exc:
        out = {"outcome": "error", "text": str(exc)[:300], "clean": server.base_url in str(exc)}
    except Exception as exc:  # a library exception that escaped: not clean
        out = {"outcome": "crash", "text": f"{type(exc).__name__}: {exc}"[:300], "clean": False}
    finally:
        await model.aclose()
    out["seconds"] = round(time.perf_counter() - started, 3)
    return out


def team_run(server: FaultServer, timeout: float, run_timeout: float, home: Path) -> dict[str, Any]:
    from kgteam.api import Team

    team_file = home / "faults.yaml"
    team_file.write_text(TEAM.format(base_url=server.base_url, timeout=timeout, run_timeout=run_timeout), encoding="utf-8")
    started = time.perf_counter()
    try:
        with Team.from_yaml(team_file, home=home) as team:
            answer = team.ask(QUESTION)
    except Exception as exc:
        return {"outcome": "crash", "text": f"{type(exc).__name__}: {exc}"[:300], "clean": False,
                "seconds": round(time.perf_counter() - started, 3)}
    seconds = round(time.perf_counter() - started, 3)
    silent = answer.status == "unknown" and not answer.error
    clean = answer.status == "answered" or (answer.status == "error" and server.base_url in (answer.error or ""))
    return {"outcome": answer.status, "exit_code": 1 if answer.status == "error" else 0,
            "stopped_by": answer.stopped_by, "text": answer.text[:300], "fallbacks": answer.fallbacks,
            "clean": clean and not silent, "seconds": seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    ap.add_argument("--timeout", type=float, default=2.0, help="model timeout_s (one retry)")
    ap.add_argument("--run-timeout", type=float, default=60.0, help="the team's timeout_s budget")
    ap.add_argument("--no-team", action="store_true", help="client calls only")
    args = ap.parse_args()

    from kgteam.tools.loading.builder import build_kg

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        if not args.no_team:
            build_kg([ROOT / "tests" / "data" / "orchard.ttl"], "orchard", home=home, progress=False)
        for mode in args.modes:
            row: dict[str, Any] = {"mode": mode}
            with FaultServer(mode) as server:
                row["client"] = asyncio.run(client_run(server, args.timeout))
            if not args.no_team:
                with FaultServer(mode) as server:
                    row["team"] = team_run(server, args.timeout, args.run_timeout, home)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
