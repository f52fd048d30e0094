"""What the server serves: health, KGs, teams."""

from __future__ import annotations

from fastapi import APIRouter, Request

from kgteam.serve.deps import Svc, Who
from kgteam.serve.schemas import Health, KgList, TeamList

router = APIRouter(tags=["catalogue"])


@router.get("/health", response_model=Health)
def health(request: Request, svc: Svc) -> dict:
    """Liveness and what is served (no API key needed)."""
    from kgteam import __version__

    return {"status": "ok", "team": svc.name, "playbook": svc.team.spec.playbook, "kg": svc.kg_id,
            "version": __version__, "running": len(svc.runs), "auth": request.app.state.access.auth}


@router.get("/v1/kgs", response_model=KgList)
def kgs(who: Who, svc: Svc) -> dict:
    """Installed KGs, the served one first."""
    return {"kgs": svc.kgs()}


@router.get("/v1/teams", response_model=TeamList)
def teams(who: Who, svc: Svc) -> dict:
    """The served team first, then the installed playbooks (not served by this process)."""
    return {"teams": svc.teams()}
