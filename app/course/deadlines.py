"""Deadlines: a due time per assignment, a late policy, per-student extensions.

Due dates are not in the suite files (the same hw4 runs in many courses): they are fields of
the assignment (app/db/models/course.py), set on the TA page or with
`flashjudge deadline set hw4 2026-12-01T23:59+08:00` (hw4: the assignment's name; a deployment's
first assignment is named after its suite). Functions here take an Assignment or its name.
They are applied by the server's clock when a submission is uploaded, never by a client's:
after the due time (a student's extension, if any), the policy "refuse" refuses the upload and
"penalty" accepts it, marks it late and takes `penalty_per_day` percent off its score per
started day late, at most `penalty_cap` percent.
TAs are never refused nor marked late (they test the judge). Every change is audited.

Times are stored naive UTC like every time in the database; the functions here take and return
aware UTC datetimes so that no caller mixes the two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import audit
from app.accounts.users import get_by_username
from app.core.errors import UserError
from app.course import assignments, terms
from app.db.models import Assignment, Extension, User, utcnow
from flashjudge.timefmt import moment_text

POLICIES = ("refuse", "penalty")  # what happens to an upload after the due time
DAY_S = 86400.0


@dataclass(frozen=True)
class DeadlineStatus:
    """Where one user stands against one assignment's deadline at one moment."""

    suite: str  # the assignment's name, e.g. "hw4" (the key older clients read)
    due_at: datetime | None  # the due time that applies to this user (aware UTC); None: none set
    extended: bool  # the user's own extension applies
    policy: str  # "refuse" | "penalty" ("" with no deadline)
    late: bool  # the moment is after due_at
    penalty: float  # percent a submission at this moment loses (0 when on time)
    closed: bool  # a submission at this moment is refused
    seconds_left: float | None  # until due_at (negative once late); None with no deadline

    def message(self) -> str:
        """One line for the submit page and for a refusal."""
        if not self.suite:
            return "No assignment is open for submissions now."
        if self.due_at is None:
            return f"{self.suite} has no deadline"
        due = f"{self.suite} is due {moment_text(self.due_at, self.due_at.tzinfo or UTC)}"
        due += " (your extension)" if self.extended else ""
        if not self.late:
            return f"{due}: {duration(self.seconds_left or 0.0)} left"
        if self.closed:
            return f"{due}: the deadline has passed and late submissions are refused"
        return (f"{due}: late by {duration(-(self.seconds_left or 0.0))}; a submission now "
                f"loses {self.penalty:g}% of its score")

    def to_dict(self) -> dict[str, object]:
        return {"suite": self.suite, "assignment": self.suite,
                "due_at": iso(self.due_at and self.due_at.astimezone(UTC)),
                "extended": self.extended,
                "policy": self.policy, "late": self.late, "penalty": self.penalty,
                "closed": self.closed, "seconds_left": self.seconds_left,
                "message": self.message()}


NOTHING_OPEN = DeadlineStatus("", None, False, "", False, 0.0, True, None)  # no assignment open


def duration(seconds: float) -> str:
    """3 d 4 h, 5 h 12 min, 42 s: the two largest units."""
    s = int(max(seconds, 0))
    parts = [(s // 86400, "d"), (s % 86400 // 3600, "h"), (s % 3600 // 60, "min"), (s % 60, "s")]
    first = next((i for i, (n, _) in enumerate(parts) if n), 3)
    return " ".join(f"{n} {unit}" for n, unit in parts[first:first + 2] if n) or "0 s"


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def aware(naive_utc: datetime) -> datetime:
    return naive_utc.replace(tzinfo=UTC)


def stored(moment: datetime) -> datetime:
    """An aware datetime as the database keeps it (naive UTC)."""
    return moment.astimezone(UTC).replace(tzinfo=None)


def parse_due(text: str, field: str = "due_at") -> datetime:
    """An ISO 8601 time with its UTC offset ("2026-12-01T23:59+08:00", "...Z") -> aware UTC.
    A time without an offset is refused: the server's zone is nobody's business."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise UserError(f"{field}: {text!r} is not an ISO 8601 time such as "
                        "2026-12-01T23:59+08:00", field=field) from exc
    if moment.tzinfo is None:
        raise UserError(f"{field}: {text!r} has no UTC offset; add one, e.g. "
                        f"{text.strip()}+08:00 or {text.strip()}Z", field=field)
    return moment.astimezone(UTC)


def typed(text: str, zone: tzinfo, field: str = "due_at") -> str:
    """A time as a page's picker sends it (datetime-local: "2026-12-01T23:59", no offset), read
    in the course's zone, as ISO 8601 with that day's offset; a time with an offset (typed by
    hand, or from a page without the picker) stays as it is. Empty stays empty."""
    text = text.strip()
    if not text:
        return ""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text  # parse_due refuses it, naming the field
    if moment.tzinfo is not None:
        return text
    return moment.replace(tzinfo=zone).isoformat(timespec="minutes")


def penalty_for(late_by_s: float, per_day: float, cap: float) -> float:
    """Percent lost for being `late_by_s` seconds late: per_day per started day, at most cap."""
    if late_by_s <= 0:
        return 0.0
    return round(min(cap, per_day * math.ceil(late_by_s / DAY_S)), 4)


def final_score(score: int | None, penalty: float) -> float | None:
    """The score after the late penalty (the stored score, never recomputed from tests)."""
    if score is None:
        return None
    return round(score * (100.0 - penalty) / 100.0, 2)


Target = Assignment | str  # an assignment, or its name in the current term


def resolve(db: Session, target: Target) -> Assignment:
    return target if isinstance(target, Assignment) else assignments.named(db, target)


def rule_for(db: Session, target: Target) -> Assignment | None:
    """The assignment when it has a deadline (its due_at and late policy), else None."""
    found = resolve(db, target)
    return found if found.due_at is not None else None


def extension_for(db: Session, user: User, target: Target) -> Extension | None:
    return db.scalar(select(Extension).where(Extension.assignment_id == resolve(db, target).id,
                                             Extension.user_id == user.id))


def status_for(db: Session, user: User, target: Target, now: datetime) -> DeadlineStatus:
    """Where `user` stands against the assignment's deadline at `now` (aware; its zone is the
    one the message shows the due time in: the course's, FLASHJUDGE_COURSE_TIMEZONE)."""
    suite = resolve(db, target).name
    rule = rule_for(db, target)
    if rule is None or rule.due_at is None:
        return DeadlineStatus(suite, None, False, "", False, 0.0, False, None)
    extension = extension_for(db, user, rule)
    due = aware(extension.due_at if extension else rule.due_at).astimezone(now.tzinfo)
    left = (due - now).total_seconds()
    late = left < 0
    penalty = penalty_for(-left, rule.penalty_per_day, rule.penalty_cap) if late else 0.0
    closed = late and rule.late_policy == "refuse"
    return DeadlineStatus(suite, due, extension is not None, rule.late_policy, late,
                          0.0 if closed else penalty, closed, left)


@dataclass(frozen=True)
class LateMark:
    """What an accepted upload records."""

    late: bool  # uploaded after the due time
    penalty: float  # percent off its score


def mark_upload(db: Session, user: User, target: Target, now: datetime) -> LateMark:
    """The late mark of an upload at `now`; a UserError (403) when the policy refuses it."""
    if user.is_ta:
        return LateMark(False, 0.0)
    state = status_for(db, user, target, now)
    if state.closed:
        raise UserError(f"refused: {state.message()}", status=403, field="deadline")
    return LateMark(state.late, state.penalty)


def check_rule(policy: str, per_day: float, cap: float) -> None:
    """Refuse a late policy that is unknown or has numbers out of range."""
    if policy not in POLICIES:
        raise UserError(f"late_policy must be one of {', '.join(POLICIES)}, not {policy!r}",
                        field="late_policy")
    for name, value in (("penalty_per_day", per_day), ("penalty_cap", cap)):
        if not 0 <= value <= 100:
            raise UserError(f"{name} must be a percentage from 0 to 100, not {value:g}",
                            field=name)


def set_deadline(db: Session, actor: User | None, target: Target, due_at: datetime,
                 policy: str = "refuse", per_day: float = 0.0, cap: float = 100.0) -> Assignment:
    """Create or change an assignment's deadline (audited, committed)."""
    rule = resolve(db, target)
    terms.require_writable(rule)
    check_rule(policy, per_day, cap)
    rule.due_at, rule.late_policy = stored(due_at), policy
    rule.penalty_per_day, rule.penalty_cap = per_day, cap
    rule.updated_by, rule.updated_at = (actor.id if actor else None), utcnow()
    audit.record(db, actor, "deadline-set", rule.name, due_at=iso(due_at), late_policy=policy,
                 penalty_per_day=per_day, penalty_cap=cap)
    db.commit()
    return rule


def clear_deadline(db: Session, actor: User | None, target: Target) -> bool:
    """Remove an assignment's deadline; its extensions go with it (audited). False: there was
    none."""
    rule = rule_for(db, target)
    if rule is None:
        return False
    terms.require_writable(rule)
    rows = extensions(db, rule)
    for row in rows:
        db.delete(row)
    rule.due_at, rule.updated_at = None, utcnow()
    audit.record(db, actor, "deadline-clear", rule.name, extensions=len(rows))
    db.commit()
    return True


def student(db: Session, username: str) -> User:
    user = get_by_username(db, username)
    if user is None:
        raise UserError(f"no user {username!r}", status=404, field="username")
    return user


def grant_extension(db: Session, actor: User | None, target: Target, username: str,
                    due_at: datetime) -> Extension:
    """Give one user a later due time for an assignment (audited, committed)."""
    suite = resolve(db, target).name
    rule = rule_for(db, target)
    if rule is None or rule.due_at is None:
        raise UserError(f"{suite} has no deadline to extend: set one first", status=409,
                        field="suite")
    if stored(due_at) <= rule.due_at:
        raise UserError(f"due_at: an extension must end after {suite}'s due time "
                        f"{iso(aware(rule.due_at))}", field="due_at")
    terms.require_writable(rule)
    user = student(db, username)
    row = extension_for(db, user, rule) or Extension(assignment_id=rule.id, user_id=user.id)
    row.due_at = stored(due_at)
    row.granted_by = actor.id if actor else None
    row.created_at = utcnow()
    db.add(row)
    audit.record(db, actor, "extension-grant", f"{suite} {username}", due_at=iso(due_at))
    db.commit()
    return row


def revoke_extension(db: Session, actor: User | None, target: Target, username: str) -> bool:
    """Take a user's extension back (audited). False: they had none."""
    suite = resolve(db, target).name
    terms.require_writable(resolve(db, target))
    row = extension_for(db, student(db, username), target)
    if row is None:
        return False
    db.delete(row)
    audit.record(db, actor, "extension-revoke", f"{suite} {username}")
    db.commit()
    return True


def extensions(db: Session, target: Target) -> list[Extension]:
    return list(db.scalars(select(Extension)
                           .where(Extension.assignment_id == resolve(db, target).id)
                           .order_by(Extension.due_at, Extension.id)))
