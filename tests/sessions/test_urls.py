"""A session store is picked by URL, in Python, in the team file and on the command line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kgteam import Team
from kgteam.cli.app import app
from kgteam.config import TeamConfigError, load_team
from kgteam.sessions import SessionStoreError, SqliteSessionStore, open_session_store
from kgteam.sessions.urls import sqlite_path


def test_paths_and_sqlite_urls_open_sqlite(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert sqlite_path("sqlite:///rel.db") == "rel.db"
    assert sqlite_path(f"sqlite:///{tmp_path}/abs.db") == f"{tmp_path}/abs.db"  # four slashes: absolute
    assert sqlite_path("sqlite://") == sqlite_path("sqlite:///:memory:") == ":memory:"
    for target, made in [(tmp_path / "p.sqlite", tmp_path / "p.sqlite"), (str(tmp_path / "s.sqlite"), tmp_path / "s.sqlite"),
                         ("sqlite:///rel.db", tmp_path / "rel.db"), ("sub/dir.sqlite", tmp_path / "sub" / "dir.sqlite")]:
        store = open_session_store(target)
        assert isinstance(store, SqliteSessionStore)
        store.begin_turn("s", "q")
        store.close()
        assert made.exists(), target
    memory = open_session_store("sqlite://")
    assert memory.begin_turn("m", "q") == 0
    memory.close()


@pytest.mark.parametrize("url, message", [
    ("mysql://u@h/db", "unknown session store mysql://"),
    ("sqlite://relative.db", "three slashes"),
])
def test_bad_urls_say_what_is_expected(tmp_path, monkeypatch, url, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SessionStoreError, match=message):
        open_session_store(url)


def test_an_unreachable_postgresql_server_is_a_clear_error_without_the_password():
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://kgteam:s3cret@127.0.0.1:{port}/db"
    with pytest.raises(SessionStoreError, match="cannot connect to the session database") as caught:
        open_session_store(url, timeout_s=2)
    assert "s3cret" not in str(caught.value) and "kgteam:***@127.0.0.1" in str(caught.value)


TEAM = """\
name: orchard-team
playbook: triad
model: {{provider: none}}
kg: {{name: orchard}}
sessions: {sessions}
"""


def test_the_team_file_names_its_session_store_relative_to_itself(tmp_path, orchard_home):
    team_dir = tmp_path / "teams"
    team_dir.mkdir()
    (team_dir / "team.yaml").write_text(TEAM.format(sessions="data/sessions.sqlite"))
    spec = load_team(team_dir / "team.yaml")
    assert spec.sessions == str(team_dir / "data" / "sessions.sqlite")
    with Team.from_yaml(team_dir / "team.yaml", home=orchard_home) as team:
        assert team.session("s1").ask("who is the gardener of Old Elm").text == "Ada Quill"
    with SqliteSessionStore(team_dir / "data" / "sessions.sqlite") as store:
        assert [q for q, _ in store.history("s1")] == ["who is the gardener of Old Elm"]


def test_a_bad_session_url_in_a_team_file_is_reported_with_its_line(tmp_path):
    (tmp_path / "team.yaml").write_text(TEAM.format(sessions="redis://127.0.0.1/0"))
    with pytest.raises(TeamConfigError) as caught:
        load_team(tmp_path / "team.yaml")
    (issue,) = caught.value.issues
    assert issue.line == 5 and "unknown session store redis://" in issue.message


def test_team_takes_a_session_url(store_url, orchard_home, open_store):
    with Team.default(kg="orchard", model="none", home=orchard_home, sessions=store_url) as team:
        chat = team.session("s1")
        assert chat.ask("who is the gardener of Old Elm").text == "Ada Quill"
        assert len(chat.history()) == 1
    assert [t.status for t in open_store().turns("s1")] == ["done"]


def test_cli_trace_reads_a_session_url(store_url, orchard_home):
    with Team.default(kg="orchard", model="none", home=orchard_home, sessions=store_url) as team:
        team.ask("who is the gardener of Old Elm", session="cli1")
    runner = CliRunner()
    listed = runner.invoke(app, ["trace", "--list", "--db", store_url])
    assert listed.exit_code == 0, listed.output
    assert "cli1" in listed.output
    shown = runner.invoke(app, ["trace", "cli1", "--db", store_url])
    assert shown.exit_code == 0 and "turn 0: who is the gardener of Old Elm" in shown.output


def test_cli_says_when_the_session_store_is_wrong(tmp_path):
    result = CliRunner().invoke(app, ["trace", "--list", "--db", "mysql://x@y/z"])
    assert result.exit_code == 2 and "unknown session store mysql://" in result.output
