"""The audit log of TA actions (and refused sign-ins): written with each action, read on the TAs'
audit page and /api/admin/audit, filtered and a page at a time."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from app.core.errors import UserError
from app.db.models import AuditLog, User

PER_PAGE = 50  # rows per page
SYSTEM = "-"  # the actor filter's name for rows without one (refused sign-ins)


@dataclass
class Shell:
    """Who acts when no signed-in user does: a TA at the server's shell (`flashjudge deadline
    set`, ...). Set once by the command line before it acts, so its rows name the shell's user
    and host instead of reading "-" like a refused sign-in."""

    label: str = ""


SHELL = Shell()


@contextlib.contextmanager
def from_shell(label: str) -> Iterator[None]:
    """While inside, rows without a signed-in actor name `label` as theirs."""
    SHELL.label = label
    try:
        yield
    finally:
        SHELL.label = ""


def record(
    db: Session, actor: User | None, action: str, target: str = "", **detail: Any
) -> None:
    """Add one audit row (committed with the action it describes)."""
    if actor is None and SHELL.label:
        detail = {"by": SHELL.label, **detail}
    db.add(
        AuditLog(actor_id=actor.id if actor else None, action=action, target=target, detail=detail)
    )


@dataclass(frozen=True)
class Filters:
    """What the TA narrowed the log to; empty values filter nothing."""

    actor: str = ""  # a username exactly, or SYSTEM for rows without an actor
    action: str = ""  # an action exactly ("rejudge", "import-roster", ...)
    target: str = ""  # part of the target, case-insensitive ("submission 12", "alice")
    since: datetime | None = None  # naive UTC, inclusive
    until: datetime | None = None  # naive UTC, exclusive


@dataclass(frozen=True)
class Entry:
    """One row as the page and the API show it."""

    id: int  # row id
    at: datetime  # naive UTC
    actor: str  # username; SYSTEM when none
    action: str  # what was done
    target: str  # to what
    detail: dict[str, Any]  # the action's own figures


@dataclass(frozen=True)
class Page:
    """One page of matching rows, newest first."""

    entries: list[Entry]  # at most per_page
    total: int  # matching rows in all
    page: int  # 1-based
    per_page: int  # rows per page

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


def search(db: Session, filters: Filters, page: int = 1, per_page: int = PER_PAGE) -> Page:
    """The rows that match, newest first, page `page` (past the last: the last)."""
    where = conditions(filters)
    total = db.scalar(select(func.count()).select_from(AuditLog)
                      .outerjoin(User, User.id == AuditLog.actor_id).where(*where)) or 0
    page = min(max(1, page), max(1, -(-total // per_page)))
    rows = db.execute(select(AuditLog, User.username)
                      .outerjoin(User, User.id == AuditLog.actor_id).where(*where)
                      .order_by(AuditLog.id.desc()).offset((page - 1) * per_page)
                      .limit(per_page)).all()
    entries = [Entry(row.id, row.created_at, name or (row.detail or {}).get("by") or SYSTEM,
                     row.action, row.target, row.detail or {}) for row, name in rows]
    return Page(entries, total, page, per_page)


def conditions(filters: Filters) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = []
    if filters.actor == SYSTEM:
        where.append(AuditLog.actor_id.is_(None))
    elif filters.actor:
        where.append(User.username == filters.actor)
    if filters.action:
        where.append(AuditLog.action == filters.action)
    if filters.target:
        where.append(func.lower(AuditLog.target).contains(filters.target.lower(),
                                                          autoescape=True))
    if filters.since:
        where.append(AuditLog.created_at >= filters.since)
    if filters.until:
        where.append(AuditLog.created_at < filters.until)
    return where


def actions(db: Session) -> list[str]:
    """Every action the log holds, for the filter's choices."""
    return list(db.scalars(select(AuditLog.action).distinct().order_by(AuditLog.action)))


def actors(db: Session) -> list[str]:
    """Every username that acted, for the filter's choices."""
    return list(db.scalars(select(User.username).join(AuditLog, AuditLog.actor_id == User.id)
                           .distinct().order_by(User.username)))


def filters_from(actor: str, action: str, target: str, since: str, until: str,
                 zone: tzinfo) -> Filters:
    """Filters from the page's fields: days (YYYY-MM-DD) in the course's time zone, `until`'s
    day included."""
    return Filters(actor.strip(), action.strip(), target.strip(),
                   day_start(since, "since", zone, 0), day_start(until, "until", zone, 1))


def day_start(text: str, field: str, zone: tzinfo, plus_days: int) -> datetime | None:
    """Midnight of the day `text` (+ plus_days) in `zone`, as naive UTC; None when empty."""
    if not text.strip():
        return None
    try:
        day = date.fromisoformat(text.strip())
    except ValueError as exc:
        raise UserError(f"{field}: {text[:40]!r} is not a day such as 2026-12-01",
                        field=field) from exc
    start = datetime.combine(day + timedelta(days=plus_days), time(), zone)
    return start.astimezone(UTC).replace(tzinfo=None)
