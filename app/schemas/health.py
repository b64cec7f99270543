"""The /readyz body."""

from __future__ import annotations

from pydantic import BaseModel, Field


class CheckOut(BaseModel):
    ok: bool = Field(description="is this part ready?")
    detail: str = Field(description="what was found, or what is wrong and how to fix it")


class ReadyOut(BaseModel):
    """Readiness: 200 when every check is ok, 503 otherwise (this body either way)."""

    status: str = Field(description="ready | not ready")
    not_ready: list[str] = Field(description="the names of the failed checks")
    checks: dict[str, CheckOut] = Field(description="database, broker, workers, capacity, "
                                                     "messages")
    languages: dict[str, list[str]] = Field(description="language -> live workers judging it "
                                                        "(from their heartbeats)")


class Alive(BaseModel):
    """/healthz: the process answers."""

    status: str = Field(description="alive")
