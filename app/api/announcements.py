"""Announcements: everyone reads the current ones (the CLI prints them), TAs post and withdraw,
each user may hide one."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app.db.models import Announcement
from app.notices import announcements
from app.schemas.announcements import AnnouncementIn, AnnouncementOut
from app.web.deps import CurrentUser, SessionDep, SettingsDep, TAUser

router = APIRouter(prefix="/api/announcements", tags=["announcements"])


def out(row: Announcement) -> AnnouncementOut:
    author = row.author.display_name if row.author else ""
    return AnnouncementOut(id=row.id, title=row.title, body=row.body, created_at=row.created_at,
                           expires_at=row.expires_at, author=author)


@router.get("", response_model=list[AnnouncementOut])
def current(db: SessionDep, user: CurrentUser) -> list[AnnouncementOut]:
    """The unexpired announcements I have not hidden, newest first."""
    return [out(a) for a in announcements.current(db, user)]


@router.post("", status_code=201, response_model=AnnouncementOut)
def post(db: SessionDep, settings: SettingsDep, ta: TAUser,
         body: AnnouncementIn) -> AnnouncementOut:
    """Post an announcement to everyone (TAs)."""
    draft = announcements.Draft(body.title, body.body, body.expires_at)
    row = announcements.post(db, ta, draft, settings.course_zone)
    db.commit()
    return out(row)


@router.delete("/{announcement_id}", status_code=204, response_class=Response)
def withdraw(db: SessionDep, ta: TAUser, announcement_id: int) -> Response:
    """Withdraw an announcement for everyone (TAs)."""
    announcements.withdraw(db, ta, announcement_id)
    db.commit()
    return Response(status_code=204)


@router.post("/{announcement_id}/dismiss", status_code=204, response_class=Response)
def dismiss(db: SessionDep, user: CurrentUser, announcement_id: int) -> Response:
    """Hide an announcement from my pages and my CLI (others still see it)."""
    announcements.dismiss(db, user, announcement_id)
    db.commit()
    return Response(status_code=204)
