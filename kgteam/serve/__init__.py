"""``kgteam serve``: the HTTP API (sessions, streamed questions, cancel, traces, an OpenAI-compatible
facade) and the web chat, for one team in one process. The contract is ``docs/serve.md``."""

from kgteam.serve.app import create_app
from kgteam.serve.service import TeamService
from kgteam.serve.settings import ServeSettings

__all__ = ["ServeSettings", "TeamService", "create_app"]
