"""Custom runs' slots and disk, claimed before a byte of the upload is read.

A reservation is a `custom_runs` row with status "reserved" whose `kept_bytes` is the most the
bytes received so far and their reference output can take on disk (what arrived, rounded up to
the next `STEP`, and a third of it: the reference is 4*B*N*d bytes against the input's
12*B*N*d). It grows as the body arrives (`grow`, checked against the limits each time), never
past the declared Content-Length: an upload that stalls holds what it sent, not what it
announced (17 stalled uploads declaring 1.4 GB each once held 29.55 of 30 GB until their 408).
It is inserted under a lock
(PostgreSQL: an advisory transaction lock; SQLite: the insert takes the database's one write
lock) and checked against every limit with itself counted, so of 20 uploads sent at once exactly
`custom_runs_per_hour` get a slot. Limits: runs per student per hour (TAs exempt), bytes kept per
student, bytes kept by all runs together. A failed upload gives its slot back (`release`); a
killed one is expired by the sweeper with the rest (`runs.expire`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, text
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import UserError
from app.course import assignments
from app.db.models import CustomRun, User, utcnow
from app.db.session import session_factory
from flashjudge.timefmt import moment_text

RESERVED = "reserved"  # the status of a run whose upload is still arriving
LOCK_KEY = 0x666A6375  # PostgreSQL advisory lock of custom-run reservations ("fjcu")
GB = 1 << 30
STEP = 64 << 20  # a reservation grows this many bytes of body at a time


@dataclass(frozen=True)
class Reservation:
    """A slot and the disk it may fill, held by a `reserved` row."""

    run_id: int  # the row, later the run itself
    folder: str  # its directory under data_dir/custom once stored
    kept_bytes: int  # the most its files may take, as reserved at first
    declared: int = 0  # the body's Content-Length: the reservation never grows past it


def body_held(received: int, declared: int) -> int:
    """The body bytes a reservation holds once `received` are in: up to the next STEP, at
    most the declared length."""
    return min(declared, -(-max(received, 1) // STEP) * STEP)


def held_for(received: int, declared: int) -> int:
    """The disk that holding `received` body bytes takes, with room for the reference output."""
    body = body_held(received, declared)
    return body + body // 3


def reserve(settings: Settings, user: User, declared: int) -> Reservation:
    """Claim a slot for an upload of `declared` bytes (committed), or raise the limit's 429/503.
    Its first STEP of disk is held now, the rest as it arrives (`grow`)."""
    with session_factory(settings.db_url)() as db:
        board = course_assignment(db, settings)  # before the lock: it may make the default one
        lock(db)
        run = CustomRun(user_id=user.id, folder=uuid.uuid4().hex, status=RESERVED, B=0, N=0,
                        d=0, attempt=1, has_own_output=False, error="",
                        kept_bytes=held_for(0, declared), assignment_id=board)
        db.add(run)
        db.flush()
        refusal = over_limit(db, user, run, settings)
        if refusal is not None:
            db.rollback()
            raise refusal
        db.commit()
        return Reservation(run.id, run.folder, run.kept_bytes, declared)


def grow(settings: Settings, user: User, slot: Reservation, received: int) -> int:
    """Hold the disk `received` body bytes need (committed); raise the disk limit's 429/503
    when that is more than is left. The body bytes the reservation holds now."""
    held = held_for(received, slot.declared)
    with session_factory(settings.db_url)() as db:
        lock(db)
        run = db.get(CustomRun, slot.run_id)
        if run is None or run.status != RESERVED:
            raise UserError("this upload took longer than a custom run is kept; send it again",
                            status=410, field="input")
        run.kept_bytes = held
        db.flush()
        refusal = student_disk_refusal(db, user, settings) or total_disk_refusal(db, settings)
        if refusal is not None:
            db.rollback()
            raise refusal
        db.commit()
    return body_held(received, slot.declared)


def course_assignment(db: Session, settings: Settings) -> int:
    """The assignment a custom run is counted under (the first open one of the current term);
    with every term archived nothing may be run (409)."""
    rows = assignments.in_term(db, settings.suite)
    if not rows:
        raise UserError("the course is archived: no term is current, nothing can be run",
                        status=409, field="term")
    return next((a for a in rows if a.is_open), rows[0]).id


def lock(db: Session) -> None:
    """Serialise reservations: PostgreSQL's reads would not see a concurrent uncommitted slot."""
    if db.get_bind().dialect.name == "postgresql":
        db.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})


def release(settings: Settings, run_id: int) -> None:
    """Give a slot back: its upload failed (a bad file, the client went away)."""
    with session_factory(settings.db_url)() as db:
        db.execute(delete(CustomRun).where(CustomRun.id == run_id,
                                           CustomRun.status == RESERVED))
        db.commit()


def over_limit(db: Session, user: User, run: CustomRun, settings: Settings) -> UserError | None:
    """The first limit this reservation (already counted) breaks, as the error to answer."""
    return (rate_refusal(db, user, run, settings) or student_disk_refusal(db, user, settings)
            or total_disk_refusal(db, settings))


def rate_refusal(db: Session, user: User, run: CustomRun, settings: Settings
                 ) -> UserError | None:
    """At most `custom_runs_per_hour` per student in any hour; says when the next is allowed."""
    limit = settings.custom_runs_per_hour
    if user.is_ta or limit <= 0:
        return None
    window = timedelta(hours=1)
    started = list(db.scalars(select(CustomRun.created_at).where(
        CustomRun.user_id == user.id, CustomRun.id != run.id,
        CustomRun.created_at >= utcnow() - window).order_by(CustomRun.created_at)))
    if len(started) < limit:
        return None
    allowed_at = started[len(started) - limit] + window
    at = moment_text(allowed_at, settings.course_zone, "%H:%M")
    return UserError(f"too many custom runs: at most {limit} per hour; try again in "
                     f"{wait_text(allowed_at)} (at {at})", status=429,
                     field="input", headers=retry_after(allowed_at))


def kept(db: Session, user_id: int | None = None) -> int:
    """Bytes the unexpired runs hold or may hold (one student's, or everyone's)."""
    query = select(func.coalesce(func.sum(CustomRun.kept_bytes), 0)).where(
        CustomRun.expired_at.is_(None))
    if user_id is not None:
        query = query.where(CustomRun.user_id == user_id)
    return int(db.scalar(query) or 0)


def student_disk_refusal(db: Session, user: User, settings: Settings) -> UserError | None:
    quota = int(settings.custom_run_disk_per_student_gb * GB)
    if user.is_ta or quota <= 0 or kept(db, user.id) <= quota:
        return None
    free_at = next_expiry(db, settings, user.id)
    return UserError(f"your custom runs may keep at most {gb(quota)} of files (uploads and "
                     f"reference outputs, with this upload counted as far as it came): upload a "
                     f"smaller input, or wait until an older run expires "
                     f"({settings.custom_run_keep_h:g} h after its upload; the next in "
                     f"{wait_text(free_at)})", status=429, field="input",
                     headers=retry_after(free_at))


def total_disk_refusal(db: Session, settings: Settings) -> UserError | None:
    quota = int(settings.custom_run_disk_total_gb * GB)
    if quota <= 0 or kept(db) <= quota:
        return None
    free_at = next_expiry(db, settings)
    return UserError(f"the server's space for custom runs ({gb(quota)}) is full; try again in "
                     f"{wait_text(free_at)}, or with a smaller input", status=503, field="input",
                     headers=retry_after(free_at))


def next_expiry(db: Session, settings: Settings, user_id: int | None = None) -> datetime:
    """When the oldest unexpired run (of one student, or of anyone) gives its space back."""
    query = select(func.min(CustomRun.created_at)).where(CustomRun.expired_at.is_(None),
                                                          CustomRun.status != RESERVED)
    if user_id is not None:
        query = query.where(CustomRun.user_id == user_id)
    oldest = db.scalar(query) or utcnow()
    return oldest + timedelta(hours=settings.custom_run_keep_h)


def gb(size: int) -> str:
    return f"{size / GB:.3g} GB"


def wait_text(at: datetime) -> str:
    seconds = max(1, round((at - utcnow()).total_seconds()))
    return f"{seconds} s" if seconds < 120 else f"{round(seconds / 60)} min"


def retry_after(at: datetime) -> dict[str, str]:
    return {"Retry-After": str(max(1, round((at - utcnow()).total_seconds())))}
