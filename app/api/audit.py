"""The audit log for TAs and their scripts: /api/admin/audit, filtered and paged like the page."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.accounts import audit
from app.schemas.admin import AuditEntryOut, AuditPageOut
from app.web.deps import SessionDep, SettingsDep, TAUser

router = APIRouter(prefix="/api/admin", tags=["TA"])
Text = Annotated[str, Query(max_length=200)]


@router.get("/audit", response_model=AuditPageOut)
def audit_log(db: SessionDep, settings: SettingsDep, _ta: TAUser, actor: Text = "",
              action: Text = "", target: Text = "", since: Text = "", until: Text = "",
              page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
              per_page: Annotated[int, Query(ge=1, le=500)] = audit.PER_PAGE) -> AuditPageOut:
    """TA actions and refused sign-ins, newest first: `actor` a username ("-": none), `action`
    exact, `target` a part of it, `since`/`until` days (YYYY-MM-DD, the course's time zone,
    both included)."""
    filters = audit.filters_from(actor, action, target, since, until, settings.course_zone)
    found = audit.search(db, filters, page, per_page)
    return AuditPageOut(entries=[AuditEntryOut(**vars(e)) for e in found.entries],
                        total=found.total, page=found.page, pages=found.pages,
                        per_page=found.per_page)
