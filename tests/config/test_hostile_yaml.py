"""Hostile team files: each is refused fast, with one ``file:line: message``, before objects are built."""

from __future__ import annotations

import time

import pytest
from yaml_mutations import alias_bomb

from kgteam.config import TeamConfigError, load_team, load_team_text
from kgteam.config.safe_yaml import LIMITS
from kgteam.config.yaml_source import read_yaml


def refused(path) -> str:
    """The single issue of a refused file, as the user sees it."""
    with pytest.raises(TeamConfigError) as info:
        load_team(path)
    (issue,) = info.value.issues
    return str(issue)


def write_bytes(tmp_path, data: bytes, name: str = "team.yaml"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(("text", "line", "message"), [
    ("name: x\nplaybook: !custom triad\n", 2, "unsupported tag '!custom'"),
    ("name: x\nkg: !!python/object/apply:os.system [echo hi]\n", 2, "unsupported tag '!!python/object/apply:os.system'"),
    ("name: x\nkg: !!binary aGk=\n", 2, "unsupported tag '!!binary'"),
    ("name: x\nroles: !!set {a, b}\n", 2, "unsupported tag '!!set' on a mapping"),
    ("name: x\nt: &t {name: x, self: *t}\n", 2, "recursive alias *t: it refers to a value that contains it"),
    ("name: x\nroles: " + "[" * 1000 + "\n", 2, "nested more than 64 levels deep"),
    ("name: x\n? {a: 1}\n: 2\n", 2, "a key must be a plain value, not a mapping"),
    ("name: x\n\n[a, b]: 2\n", 3, "a key must be a plain value, not a list"),
    ("name: x\nbudgets: {max_turns: " + "9" * 4400 + "}\n", 2, "a number of 4,400 characters; quote it if it is text"),
    ("name: x\n<<: 1\n", 2, "'<<' merges a mapping (<<: *name) or a list of mappings"),
    ("name: x\nkg:\n  <<: [{a: 1}, 2]\n", 3, "'<<' merges a mapping (<<: *name) or a list of mappings"),
    ("name: x\n\nkg: {name: a\x00b}\n", 3, "a NUL byte is not allowed in YAML"),
    ("name: \x07\n", 1, "the control character U+0007 is not allowed in YAML"),
    ("name: x\nkg: {name: 2024-13-45}\n", 2, "cannot read '2024-13-45' as !!timestamp: month must be in 1..12"),
    ("name: x\nbudgets: {max_turns: !!int ten}\n", 2, "cannot read 'ten' as !!int"),
    ("name: x\nbudgets: {max_turns: !!bool maybe}\n", 2, "cannot read 'maybe' as !!bool"),
])
def test_hostile_yaml_is_refused_with_its_line(write, text, line, message):
    path = write(text)
    assert refused(path).startswith(f"{path}:{line}: {message}")


def test_an_alias_bomb_is_refused_before_it_expands(write):
    bomb = alias_bomb(levels=9, width=9)  # 9**9 = 387 million values in a few hundred bytes
    assert len(bomb.encode()) < 600
    path = write("name: x\n" + bomb)
    started = time.process_time()
    message = refused(path)
    assert time.process_time() - started < 0.5
    assert message.startswith(f"{path}:") and "aliases expand to more than 20,000 values" in message


def test_too_many_aliases_are_refused(write):
    refs = ", ".join(["*a"] * (LIMITS.max_aliases + 1))
    path = write(f"name: x\nkg: &a {{b: 1}}\nroles: [{refs}]\n")
    assert refused(path).startswith(f"{path}:3: more than {LIMITS.max_aliases} aliases")


def test_aliases_may_nest_no_deeper_than_the_file_may(write):
    # each anchor nests 40 levels; referring to one inside another makes 80
    inner = "[" * 40 + "x" + "]" * 40
    outer = "[" * 40 + "*a" + "]" * 40
    path = write(f"name: x\na: &a {inner}\nb: {outer}\n")
    assert "aliases nest more than 64 levels deep" in refused(path)


def test_a_large_file_is_refused_without_being_read_whole(tmp_path):
    path = write_bytes(tmp_path, b"name: x\n" + b"# padding\n" * (LIMITS.max_bytes // 10 + 1))
    assert refused(path) == f"{path}: the file is {LIMITS.max_bytes + 1:,} bytes; a team file is at most " \
                            f"{LIMITS.max_bytes:,}"


def test_invalid_utf8_names_its_line(tmp_path):
    path = write_bytes(tmp_path, b"name: x\ndescription: caf\xe9\n")
    assert refused(path) == f"{path}:2: not UTF-8: byte 0xe9 in column 17; save the file as UTF-8"


def test_a_utf16_file_is_named_as_such(tmp_path):
    path = write_bytes(tmp_path, "name: x\n".encode("utf-16"))
    assert refused(path) == f"{path}:1: the file is UTF-16 (byte-order mark); save it as UTF-8"


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    text = "name: bom\nkg: {backend: oxigraph, name: metaqa}\nplaybook: t_echo\n"
    assert load_team(write_bytes(tmp_path, b"\xef\xbb\xbf" + text.encode())).name == "bom"


def test_merges_follow_yaml_priority_and_only_own_keys_can_be_duplicates():
    text = ("a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\n"
            "m:\n  <<: [*a, *b]\n  z: 3\n"
            "shared: &s {<<: *a, x: 0}\nagain: *s\n"  # an aliased mapping with a merge, walked twice
            "dup: {k: 1, k: 2}\n")
    loaded = read_yaml(text, "m.yaml")
    assert loaded.data["m"] == {"x": 1, "y": 1, "z": 3}  # *a before *b; the mapping's own z wins
    assert loaded.data["shared"] == loaded.data["again"] == {"x": 0, "y": 1}
    assert [str(i) for i in loaded.issues] == ["m.yaml:8: dup.k: duplicate key (first defined on line 8)"]


def test_a_merge_fills_a_team_section(write):
    text = ("name: merged\nkg: &kg {backend: oxigraph, name: metaqa}\nplaybook: t_echo\n"
            "model: &m {provider: openai, base_url: 'http://127.0.0.1:9/v1', model: a}\n"
            "roles:\n  responder: {role: t_responder, model: {<<: *m, model: b}}\n")
    spec = load_team(write(text))
    assert spec.roles["responder"].model.model == "b" and spec.roles["responder"].model.base_url.endswith(":9/v1")


def test_a_role_name_that_is_not_text_is_an_issue_not_a_crash(write):
    path = write("name: x\nroles:\n  - {name: [a, b], role: t_responder}\n")
    with pytest.raises(TeamConfigError) as info:
        load_team(path)
    assert f"{path}:3: roles[0]: a role's name must be text (got ['a', 'b'])" in str(info.value)


def test_an_unforeseen_failure_is_reported_as_an_internal_error_of_the_file(monkeypatch):
    from kgteam.config import loader

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(loader, "_normalise", broken)
    with pytest.raises(TeamConfigError) as info:
        load_team_text("name: x\n", "odd.yaml")
    assert str(info.value) == "odd.yaml: internal error while reading odd.yaml (RuntimeError); please report it"
    assert info.value.__cause__ is None and info.value.__suppress_context__
