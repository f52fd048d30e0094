"""ask / chat / trace / validate driven end to end: scripted model file, real KG, real session DB."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from kgteam.agents.sessions import SqliteSessionStore
from kgteam.cli.app import app

runner = CliRunner()


def test_ask_json_end_to_end(team_file, tmp_path):
    db = tmp_path / "s.sqlite"
    result = runner.invoke(app, ["ask", "who directed Kismet", "--team", str(team_file), "--db", str(db),
                                 "--new-session", "s1", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["text"] == "William Dieterle" and data["status"] == "answered" and data["stopped_by"] == "done"
    assert [v["label"] for v in data["values"]] == ["William Dieterle"]
    (triple,) = data["evidence"]["triples"]
    assert triple["subject"] == "http://example.org/metaqa/e/Kismet"
    assert (triple["subject_label"], triple["object_label"]) == ("Kismet", "William Dieterle")
    assert data["evidence"]["queries"][0]["row_count"] == 1
    assert data["cost"]["llm_calls"] == 1 and data["cost"]["total_tokens"] > 0
    assert data["session_id"] == "s1"
    with SqliteSessionStore(db) as store:  # persisted as it happened
        (turn,) = store.turns("s1")
        assert turn.complete and turn.answer.text == "William Dieterle"
        assert [m.kind for m in store.messages("s1")] == ["question", "entity_candidates", "answer"]


def test_ask_rich_output_shows_evidence_cost_and_stop(team_file, tmp_path):
    result = runner.invoke(app, ["ask", "what did Joel Zwick direct", "--team", str(team_file),
                                 "--db", str(tmp_path / "s.sqlite"), "--verbose"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "t_linker → entity_candidates: 'Joel Zwick' → Joel Zwick" in out  # streamed event line
    assert "Fat Albert, My Big Fat Greek Wedding" in out
    assert "stopped by: done" in out and "grounded" in out
    assert "directed by" in out and "SELECT" in out  # evidence triples and the query
    assert re.search(r"cost: 1 LLM calls, \d+ tokens", out)


def test_ask_shows_progress_on_a_terminal_and_nothing_when_piped(team_file, tmp_path):
    args = ["ask", "what did Joel Zwick direct", "--team", str(team_file), "--db", str(tmp_path / "s.sqlite")]
    on_tty = runner.invoke(app, args, env={"TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1"})
    assert on_tty.exit_code == 0, on_tty.output
    assert "asking the team" in on_tty.output and "t_linker" in on_tty.output  # the latest role message
    piped = runner.invoke(app, args, env={"TTY_COMPATIBLE": "0"})
    assert piped.exit_code == 0, piped.output
    assert "asking the team" not in piped.output and "t_linker" not in piped.output
    assert "Fat Albert" in piped.output


def test_ask_unscripted_prompt_is_an_error_answer(team_file, tmp_path):
    result = runner.invoke(app, ["ask", "who directed Casablanca", "--team", str(team_file),
                                 "--db", str(tmp_path / "s.sqlite"), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["status"] == "error" and "no scripted rule matches" in data["error"]


def test_ask_logs_json_lines_on_stderr_when_asked(team_file, tmp_path):
    import logging

    import structlog

    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        result = runner.invoke(app, ["--log-level", "INFO", "ask", "who directed Kismet", "--team", str(team_file),
                                     "--db", str(tmp_path / "s.sqlite"), "--json"])
    finally:
        structlog.reset_defaults()
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["text"] == "William Dieterle"  # stdout stays clean JSON
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    finished = [e for e in events if e["event"] == "question_finished"]
    assert finished and finished[0]["status"] == "answered" and finished[0]["llm_calls"] == 1


def test_ask_with_a_malformed_script_is_a_clear_error(team_file, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("just a string\n")
    result = runner.invoke(app, ["ask", "q", "--team", str(team_file), "--model", f"scripted:{bad}",
                                 "--db", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2
    assert "model.script" in result.output and "rules" in result.output


def test_ask_invalid_team_exits_2_with_file_line(team_file, tmp_path):
    team_file.write_text(team_file.read_text().replace("max_llm_calls: 5", "max_llm_calls: five"))
    result = runner.invoke(app, ["ask", "q", "--team", str(team_file), "--db", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2
    assert f"{team_file}:16: budgets.max_llm_calls" in result.output


def test_chat_two_turns_budget_quit_then_resume(team_file, tmp_path):
    db = tmp_path / "s.sqlite"
    stdin = "who directed Kismet\nwhat did Joel Zwick direct\n/budget\n/quit\n"
    result = runner.invoke(app, ["chat", "--team", str(team_file), "--db", str(db), "--new-session", "c1"], input=stdin)
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.count("t_linker → entity_candidates") == 2  # each turn's messages streamed
    assert "William Dieterle" in out and "Fat Albert, My Big Fat Greek Wedding" in out
    assert out.count("cost: 1 LLM calls") == 2
    budget = out[out.index("budgets"):]
    assert re.search(r"max_llm_calls\s+5\s+1", budget) and re.search(r"max_turns\s+60\s+2", budget)
    assert "resume with: kgteam chat --session c1" in out

    again = runner.invoke(app, ["chat", "--team", str(team_file), "--db", str(db), "--session", "c1"],
                          input="/trace\n/new\n/quit\n")
    assert again.exit_code == 0, again.output
    assert "resuming session c1 (2 earlier question(s))" in again.output
    assert "you who directed Kismet" in again.output and "team William Dieterle" in again.output
    assert "== turn 1: what did Joel Zwick direct  [complete]" in again.output  # /trace
    assert "new session" in again.output


def test_a_session_remembers_its_team_and_kg(team_file, tmp_path):
    db = tmp_path / "s.sqlite"
    first = runner.invoke(app, ["chat", "--team", str(team_file), "--kg", "mini", "--db", str(db), "--new-session", "k1"],
                          input="who directed Kismet\n/new\n/quit\n")
    assert first.exit_code == 0, first.output
    assert "resume with: kgteam chat --session k1" in first.output  # not the empty session /new opened
    refused = runner.invoke(app, ["chat", "--db", str(db), "--session", "k1", "--kg", "other"], input="/quit\n")
    assert refused.exit_code == 2 and "runs on KG 'mini'" in refused.output
    # no --team, no --kg: both come from the session (the built-in team would need a model server)
    follow = runner.invoke(app, ["ask", "what did Joel Zwick direct", "--db", str(db), "--session", "k1"])
    assert follow.exit_code == 0, follow.output
    assert "Fat Albert, My Big Fat Greek Wedding" in follow.output and "team mini" in follow.output
    other_team = tmp_path / "copy.yaml"
    other_team.write_text(team_file.read_text(), encoding="utf-8")
    moved = runner.invoke(app, ["ask", "who directed Kismet", "--team", str(other_team), "--db", str(db), "-s", "k1"])
    assert moved.exit_code == 2 and "started with team" in moved.output


def test_chat_eof_ends_session(team_file, tmp_path):
    result = runner.invoke(app, ["chat", "--team", str(team_file), "--db", str(tmp_path / "s.sqlite"), "-q"],
                           input="who directed Kismet\n")
    assert result.exit_code == 0, result.output
    assert "William Dieterle" in result.output and "t_linker →" not in result.output


def test_trace_prints_and_exports(team_file, tmp_path):
    db = tmp_path / "s.sqlite"
    runner.invoke(app, ["ask", "who directed Kismet", "--team", str(team_file), "--db", str(db), "--new-session", "t1"])
    shown = runner.invoke(app, ["trace", "t1", "--db", str(db)])
    assert shown.exit_code == 0 and "llm_call" in shown.output and "search_entities" in shown.output
    out = tmp_path / "t1.jsonl"
    exported = runner.invoke(app, ["trace", "t1", "--db", str(db), "--jsonl", str(out)])
    assert exported.exit_code == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert json.loads(exported.stdout)["records"] == len(records)
    assert {r["type"] for r in records} == {"turn", "message", "event"}
    listed = runner.invoke(app, ["trace", "--list", "--db", str(db)])
    assert "t1" in listed.output
    missing = runner.invoke(app, ["trace", "nope", "--db", str(db)])
    assert missing.exit_code == 1 and "unknown session 'nope'" in missing.output


def test_validate_ok_and_errors(team_file):
    ok = runner.invoke(app, ["validate", str(team_file)])
    assert ok.exit_code == 0, ok.output
    assert "OK" in ok.output and "roles (2): t_linker, t_answerer" in ok.output
    team_file.write_text(team_file.read_text().replace("- t_answerer", "- t_answerr"))
    bad = runner.invoke(app, ["validate", str(team_file)])
    assert bad.exit_code == 1
    assert f"{team_file}:11: roles[1]" not in bad.output  # list items are reported by instance name
    assert "unknown role 't_answerr'" in bad.output and "t_answerer" in bad.output
    as_json = json.loads(runner.invoke(app, ["validate", str(team_file), "--json"]).stdout)
    assert as_json["ok"] is False and as_json["issues"][0]["line"] == 11


SLEEPY_TEAM = """\
name: sleepy
model: {provider: scripted, script: script.json}
kg: {backend: oxigraph, name: mini}
roles: [t_relay, t_sleeper]
routes:
  - {kind: question, sender: user, to: t_relay}
  - {kind: question, sender: t_relay, to: t_sleeper}
"""


def test_chat_ctrl_c_cancels_the_run_not_the_session(team_file, tmp_path):
    import os
    import queue
    import signal
    import subprocess
    import sys
    import threading
    import time
    from pathlib import Path

    team = tmp_path / "sleepy.yaml"
    team.write_text(SLEEPY_TEAM)
    support = Path(__file__).with_name("chat_sigint_support.py")
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "120"}
    proc = subprocess.Popen([sys.executable, str(support), "chat", "--team", str(team), "--db",
                             str(tmp_path / "s.sqlite"), "--new-session", "k1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()

    def wait_for(text: str, timeout: float = 30) -> str:
        seen = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                continue
            seen.append(line)
            if text in line:
                return "".join(seen)
        raise AssertionError(f"{text!r} not seen; got:\n{''.join(seen)}")

    try:
        proc.stdin.write("a slow question\n")
        proc.stdin.flush()
        wait_for("t_relay → question")
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out = wait_for("stopped by: cancelled")
        assert time.monotonic() - started < 10  # promptly, not after the role's 60 s
        assert "Stopped before an answer was found" in out
        proc.stdin.write("/budget\n/quit\n")  # the session is still alive
        proc.stdin.flush()
        wait_for("resume with: kgteam chat --session k1")
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


TRIAD_KB = """\
Tracker|directed_by|Ian Sharp
Tracker|starred_actors|Temuera Morrison
Tracker|release_year|2010
Once Were Warriors|directed_by|Lee Tamahori
Once Were Warriors|starred_actors|Temuera Morrison
Once Were Warriors|release_year|1994
River Queen|directed_by|Vincent Ward
River Queen|starred_actors|Temuera Morrison
River Queen|release_year|2005
"""


def test_default_triad_team_with_flags_and_a_useless_model(tmp_path, monkeypatch):
    """The built-in team (no --team), on another KG (--kg), with a scripted model (--model) whose
    every reply is invalid: Triad's deterministic fallbacks still answer, and say so."""
    from kgteam.tools.loading import build_kg

    home = tmp_path / "home"
    (tmp_path / "kb.txt").write_text(TRIAD_KB)
    build_kg([tmp_path / "kb.txt"], "films", home=home, format="metaqa", progress=False)
    (tmp_path / "useless.json").write_text(json.dumps({"rules": [{"role": "*", "reply": "no idea"}]}))
    monkeypatch.setenv("KGTEAM_HOME", str(home))
    monkeypatch.delenv("KGTEAM_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("KGTEAM_LLM_MODEL", raising=False)
    result = runner.invoke(app, ["ask", "what movies did Temuera Morrison act in", "--kg", "films",
                                 "--model", f"scripted:{tmp_path / 'useless.json'}", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert sorted(v["label"] for v in data["values"]) == ["Once Were Warriors", "River Queen", "Tracker"]
    assert data["grounded"] and data["stopped_by"] == "done" and data["fallbacks"]
    assert len(data["evidence"]["triples"]) == 3 and data["cost"]["llm_calls"] >= 1
    assert (home / "sessions.sqlite").exists()  # default session DB: <kg_home>/sessions.sqlite


DEMO_KB = """\
Cube Zero|directed_by|Ernie Barbarash
Cube Zero|release_year|2004
Once Were Warriors|directed_by|Lee Tamahori
Once Were Warriors|starred_actors|Temuera Morrison
River Queen|starred_actors|Temuera Morrison
Tracker|starred_actors|Temuera Morrison
My Big Fat Greek Wedding|directed_by|Joel Zwick
My Big Fat Greek Wedding|in_language|Greek
The Wrecking Crew|starred_actors|Sharon Tate
The Wrecking Crew|release_year|1968
Valley of the Dolls|starred_actors|Sharon Tate
Valley of the Dolls|release_year|1967
Valley of the Dolls|in_language|English
"""


def test_demo_runs_the_sample_questions(tmp_path, monkeypatch):
    """``kgteam demo`` on a pre-installed (small) demo KG with a scripted model: every sample question
    is answered with evidence and cost and compared with MetaQA's gold answers."""
    from kgteam.tools.loading import build_kg

    home = tmp_path / "home"
    (tmp_path / "kb.txt").write_text(DEMO_KB)
    build_kg([tmp_path / "kb.txt"], "metaqa", home=home, format="metaqa", progress=False)
    (tmp_path / "useless.json").write_text(json.dumps({"rules": [{"role": "*", "reply": "no idea"}]}))
    monkeypatch.delenv("KGTEAM_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("KGTEAM_LLM_MODEL", raising=False)
    monkeypatch.setenv("COLUMNS", "200")  # keep rich from wrapping the summary line
    result = runner.invoke(app, ["demo", "--home", str(home), "--model", f"scripted:{tmp_path / 'useless.json'}"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "installing the demo KG" not in out  # already there
    assert out.count("expected (MetaQA gold)") == 4 and "4/4 answers match the gold answers" in out
    assert out.count("cost: ") == 4 and "evidence triples" in out
    assert "decision_maker → query_result" in out  # role messages streamed
    assert "about the model" not in out  # the tiny-model note is for the embedded model only
    trace_id = re.search(r"trace: kgteam trace (\w+)", out).group(1)
    shown = runner.invoke(app, ["trace", trace_id, "--home", str(home)])
    assert shown.exit_code == 0 and "== turn 3:" in shown.output
    from kgteam.agents.sessions import SqliteSessionStore

    store = SqliteSessionStore(home / "sessions.sqlite")  # the session says whose it is: the web chat lists it
    try:  # only where it serves that team and KG
        saved = store.settings(trace_id)
        assert saved and saved["team_name"] == "triad" and saved["kg_id"], saved
    finally:
        store.close()



def test_demo_exits_non_zero_when_every_question_failed(tmp_path, monkeypatch):
    """A model that fails every call (as an unreachable server does) fails every question: the demo
    says so and exits 1 instead of 0."""
    from kgteam.tools.loading import build_kg

    home = tmp_path / "home"
    (tmp_path / "kb.txt").write_text(DEMO_KB)
    build_kg([tmp_path / "kb.txt"], "metaqa", home=home, format="metaqa", progress=False)
    (tmp_path / "broken.json").write_text(json.dumps({"rules": []}))  # every model call raises
    monkeypatch.delenv("KGTEAM_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("KGTEAM_LLM_MODEL", raising=False)
    result = runner.invoke(app, ["demo", "--home", str(home), "-n", "2", "-q",
                                 "--model", f"scripted:{tmp_path / 'broken.json'}"])
    assert result.exit_code == 1, result.output
    assert "every question failed" in result.output and "Traceback" not in result.output

def test_chat_follow_up_is_rewritten_by_the_contextualizer(tmp_path, monkeypatch):
    """Triad (built-in team) in chat: the second question only makes sense after the first; the
    contextualizer's (scripted) rewrite names the film, and the team answers it from the KG."""
    from kgteam.tools.loading import build_kg

    home = tmp_path / "home"
    (tmp_path / "kb.txt").write_text(DEMO_KB)
    build_kg([tmp_path / "kb.txt"], "films", home=home, format="metaqa", progress=False)
    (tmp_path / "ctx.json").write_text(json.dumps({"rules": [
        {"role": "contextualizer", "match": "what language is it in",
         "reply": {"question": "what language is My Big Fat Greek Wedding in"}},
        {"role": "*", "reply": "no idea"}]}))
    monkeypatch.setenv("COLUMNS", "200")
    stdin = "which movies has Joel Zwick directed\nwhat language is it in\n/quit\n"
    result = runner.invoke(app, ["chat", "--home", str(home), "--kg", "films", "--model",
                                 f"scripted:{tmp_path / 'ctx.json'}", "--new-session", "f1"], input=stdin)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "follow-up questions are rewritten by the contextualizer" in out
    # event lines pass through display_text, which folds runs of white space: one space before the note
    assert ("contextualizer → question: what language is My Big Fat Greek Wedding in "
            "[rewritten from: what language is it in]") in out
    answers = re.findall(r"│ (\S[^│]*?)\s+│\n│ answered", out)
    assert answers == ["My Big Fat Greek Wedding", "Greek"]
    with SqliteSessionStore(home / "sessions.sqlite") as store:
        assert [q for q, _ in store.history("f1")] == ["which movies has Joel Zwick directed",
                                                       "what language is it in"]


def test_model_none_runs_a_team_on_its_scorers_alone(kg_home, tmp_path):
    """``--model none``: no model server, no model call; the answer says who decided."""
    from kgteam.cli.app import app as cli_app

    result = CliRunner().invoke(cli_app, ["ask", "who directed Kismet", "--kg", "mini", "--home", str(kg_home),
                                          "--model", "none", "--json", "--db", str(tmp_path / "s.db")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["model"] == "none" and data["cost"]["llm_calls"] == 0
    assert [v["label"] for v in data["values"]] == ["William Dieterle"] and data["grounded"]
    plain = CliRunner().invoke(cli_app, ["ask", "who directed Kismet", "--kg", "mini", "--home", str(kg_home),
                                         "--model", "none", "--db", str(tmp_path / "s.db")])
    assert "model: none" in plain.output and "deterministic scorers" in plain.output


def test_openai_without_a_key_fails_at_once(team_file, tmp_path):
    import time

    t0 = time.perf_counter()
    result = runner.invoke(app, ["ask", "who directed Kismet", "--team", str(team_file), "--db",
                                 str(tmp_path / "s.sqlite"), "--model", "openai:gpt-4o-mini"],
                           env={"OPENAI_API_KEY": None, "KGTEAM_LLM_API_KEY": None, "KGTEAM_LLM_BASE_URL": None})
    assert result.exit_code == 2 and "needs an API key" in result.output
    assert time.perf_counter() - t0 < 5  # no retries against the network first
    local = runner.invoke(app, ["ask", "who directed Kismet", "--team", str(team_file), "--db",
                                str(tmp_path / "s.sqlite"), "--model", "openai:tiny@http://127.0.0.1:9/v1", "--json"],
                          env={"OPENAI_API_KEY": None, "KGTEAM_LLM_API_KEY": None})
    assert "needs an API key" not in local.output  # a local server needs no key: the team is built
