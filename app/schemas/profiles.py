"""Response shapes of /api/submissions/{id}/profiles (ncu profiles)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ProfileAsked(BaseModel):
    """A profile request, queued (or refused with its error)."""

    id: int
    status: str  # queued | done
    error: str  # why there is no profile, when there is none


class ProfileRow(BaseModel):
    """One ncu profile of a submission, with its summary once done."""

    id: int
    test_id: str
    status: str
    error: str
    main: dict[str, Any] | None = None  # the main kernel's figures
    kernels: list[dict[str, Any]] | None = None  # every profiled kernel
    seconds: float | None = None  # how long the profiling took
    report_url: str | None = None  # the .ncu-rep download, when kept
