"""PG&AKV tests: the playbook's roles are registered here too, so the tests run before the
editable install is refreshed (entry points are read from the installed metadata)."""

from __future__ import annotations

import pytest

from kgteam.config import registry

ENTRIES = {"roles": {"pseudo_graph_generator": "kgteam.roles.pgakv.generator:PseudoGraphGenerator",
                     "atomic_verifier": "kgteam.roles.pgakv.verifier:AtomicVerifier",
                     "graph_fixer": "kgteam.roles.pgakv.fixer:GraphFixer",
                     "answer_writer": "kgteam.roles.pgakv.answer_writer:AnswerWriter"},
           "playbooks": {"pgakv": "kgteam.roles.pgakv:PLAYBOOK"}}


@pytest.fixture(autouse=True)
def pgakv_registered(monkeypatch):
    for group, names in ENTRIES.items():
        table = registry.entry_table(group)  # type: ignore[arg-type]
        for name, target in names.items():
            if name not in table:
                monkeypatch.setitem(table, name, registry.Entry(group, name, target, "tests"))  # type: ignore[arg-type]
    yield
