"""Custom runs: an input file in, the reference output (and a comparison) out."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse

from app.judging import custom_runs
from app.schemas.custom_runs import CustomRunList, CustomRunOut
from app.web.deps import CurrentUser, SessionDep, SettingsDep

router = APIRouter(prefix="/api/custom-runs", tags=["custom runs"])


@router.post("", status_code=202, response_model=CustomRunOut)
async def create(
    db: SessionDep, settings: SettingsDep, user: CurrentUser,
    input: Annotated[UploadFile, File(description="input file in the homework format")],
    output: Annotated[UploadFile | None, File(description="your output, to compare")] = None,
) -> CustomRunOut:
    """Upload an input file (streamed to disk, validated); the reference is computed by a worker
    when no judging waits. 429 past the hourly limit (the message says when to retry)."""
    run = await run_in_threadpool(
        custom_runs.create, db, user, settings, input.file, output.file if output else None)
    return CustomRunOut(**custom_runs.to_dict(run, settings))


@router.get("", response_model=CustomRunList)
def listing(db: SessionDep, settings: SettingsDep, user: CurrentUser) -> CustomRunList:
    """Your latest custom runs (expired ones say so), and the limits."""
    return CustomRunList(
        runs=[CustomRunOut(**custom_runs.to_dict(r, settings))
              for r in custom_runs.recent_for(db, user)],
        per_hour=settings.custom_runs_per_hour, keep_h=settings.custom_run_keep_h,
        time_limit_s=settings.custom_run_time_limit_s)


@router.get("/{run_id}", response_model=CustomRunOut)
def read(db: SessionDep, settings: SettingsDep, user: CurrentUser, run_id: int) -> CustomRunOut:
    """Status of a custom run, with the comparison report once done."""
    return CustomRunOut(**custom_runs.to_dict(custom_runs.get_visible(db, user, run_id),
                                              settings))


@router.get("/{run_id}/output")
def output(db: SessionDep, settings: SettingsDep, user: CurrentUser, run_id: int) -> FileResponse:
    """Download the reference output (B*N*d float32); 410 once the run expired."""
    run = custom_runs.get_visible(db, user, run_id)
    return FileResponse(custom_runs.output_path(run, settings), filename=f"reference-{run_id}.bin",
                        media_type="application/octet-stream")
