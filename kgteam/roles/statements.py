"""A KG triple as a plain English clause: "Sorrel flows through Quillsey", "Tracker is directed by
Ian Sharp", "Kismet has release year 1944".

The relation's own words (its label, camelCase and underscores split) carry the meaning, always in
the triple's direction, so a verdict never says more than the triple. Only closed-class English
decides the frame, never a KG's vocabulary: a label that starts with a verb of being or having is
used as it is; one that starts with a preposition or ends in "by" takes "is" ("is on river",
"is written by"); one that ends in another preposition is a verb phrase ("lies on"); any other
label is a noun ("release year") that the subject "has".
"""

from __future__ import annotations

import re

PREPOSITIONS = frozenset(("about", "above", "across", "after", "against", "along", "among", "around", "as", "at",
                          "before", "behind", "below", "beside", "between", "by", "during", "for", "from", "in",
                          "inside", "into", "near", "of", "off", "on", "onto", "out", "over", "past", "since",
                          "through", "to", "toward", "towards", "under", "until", "up", "upon", "via", "with",
                          "within", "without"))
VERB_HEADS = frozenset(("is", "are", "was", "were", "be", "been", "has", "have", "had", "does", "did", "can"))
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def relation_words(label: str) -> str:
    """``flowsThrough`` / ``flows_through`` / ``flows through`` → ``flows through``."""
    return " ".join(_CAMEL.sub(" ", label).replace("_", " ").split()).lower()


def statement(subject: str, relation: str, obj: str) -> str:
    """The clause ``subject relation object`` says, in the triple's direction."""
    words = relation_words(relation)
    parts = words.split()
    if not parts:
        return f"{subject} is linked to {obj}"
    if parts[0] in VERB_HEADS:
        verb = words
    elif parts[0] in PREPOSITIONS or (parts[-1] == "by" and len(parts) > 1):
        verb = f"is {words}"
    elif parts[-1] in PREPOSITIONS and len(parts) > 1:
        verb = words
    else:
        verb = f"has {words}"
    return f"{subject} {verb} {obj}"
