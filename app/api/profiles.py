"""ncu profiles of a submission: ask for one, list them, download the .ncu-rep."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse

from app.results import detail
from app.schemas.profiles import ProfileAsked, ProfileRow
from app.submissions import profiles
from app.web.deps import CurrentUser, SessionDep, SettingsDep

router = APIRouter(prefix="/api/submissions/{submission_id}/profiles", tags=["profiles"])


@router.post("", status_code=202, response_model=ProfileAsked)
async def ask(db: SessionDep, settings: SettingsDep, user: CurrentUser, submission_id: int,
                  test_id: Annotated[str, Form()]) -> dict[str, Any]:
    """Queue one ncu run on a test (TAs; students when a TA allows it)."""
    sub = detail.get_visible(db, user, submission_id)
    profile = await run_in_threadpool(profiles.request_profile, db, user, sub, test_id, settings)
    return {"id": profile.id, "status": profile.status, "error": profile.error}


@router.get("", response_model=list[ProfileRow])
def listing(db: SessionDep, user: CurrentUser, submission_id: int) -> list[dict[str, Any]]:
    """The submission's profiles, newest first, with their summaries."""
    return profiles.listing(db, detail.get_visible(db, user, submission_id))


@router.get("/{profile_id}/report")
def report(db: SessionDep, settings: SettingsDep, user: CurrentUser, submission_id: int,
           profile_id: int) -> FileResponse:
    """The .ncu-rep file (the submission's owner and TAs only), for Nsight Compute."""
    profile = profiles.get_for(db, detail.get_visible(db, user, submission_id), profile_id)
    path = profiles.report_file(settings, profile)
    return FileResponse(path, media_type="application/octet-stream",
                        filename=f"submission{submission_id}-{profile.test_id}.ncu-rep")
