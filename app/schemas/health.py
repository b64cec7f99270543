"""Response shapes of the operations endpoints (/healthz, /readyz)."""

from __future__ import annotations

from pydantic import BaseModel


class Alive(BaseModel):
    status: str  # "alive"


class CheckResult(BaseModel):
    ok: bool  # is this part ready?
    detail: str  # what was found, or what is wrong and how to fix it


class Readiness(BaseModel):
    """Ready (200) or not (503, the same body), with each check's finding."""

    status: str  # "ready" | "not ready"
    not_ready: list[str]  # the checks that failed
    checks: dict[str, CheckResult]  # database, broker, workers
