"""kgteam: knowledge-graph question answering with a team of LLM roles."""

__version__ = "0.1.0"
