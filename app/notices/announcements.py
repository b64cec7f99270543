"""Announcements: a TA posts one (title, plain-text body, optional expiry); every page, the API
and `flashjudge submit` show the current ones to each user until they expire, are withdrawn, or
the user hides them. Course-wide, not per assignment."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.errors import UserError, not_found
from app.core.validation import check_text
from app.db.models import Announcement, Dismissal, User, utcnow

MAX_TITLE, MAX_BODY = 200, 4000
SHOWN = 5  # at most this many on a page, newest first (older ones stay in the API and TA page)


@dataclass(frozen=True)
class Draft:
    """What a TA typed."""

    title: str  # one line
    body: str  # plain text, several lines; links become links on the pages
    expires: str = ""  # ISO 8601; without an offset: in the course's time zone; "": never


def parse_expiry(text: str, zone: tzinfo, now: datetime) -> datetime | None:
    """The expiry as naive UTC, or None for none; a time already past is refused."""
    if not text.strip():
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise UserError(f"expires_at: {text[:60]!r} is not a time such as 2026-12-01T23:59",
                        field="expires_at") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    stored = moment.astimezone(UTC).replace(tzinfo=None)
    if stored <= now:
        raise UserError("expires_at: that time has passed already", field="expires_at")
    return stored


def post(db: Session, ta: User, draft: Draft, zone: tzinfo) -> Announcement:
    """A new announcement, audited; committed by the caller."""
    title = check_text("title", draft.title.strip(), MAX_TITLE)
    if not title:
        raise UserError("title: an announcement needs a title", field="title")
    body = check_text("body", draft.body.strip().replace("\r\n", "\n"), MAX_BODY,
                      multiline=True)
    row = Announcement(title=title, body=body, created_by=ta.id,
                       expires_at=parse_expiry(draft.expires, zone, utcnow()))
    db.add(row)
    db.flush()
    audit.record(db, ta, "announce", f"announcement {row.id}", title=title)
    return row


def withdraw(db: Session, ta: User, announcement_id: int) -> None:
    """Take one down for everyone, audited; committed by the caller."""
    row = db.get(Announcement, announcement_id)
    if row is None:
        raise not_found("announcement")
    audit.record(db, ta, "announcement-withdraw", f"announcement {row.id}", title=row.title)
    db.delete(row)


def current(db: Session, user: User, limit: int | None = None) -> list[Announcement]:
    """The unexpired ones this user has not hidden, newest first."""
    hidden = select(Dismissal.announcement_id).where(Dismissal.user_id == user.id)
    query = (select(Announcement).where(live(), Announcement.id.not_in(hidden))
             .order_by(Announcement.id.desc()).limit(limit))
    return list(db.scalars(query))


def everything(db: Session) -> list[Announcement]:
    """Every announcement, expired ones too, newest first (the TA page)."""
    return list(db.scalars(select(Announcement).order_by(Announcement.id.desc())))


def dismiss(db: Session, user: User, announcement_id: int) -> None:
    """Hide one for this user (again: no change); committed by the caller."""
    if db.get(Announcement, announcement_id) is None:
        raise not_found("announcement")
    if db.get(Dismissal, (announcement_id, user.id)) is None:
        db.add(Dismissal(announcement_id=announcement_id, user_id=user.id))


def live() -> ColumnElement[bool]:
    """Unexpired, as a WHERE clause."""
    return (Announcement.expires_at.is_(None)) | (Announcement.expires_at > utcnow())
