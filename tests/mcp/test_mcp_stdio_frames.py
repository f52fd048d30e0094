"""Over stdio, every request the server can read the id of gets an answer, as over HTTP: a frame the
SDK cannot read is answered -32600 (with its id) or -32700 (id null), not dropped while the client
waits. Raw frames on the real ``python -m kgteam mcp`` process's standard input."""

from __future__ import annotations

import json
import queue
import subprocess
import threading

from conftest import server_command, server_env

FRAMES = [
    '{"jsonrpc":"2.0","id":904,"method":"tools/call","params":"x"}',  # params not an object
    '{"jsonrpc":"1.0","id":905,"method":"ping"}',  # not JSON-RPC 2.0
    "this is not json",
    '{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}',  # a notification: nobody waits
    "[1, 2]",
    '{"jsonrpc":"2.0","id":906,"method":"ping"}',  # readable: answered by the SDK as ever
]


def test_unreadable_frames_are_answered_over_stdio(mcp_home, tmp_path):
    errlog = (tmp_path / "stderr.log").open("w")
    proc = subprocess.Popen(server_command(mcp_home), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog,
                            env=server_env(mcp_home), cwd=tmp_path)
    lines: queue.Queue[bytes | None] = queue.Queue()

    def read_all() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)  # end of output

    threading.Thread(target=read_all, daemon=True).start()
    try:
        assert proc.stdin is not None
        proc.stdin.write("".join(frame + "\n" for frame in FRAMES).encode())
        proc.stdin.flush()
        replies = []
        while not any(r.get("id") == 906 for r in replies):
            line = lines.get(timeout=120)  # the process starts (imports, KG) first
            assert line is not None, "the server ended before answering"
            replies.append(json.loads(line))
        proc.stdin.close()  # the client goes: whatever else the server says comes before its output ends
        while (line := lines.get(timeout=30)) is not None:
            replies.append(json.loads(line))
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()  # stopped by its own PID
        errlog.close()
    errors = {json.dumps(r["id"]) + ":" + str(r["error"]["code"]) for r in replies if "error" in r}
    assert errors == {"904:-32600", "905:-32600", "null:-32700", "null:-32600"}
    assert len(replies) == 5  # the four errors and the ping's answer; nothing for the notification
    log = (tmp_path / "stderr.log").read_text()
    assert "dropped a notification" in log and "Traceback" not in log
