"""The two store methods ``kgteam serve`` needs: an empty session, and deleting one."""

from __future__ import annotations

from kgteam.agents.sessions import SqliteSessionStore
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer, Question


def test_an_empty_session_is_listed_and_takes_its_first_question_as_title(tmp_path):
    with SqliteSessionStore(tmp_path / "s.sqlite") as store:
        info = store.create_session("a1")
        assert (info.session_id, info.turns, info.title) == ("a1", 0, None)
        assert [s.session_id for s in store.list_sessions()] == ["a1"]
        store.begin_turn("a1", "who directed Kismet")
        store.create_session("a1", title="ignored: it exists")
        assert store.list_sessions()[0].title == "who directed Kismet"
        store.create_session("b2", title="mine")
        store.begin_turn("b2", "another question")
        assert {s.session_id: s.title for s in store.list_sessions()}["b2"] == "mine"


def test_delete_session_removes_everything_of_that_session_only(tmp_path):
    with SqliteSessionStore(tmp_path / "s.sqlite") as store:
        for sid in ("keep", "drop"):
            turn = store.begin_turn(sid, "q")
            store.append_event(sid, turn, "tool_call", {"tool": "run_sparql"})
            store.append_envelope(Envelope(session_id=sid, turn=turn, sender="user", payload=Question(text="q")))
            store.save_settings(sid, {"owner": sid})
            store.finish_turn(sid, turn, Answer(text="a"))
        assert store.delete_session("drop") is True
        assert store.delete_session("drop") is False
        assert store.turns("drop") == [] and store.messages("drop") == [] and store.events("drop") == []
        assert store.settings("drop") is None
        assert [s.session_id for s in store.list_sessions()] == ["keep"]
        assert len(store.messages("keep")) == 1 and len(store.events("keep")) == 1
        turn = store.begin_turn("drop", "again")  # the id can be used afresh
        assert turn == 0
