"""The one definition of a name (kgteam.tools.naming): which literal wins, aliases, fallbacks."""

from __future__ import annotations

import pytest

from kgteam.tools.naming import DCTERMS_TITLE, DEFAULT_NAMING, Naming, fallback_name

RDFS = "http://www.w3.org/2000/01/rdf-schema#label"
SCHEMA = "http://schema.org/name"
SCHEMA_S = "https://schema.org/name"
FOAF = "http://xmlns.com/foaf/0.1/name"
ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
OWN = "http://example.org/campus/displayName"


def test_predicate_order_then_language():
    n = DEFAULT_NAMING
    assert n.best([(SCHEMA, "Jonah Pettifer", None)]) == "Jonah Pettifer"
    assert n.best([(SCHEMA_S, "Calculus One", None)]) == "Calculus One"
    assert n.best([(DCTERMS_TITLE, "Organic Chemistry", None), (FOAF, "OC", None)]) == "OC"
    assert n.best([(FOAF, "Jonah", None), (RDFS, "Jonah Pettifer", "en")]) == "Jonah Pettifer"
    assert n.best([(RDFS, "Jonas Pettifer", "de"), (RDFS, "Jonah Pettifer", "en")]) == "Jonah Pettifer"
    assert n.best([(RDFS, "Jonah P.", "en-GB"), (RDFS, "Jonah Pettifer", "en")]) == "Jonah Pettifer"
    assert n.best([(ALT, "J. Pettifer", None)]) is None  # an alias is never the name
    assert n.best([(OWN, "Jonah Pettifer", None)]) is None  # not a naming predicate unless named


def test_the_users_predicates_come_first_and_are_checked():
    n = Naming.with_predicates([f"<{OWN}>", OWN, RDFS])
    assert n.extra == (OWN,)  # brackets stripped, duplicates and standard ones dropped
    assert n.best([(RDFS, "s-0981", None), (OWN, "Jonah Pettifer", None)]) == "Jonah Pettifer"
    with pytest.raises(ValueError, match="not an absolute IRI"):
        Naming.with_predicates(["displayName"])


def test_aliases_are_every_other_name():
    found = [(SCHEMA, "Jonah Pettifer", None), (ALT, "J. Pettifer", None), (SCHEMA, "Jonas Pettifer", "de")]
    assert DEFAULT_NAMING.aliases(found, "Jonah Pettifer") == ["Jonas Pettifer", "J. Pettifer"]


@pytest.mark.parametrize("found", [
    [(RDFS, "  Jonah   Pettifer ", "en")], [(ALT, "J. Pettifer", None)], [(OWN, "Jonah", None)], [(FOAF, " ", None)],
])
def test_one_literal_reads_as_it_does_among_others(found):
    """A lone literal takes a shortcut (no ranking): it must give what the ranking gives. Beside a
    literal of a predicate that is no name, the ranking path runs on the same literal."""
    other = (OWN, "not a name here", None)
    assert DEFAULT_NAMING.best(found) == DEFAULT_NAMING.best([*found, other])
    assert DEFAULT_NAMING.best(iter(found)) == DEFAULT_NAMING.best(found)
    assert DEFAULT_NAMING.aliases(iter(found), "x") == DEFAULT_NAMING.aliases(found, "x")
    for primary in ("Jonah Pettifer", "J. Pettifer", "someone else"):
        assert DEFAULT_NAMING.aliases(found, primary) == DEFAULT_NAMING.aliases([*found, other], primary)
    assert DEFAULT_NAMING.best([(RDFS, "  Jonah   Pettifer ", "en")]) == "Jonah Pettifer"
    assert DEFAULT_NAMING.aliases([(ALT, "J. Pettifer", None)], "Jonah Pettifer") == ["J. Pettifer"]


def test_fallback_is_the_humanised_local_name():
    assert fallback_name("http://example.org/campus/Marisol_Achterburg") == "Marisol Achterburg"
    assert fallback_name("http://example.org/campus/enrolledIn") == "enrolled in"
    assert fallback_name("http://example.org/campus/McDonald") == "McDonald"
    assert fallback_name("http://example.org/campus/HasPart", predicate=True) == "has part"


def test_the_names_query_asks_every_naming_predicate_at_once():
    q = Naming.with_predicates([OWN]).names_query("<http://example.org/campus/student/s-0981>")
    for p in (OWN, RDFS, SCHEMA, SCHEMA_S, FOAF, DCTERMS_TITLE, ALT):
        assert f"<{p}>" in q
    assert q.count("VALUES") == 1 and "FILTER(?p IN (" in q
