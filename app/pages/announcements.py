"""Announcements on the pages: hiding one (every page's banner) and the TA page's section to
post and withdraw them. The banner itself is drawn by every whole page (app/pages/rendering.py
`render`). The API of the same: app/api/announcements.py."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.db.models import User, utcnow
from app.notices import announcements
from app.pages.rendering import PageUser, render
from app.pages.ta.admin import PageTA
from app.web.deps import SessionDep, SettingsDep

router = APIRouter(include_in_schema=False)


@router.post("/announcements/{announcement_id}/dismiss")
def dismiss(db: SessionDep, user: PageUser, announcement_id: int) -> HTMLResponse:
    """Hide one for me; the banner's item is swapped for nothing."""
    announcements.dismiss(db, user, announcement_id)
    db.commit()
    return HTMLResponse("")


def section(request: Request, db: Session, ta: User, message: str = "",
            error: str = "") -> HTMLResponse:
    return render(request, "_admin_announcements.html", ta, message=message, error=error,
                  rows=announcements.everything(db), now=utcnow())


@router.get("/admin/announcements")
def announcements_section(request: Request, db: SessionDep, ta: PageTA) -> HTMLResponse:
    return section(request, db, ta)


@router.post("/admin/announcements")
def post(request: Request, db: SessionDep, settings: SettingsDep, ta: PageTA,
         title: Annotated[str, Form()], body: Annotated[str, Form()] = "",
         expires_at: Annotated[str, Form()] = "") -> HTMLResponse:
    """Post one; a refusal (no title, a past expiry) shows in the section, the form kept."""
    try:
        row = announcements.post(db, ta, announcements.Draft(title, body, expires_at),
                                 settings.course_zone)
    except UserError as exc:
        db.rollback()
        return section(request, db, ta, error=exc.detail)
    db.commit()
    return section(request, db, ta, message=f"posted: {row.title}")


@router.post("/admin/announcements/{announcement_id}/withdraw")
def withdraw(request: Request, db: SessionDep, ta: PageTA,
             announcement_id: int) -> HTMLResponse:
    announcements.withdraw(db, ta, announcement_id)
    db.commit()
    return section(request, db, ta, message="withdrawn")
