"""Course settings a TA changes while the course runs: its time zone, the submit interval, a new
deadline's late policy, the university's OpenID provider.

They live in the database (one row, `CourseSettings`, written only here); the environment gives
their first values: until a TA saves the page there is no row and the environment's values
stand. The service reads them through its Settings object: `refresh` copies the row onto it
after a save and at most every REFRESH_S seconds in each API process (app/web/deps.py), so
other processes take a change within seconds and every reader (pages, the rate limit, the
sign-in) stays as it was. Every save is audited, the OpenID secret never in the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.config import Settings
from app.core.errors import UserError
from app.course import deadlines
from app.db.models import CourseSettings, User, utcnow

ROW_ID = 1
REFRESH_S = 10.0  # how stale another process's copy may be
OIDC = ("oidc_issuer", "oidc_client_id", "oidc_client_secret", "oidc_name")
ON_SETTINGS = {"timezone": "course_timezone", "submit_interval_s": "submit_interval_s",
               **{k: k for k in OIDC}}  # row field -> Settings field


@dataclass
class Draft:
    """What the settings page (or the API) sends; every field is checked before any is saved."""

    timezone: str
    submit_interval_s: float
    late_policy: str
    penalty_per_day: float
    penalty_cap: float
    oidc_issuer: str = ""
    oidc_client_id: str = ""
    oidc_client_secret: str = ""  # empty: keep the stored one
    oidc_name: str = ""


def current(db: Session, settings: Settings) -> CourseSettings:
    """The course's row, or (not stored) one holding the environment's values."""
    row = db.get(CourseSettings, ROW_ID)
    if row is None:
        row = CourseSettings(
            id=ROW_ID, timezone=settings.course_timezone,
            submit_interval_s=settings.submit_interval_s, late_policy="refuse",
            penalty_per_day=10.0, penalty_cap=50.0, oidc_issuer=settings.oidc_issuer,
            oidc_client_id=settings.oidc_client_id,
            oidc_client_secret=settings.oidc_client_secret, oidc_name=settings.oidc_name)
    return row


def zone(db: Session, settings: Settings) -> ZoneInfo:
    """The course's time zone now (for the command line, which has no running app)."""
    return ZoneInfo(current(db, settings).timezone)


def check(draft: Draft, stored_secret: str) -> None:
    """Refuse, naming the field, what the service could not run with."""
    try:
        ZoneInfo(draft.timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise UserError(f"timezone: {draft.timezone!r} is no IANA time zone such as "
                        "Asia/Taipei or UTC", field="timezone") from exc
    if not 0 <= draft.submit_interval_s <= 86400:
        raise UserError("submit_interval_s: between 0 (no limit) and 86400 seconds",
                        field="submit_interval_s")
    deadlines.check_rule(draft.late_policy, draft.penalty_per_day, draft.penalty_cap)
    secret = draft.oidc_client_secret or stored_secret
    if draft.oidc_issuer and not (draft.oidc_issuer.startswith(("https://", "http://"))
                                  and draft.oidc_client_id and secret):
        raise UserError("oidc_issuer: a provider needs its URL (https://...), the client id "
                        "and the client secret it registered the judge with", field="oidc_issuer")


def save(db: Session, actor: User | None, settings: Settings, draft: Draft) -> CourseSettings:
    """Check and store the course's settings (audited, committed) and use them at once here."""
    row = current(db, settings)
    check(draft, row.oidc_client_secret)
    if row not in db:
        db.add(row)
    changes: dict[str, Any] = {}
    for name, value in vars(draft).items():
        if name == "oidc_client_secret" and not value:
            continue
        if getattr(row, name) != value:
            changes[name] = "(changed)" if name == "oidc_client_secret" else value
            setattr(row, name, value)
    if not draft.oidc_issuer:
        row.oidc_client_id = row.oidc_client_secret = ""
    row.updated_at = utcnow()
    audit.record(db, actor, "course-settings", "course", **changes)
    db.commit()
    apply(row, settings)
    return row


def apply(row: CourseSettings, settings: Settings) -> bool:
    """Copy the row onto the service's settings; True when the OpenID provider changed (its
    client must be made again)."""
    before = tuple(getattr(settings, k) for k in OIDC)
    for field, target in ON_SETTINGS.items():
        value = getattr(row, field)
        if field == "oidc_name" and not value:
            continue
        object.__setattr__(settings, target, value)
    return before != tuple(getattr(settings, k) for k in OIDC)


def refresh(db: Session, settings: Settings) -> bool:
    """Copy the stored row (if a TA ever saved one) onto `settings`; True when the OpenID
    provider changed."""
    row = db.get(CourseSettings, ROW_ID)
    return row is not None and apply(row, settings)
