"""Terms: archive one (everything in it read-only), start the next with the same assignments,
rename one.

A course keeps last term's results: archiving sets `Term.archived_at`, after which every write
about its assignments or their submissions is refused by `require_writable` (uploads, rejudges,
cancels, deadlines, extensions, flags, profiles, custom runs, assignment edits), while TAs still
read its boards and grades. The next term copies the newest term's assignments (their
configuration, a fresh secret seed where tests are hidden) with no submissions, extensions or
freeze. Work still queued or running blocks an archive: its result would land in a read-only
term.
"""

from __future__ import annotations

import re
import secrets

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts import audit
from app.core.errors import UserError
from app.course.assignments import current_term
from app.db.models import Assignment, Submission, Term, User, utcnow
from flashjudge.contract import Status

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
COPIED = ("name", "title", "suite", "languages", "is_open", "position", "late_policy",
          "penalty_per_day", "penalty_cap", "gpu_model", "visibility")


def require_writable(assignment: Assignment | None) -> None:
    """Refuse (409) a write about an assignment of an archived term."""
    if assignment is not None and assignment.term.archived_at is not None:
        raise UserError(f"term {assignment.term.name} is archived: {assignment.name} and its "
                        "submissions are read-only", status=409, field="term")


def require_sub_writable(sub: Submission) -> None:
    require_writable(sub.assignment)


def listing(db: Session) -> list[Term]:
    """Every term, newest first."""
    return list(db.scalars(select(Term).order_by(Term.id.desc())))


def by_name(db: Session, name: str) -> Term:
    found = db.scalar(select(Term).where(Term.name == name))
    if found is None:
        known = ", ".join(t.name for t in listing(db)) or "none"
        raise UserError(f"no term {name!r}; there are: {known}", status=404, field="term")
    return found


def unfinished(db: Session, term: Term) -> int:
    """Submissions of the term still queued or running."""
    return db.scalar(select(func.count()).select_from(Submission).join(Assignment).where(
        Assignment.term_id == term.id, Submission.status != Status.DONE)) or 0


def archive(db: Session, actor: User | None) -> Term:
    """Archive the current term (audited, committed): read-only from now on."""
    term = current_term(db)
    if term is None:
        raise UserError("there is no current term to archive", status=409, field="term")
    waiting = unfinished(db, term)
    if waiting:
        raise UserError(f"{waiting} submission(s) of term {term.name} are still queued or "
                        "running: wait for them or cancel them first", status=409,
                        field="term")
    term.archived_at = utcnow()
    audit.record(db, actor, "term-archive", term.name)
    db.commit()
    return term


def check_new_name(db: Session, name: str) -> None:
    """A term's name is plain (it goes into URLs and file names) and unique."""
    if not NAME.match(name):
        raise UserError(f"term name {name!r}: letters, digits, '.', '_' and '-', at most 64",
                        field="name")
    if db.scalar(select(Term).where(Term.name == name)) is not None:
        raise UserError(f"a term {name!r} exists already", status=409, field="name")


def rename(db: Session, actor: User | None, old: str, new: str) -> Term:
    """Rename a term, archived or not (audited, committed): the first one is made as "current"
    before anyone names it, and archived boards are found by their term's name."""
    term = by_name(db, old)
    if new == old:
        return term
    check_new_name(db, new)
    term.name = new
    audit.record(db, actor, "term-rename", new, was=old)
    db.commit()
    return term


def start_next(db: Session, actor: User | None, name: str) -> Term:
    """Start term `name` with copies of the newest term's assignments (the current term is
    archived first); audited, committed. The copies are made in the old term's order: their ids
    break ties of position, and PostgreSQL hands back an unordered scan's rows in no set order
    (an updated row moves to the end)."""
    check_new_name(db, name)
    if current_term(db) is not None:
        archive(db, actor)
    last = db.scalar(select(Term).order_by(Term.id.desc()).limit(1))
    term = Term(name=name)
    db.add(term)
    for old in [] if last is None else db.scalars(
            select(Assignment).where(Assignment.term_id == last.id)
            .order_by(Assignment.position, Assignment.id)):
        copy = Assignment(term=term, **{f: getattr(old, f) for f in COPIED})
        copy.secret_seed = fresh_seed() if old.secret_seed is not None else None
        db.add(copy)
    audit.record(db, actor, "term-start", name, copied_from=last.name if last else None)
    db.commit()
    return term


def fresh_seed() -> int:
    """A secret seed for hidden tests: not guessable from anything a student sees."""
    return secrets.randbelow(2**31 - 1) + 1
