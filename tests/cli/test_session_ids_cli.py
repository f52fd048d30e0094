"""``--session ID`` resumes a session that exists: an unknown id (a typo) is an error that lists the
recent sessions, never a new empty one; ``--new-session ID`` names a new one."""

from __future__ import annotations

from typer.testing import CliRunner

from kgteam.agents.sessions import SqliteSessionStore
from kgteam.cli.app import app
from kgteam.cli.team_setup import choose_team, session_settings

runner = CliRunner()


def test_an_unknown_session_id_is_an_error_listing_the_recent_ones(team_file, tmp_path):
    db = tmp_path / "s.sqlite"
    base = ["--team", str(team_file), "--db", str(db)]
    spec, _ = choose_team(team_file)
    with SqliteSessionStore(db) as store:  # two sessions as `ask --team ... --new-session ID` leaves them
        for sid, question in (("older1", "who directed Kismet"), ("newer2", "what did Joel Zwick direct")):
            store.save_settings(sid, session_settings(spec, team_file, None, None))
            store.begin_turn(sid, question)
    for command in (["chat", *base, "--session", "typo123"], ["ask", "who directed Kismet", *base, "-s", "typo123"]):
        result = runner.invoke(app, command, input="who directed Kismet\n/quit\n")
        assert result.exit_code == 2, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
        out = result.output
        assert "no session 'typo123'" in out
        # newest first, with team, KG and first question
        assert out.index("newer2") < out.index("older1")
        assert "newer2  (team mini, KG mini) 'what did Joel Zwick direct'" in out
        assert "William Dieterle" not in out  # nothing was asked
    with SqliteSessionStore(db) as store:
        assert [s.session_id for s in store.list_sessions()] == ["newer2", "older1"]
    taken = runner.invoke(app, ["ask", "who directed Kismet", *base, "--new-session", "older1"])
    assert taken.exit_code == 2 and "resume it with --session older1" in taken.output


def test_an_unknown_session_in_an_empty_store_says_there_are_none(team_file, tmp_path):
    db = tmp_path / "none.sqlite"
    result = runner.invoke(app, ["chat", "--team", str(team_file), "--db", str(db), "-s", "typo123"], input="/quit\n")
    assert result.exit_code == 2 and "no session 'typo123': there are no sessions" in result.output
    assert not db.exists()  # reading for the check created no store
