"""Contextualizer: rewrites a chat follow-up into a standalone question (role + its prompt)."""

from kgteam.roles.contextualizer.role import (
    Contextualizer,
    ContextualizerSettings,
    Referent,
    choose_referent,
    deterministic_rewrite,
    needs_context,
    previous_topic,
    reference_kind,
    reference_noun,
    references,
    referent_candidates,
    referents,
    title_spans,
)

__all__ = [
    "Contextualizer", "ContextualizerSettings", "Referent", "choose_referent", "deterministic_rewrite",
    "needs_context", "previous_topic", "reference_kind", "reference_noun", "references", "referent_candidates", "referents",
    "title_spans",
]
