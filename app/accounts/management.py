"""What the TA's user management shows and does, shared by the API and the admin page."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts import audit, sessions, users
from app.accounts.users import ImportReport
from app.core.config import Settings
from app.core.errors import UserError
from app.db.models import ApiToken, User, utcnow


@dataclass(frozen=True)
class UserSummary:
    """One roster row as a TA sees it."""

    username: str  # login name
    display_name: str  # shown on the scoreboard
    email: str  # where links are sent
    role: str  # student | ta
    has_password: bool  # False: only a sign-in link gets them in
    sessions: int  # live browser sessions
    tokens: int  # live API tokens


def row(db: Session, user: User) -> UserSummary:
    live_tokens = db.scalar(select(func.count()).select_from(ApiToken).where(
        ApiToken.user_id == user.id, ApiToken.expires_at > utcnow())) or 0
    return UserSummary(user.username, user.display_name, user.email, user.role,
                       bool(user.password_hash), sessions.live_count(db, user.id), live_tokens)


def everyone(db: Session) -> list[UserSummary]:
    return [row(db, u) for u in db.scalars(select(User).order_by(User.username))]


def import_upload(db: Session, ta: User, raw: bytes, settings: Settings) -> ImportReport:
    """Decode an uploaded roster, import it with links, audit it; committed."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError("the roster is not UTF-8 text", field="roster") from exc
    report = users.import_roster(db, text, settings, ta)
    audit.record(db, ta, "import-roster", created=len(report.created),
                 updated=len(report.updated), links=len(report.links))
    db.commit()
    return report
