"""Request and response bodies of the HTTP API (they make the published OpenAPI schema)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ErrorDetail(BaseModel):
    code: str
    message: str
    type: str


class ErrorBody(BaseModel):
    error: ErrorDetail


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    team: str
    playbook: str | None
    kg: str
    version: str
    running: int = Field(description="questions running now in this process")
    auth: bool = Field(description="whether /v1 needs an API key")


class NewSession(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str | None = Field(None, max_length=200)


class SessionCreated(BaseModel):
    id: str
    title: str | None
    created: str


class SessionSummary(BaseModel):
    id: str
    title: str | None
    created: str
    updated: str
    turns: int
    running: bool


class SessionList(BaseModel):
    sessions: list[SessionSummary]


class Turn(BaseModel):
    turn: int
    question: str
    status: Literal["done", "running", "interrupted", "cancelled"]
    answer: dict[str, Any] | None = Field(description="AnswerJSON (see docs/serve.md), null until answered")
    started: str | None
    finished: str | None


class SessionDetail(BaseModel):
    id: str
    title: str | None
    created: str | None
    updated: str | None
    team: str | None
    kg: str | None
    running: bool
    turns: list[Turn]


class NewQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1)


class Cancelled(BaseModel):
    cancelled: bool


class KgList(BaseModel):
    kgs: list[dict[str, Any]]


class TeamList(BaseModel):
    teams: list[dict[str, Any]]


# ------------------------------------------------------------------ OpenAI-compatible facade


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    """OpenAI's request; sampling settings are accepted and ignored (the team's roles decide)."""

    model_config = ConfigDict(extra="allow")
    model: str | None = None
    messages: list[ChatMessageIn] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = Field(None, description="a session id: follow-ups in one session share its history")


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "kgteam"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]
