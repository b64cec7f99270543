"""Custom runs: an input file in, the reference output (and a comparison) out."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse

from app.core.deps import CurrentUser, SessionDep, SettingsDep
from app.services import custom_runs

router = APIRouter(prefix="/api/custom-runs", tags=["custom runs"])


@router.post("", status_code=202)
async def create(
    db: SessionDep, settings: SettingsDep, user: CurrentUser,
    input: Annotated[UploadFile, File(description="input file in the homework format")],
    output: Annotated[UploadFile | None, File(description="your output, to compare")] = None,
) -> dict[str, Any]:
    """Upload an input file (streamed to disk, validated); the reference is computed by a worker."""
    run = await run_in_threadpool(
        custom_runs.create, db, user, settings, input.file, output.file if output else None)
    return custom_runs.to_dict(run)


@router.get("/{run_id}")
def read(db: SessionDep, user: CurrentUser, run_id: int) -> dict[str, Any]:
    """Status of a custom run, with the comparison report once done."""
    return custom_runs.to_dict(custom_runs.get_visible(db, user, run_id))


@router.get("/{run_id}/output")
def output(db: SessionDep, settings: SettingsDep, user: CurrentUser, run_id: int) -> FileResponse:
    """Download the reference output (B*N*d float32)."""
    run = custom_runs.get_visible(db, user, run_id)
    return FileResponse(custom_runs.output_path(run, settings), filename=f"reference-{run_id}.bin",
                        media_type="application/octet-stream")
