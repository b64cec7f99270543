"""Response models of /api/custom-runs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.schemas.submissions import MistakeOut


class CustomRunOut(BaseModel):
    """One custom run: its shape, status, outcome, and how long its files are kept."""

    id: int = Field(description="the run's id")
    status: str = Field(description="reserved (its upload is arriving), queued or done")
    B: int = Field(description="batches of the uploaded input")
    N: int = Field(description="sequence length of the uploaded input")
    d: int = Field(description="head dimension of the uploaded input")
    reference: str | None = Field(None, description="the reference that computed the output")
    report: dict[str, Any] | None = Field(None, description="comparison with your own output")
    mistake: MistakeOut | None = Field(None, description="the classic mistake your output "
                                       "matches, when it is wrong and one does (report.mistake)")
    error: str | None = Field(None, description="why there is no output (time limit, bad file)")
    expired: bool = Field(False, description="its files were deleted (see expires_at)")
    note: str = Field("", description="a sentence for the page, e.g. why it expired")
    created_at: str = Field(description="upload time, UTC")
    expires_at: str = Field(description="when its files are deleted, UTC")
    output_url: str | None = Field(None, description="download link of the reference output")


class CustomRunList(BaseModel):
    """The user's latest custom runs and the limits that apply to them."""

    runs: list[CustomRunOut] = Field(description="newest first")
    per_hour: int = Field(description="custom runs a student may start per hour (0: no limit)")
    keep_h: float = Field(description="hours a run's files are kept")
    time_limit_s: float = Field(description="longest the reference computation may take")
