"""Custom runs: an input file in, the reference output (and a comparison) out."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse

from app.core.errors import UserError
from app.custom_runs import quota, runs
from app.schemas.custom_runs import CustomRunList, CustomRunOut
from app.web.deps import BrieflyUser, CurrentUser, SessionDep, SettingsDep

router = APIRouter(prefix="/api/custom-runs", tags=["custom runs"])


UPLOAD_BODY = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["input"], "properties": {
        "input": {"type": "string", "format": "binary",
                  "description": "input file in the homework format"},
        "output": {"type": "string", "format": "binary",
                   "description": "your output, to compare"}}}}}}}


@router.post("", status_code=202, response_model=CustomRunOut, openapi_extra=UPLOAD_BODY)
async def create(request: Request, settings: SettingsDep, user: BrieflyUser) -> CustomRunOut:
    """Upload an input file (and optionally your output), with a Content-Length. The slot is
    claimed before the body is read and its disk as the body arrives: 429 past the hourly limit
    or your disk quota, 503 when the server's space for custom runs is full (the message says
    when to retry). Each file is
    written as it arrives and refused at its first byte too many; the reference is computed by
    a worker when no judging waits."""
    slot = await run_in_threadpool(quota.reserve, settings, user,
                                   declared_length(request))
    run = await runs.upload(request, settings, user, slot)
    return CustomRunOut(**runs.to_dict(run, settings))


def declared_length(request: Request) -> int:
    """The body's Content-Length: what the slot reserves on disk (a chunked upload has none)."""
    length = request.headers.get("content-length", "")
    if not length.isdigit():
        raise UserError("send the upload with a Content-Length header (browsers and "
                        "`flashjudge` do; chunked uploads are refused)", status=411,
                        field="input")
    return int(length)


@router.get("", response_model=CustomRunList)
def listing(db: SessionDep, settings: SettingsDep, user: CurrentUser) -> CustomRunList:
    """Your latest custom runs (expired ones say so), and the limits."""
    return CustomRunList(
        runs=[CustomRunOut(**runs.to_dict(r, settings))
              for r in runs.recent_for(db, user)],
        per_hour=settings.custom_runs_per_hour, keep_h=settings.custom_run_keep_h,
        time_limit_s=settings.custom_run_time_limit_s)


@router.get("/{run_id}", response_model=CustomRunOut)
def read(db: SessionDep, settings: SettingsDep, user: CurrentUser, run_id: int) -> CustomRunOut:
    """Status of a custom run, with the comparison report once done."""
    return CustomRunOut(**runs.to_dict(runs.get_visible(db, user, run_id),
                                              settings))


@router.get("/{run_id}/output")
def output(db: SessionDep, settings: SettingsDep, user: CurrentUser, run_id: int) -> FileResponse:
    """Download the reference output (B*N*d float32); 410 once the run expired."""
    run = runs.get_visible(db, user, run_id)
    return FileResponse(runs.output_path(run, settings), filename=f"reference-{run_id}.bin",
                        media_type="application/octet-stream")
