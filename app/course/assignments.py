"""Assignments: which board an upload goes to, and the default one a fresh course starts with.

A course runs several boards a term (hw4, a kernel challenge, a practice round); each is an
Assignment row (app/db/models/course.py) with its suite, languages, deadline and rules. A
deployment with none gets one at its first use, named after FLASHJUDGE_SUITE and open, so
`make run` with no configuration still judges one homework and nobody has to choose. Names are
looked up in the current term (app/course/terms.py): the newest one not archived.
"""

from __future__ import annotations

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, contains_eager

from app.core.errors import UserError
from app.course import visibility
from app.db.models import Assignment, BoardState, Term, User
from testcases.suite import SuiteError, load_suite

FIRST_TERM = "current"  # the term a fresh deployment (or 0010_assignments) starts with


def current_term(db: Session) -> Term | None:
    """The newest term that is not archived (None: none yet, or every term archived)."""
    return db.scalar(select(Term).where(Term.archived_at.is_(None))
                     .order_by(Term.id.desc()).limit(1))


def ensure_default(db: Session, suite: str) -> None:
    """Make the default assignment (named after `suite`, open) when no term or assignment exists
    yet. Written in a session of its own and committed at once, so a request that only reads
    still leaves it behind; two first requests at once both end up seeing the one row."""
    if db.scalar(select(func.count()).select_from(Assignment)):
        return
    with Session(bind=db.get_bind()) as own:
        try:
            term = current_term(own) or Term(name=FIRST_TERM)
            own.add(Assignment(term=term, name=suite, suite=suite))
            own.execute(update(BoardState).values(built=False))  # this session has no hooks:
            own.commit()  # the boards are rebuilt by the next reader or writer
        except IntegrityError:
            own.rollback()  # another request made it first
    db.expire_all()


def in_term(db: Session, default_suite: str) -> list[Assignment]:
    """The current term's assignments in their order (the default one made if none exist).
    One query, their term loaded with them, when the term has any (every upload asks: a
    deadline-night burst); the default is looked for only when it has none."""
    newest = (select(Term.id).where(Term.archived_at.is_(None)).order_by(Term.id.desc())
              .limit(1).scalar_subquery())
    rows = list(db.scalars(select(Assignment).join(Assignment.term)
                           .where(Assignment.term_id == newest)
                           .options(contains_eager(Assignment.term))
                           .order_by(Assignment.position, Assignment.id)))
    if rows:
        return rows
    ensure_default(db, default_suite)
    term = current_term(db)
    if term is None:
        return []
    return list(db.scalars(select(Assignment).where(Assignment.term_id == term.id)
                           .order_by(Assignment.position, Assignment.id)))


def open_ones(db: Session, default_suite: str) -> list[Assignment]:
    """What a student may submit to now."""
    return [a for a in in_term(db, default_suite) if a.is_open]


def names(rows: list[Assignment]) -> str:
    return ", ".join(a.name for a in rows) or "none"


def named(db: Session, name: str, default_suite: str | None = None) -> Assignment:
    """The current term's assignment called `name`; a 404 naming the ones there are. With no
    assignment at all yet, the default one is made first (`default_suite`, else `name` when it
    is a shipped suite: the old `flashjudge deadline set hw4 ...` keeps working)."""
    suite = default_suite or (name if is_suite(name) else None)
    rows = in_term(db, suite) if suite else _term_rows(db)
    found = next((a for a in rows if a.name == name), None)
    if found is None:
        raise UserError(f"no assignment {name!r}; this term has: {names(rows)}", status=404,
                        field="assignment")
    return found


def _term_rows(db: Session) -> list[Assignment]:
    term = current_term(db)
    return [] if term is None else list(db.scalars(
        select(Assignment).where(Assignment.term_id == term.id).order_by(Assignment.position)))


def is_suite(name: str) -> bool:
    try:
        load_suite(name)
    except SuiteError:
        return False
    return True


def for_upload(db: Session, user: User, name: str | None, language: str,
               default_suite: str) -> Assignment:
    """The assignment an upload goes to: the one named, or the only open one. A student may
    not submit to a closed one (TAs may: they test the judge); the language must be one it
    accepts."""
    chosen = named(db, name, default_suite) if name else only_open(db, default_suite)
    if not chosen.is_open and not user.is_ta:
        raise UserError(f"{chosen.name} is closed: it takes no submissions", status=403,
                        field="assignment")
    accepted = chosen.language_list
    if accepted and language not in accepted:
        raise UserError(f"{chosen.name} accepts {', '.join(accepted)}, not {language}",
                        field="language")
    return chosen


def only_open(db: Session, default_suite: str) -> Assignment:
    """The open assignment when there is exactly one; else an error saying what to choose."""
    rows = open_ones(db, default_suite)
    if len(rows) == 1:
        return rows[0]
    if not rows:
        raise UserError("no assignment is open for submissions now", status=403,
                        field="assignment")
    raise UserError(f"several assignments are open: choose one of {names(rows)} (the "
                    "`assignment` field, or `flashjudge submit --assignment NAME`)",
                    field="assignment")


def shown(db: Session, name: str | None, default_suite: str) -> Assignment:
    """The assignment a page or report is about: the one named, else the first open one, else
    the first of the term."""
    if name:
        return named(db, name, default_suite)
    rows = in_term(db, default_suite)
    if not rows:
        raise UserError("no assignment in the current term", status=404, field="assignment")
    return next((a for a in rows if a.is_open), rows[0])


def deadline_of(db: Session, viewer: User, name: str | None, default_suite: str) -> Assignment:
    """The assignment whose due time a viewer asks for: for a student an open one only (a
    closed one answers like an unknown name, and the 404 names the open ones), so a closed or
    unreleased assignment's name and due time are the TAs' until it opens."""
    if viewer.is_ta:
        return shown(db, name, default_suite)
    rows = open_ones(db, default_suite)
    found = next((a for a in rows if a.name == name), None) if name else \
        (rows[0] if rows else None)
    if found is None:
        what = f"no open assignment {name!r}" if name else "no open assignment"
        raise UserError(f"{what}; open now: {names(rows)}", status=404, field="assignment")
    return found


def for_board(db: Session, viewer: User, name: str | None, term: str | None,
              default_suite: str) -> Assignment:
    """The assignment whose board a viewer asks for: named (default: the first open one) in
    the current term, or for a TA in an archived `term` too. A student gets a 403 while the
    assignment's visibility rule hides the board (app/course/visibility.py)."""
    chosen = board_named(db, viewer.is_ta, name, term, default_suite)
    refuse_hidden_board(viewer, chosen)
    return chosen


def board_named(db: Session, ta: bool, name: str | None, term: str | None,
                default_suite: str) -> Assignment:
    """`for_board`'s choice without the visibility check: what a board request names, the same
    until an assignment or term changes (which moves the board's version)."""
    return in_archived(db, term, name) if term and ta else shown(db, name, default_suite)


def refuse_hidden_board(viewer: User, chosen: Assignment) -> None:
    """A student's 403 while the assignment's visibility rule hides its board (it depends on
    the time: checked at every request)."""
    if not viewer.is_ta and visibility.board_hidden(chosen):
        raise UserError(f"the board of {chosen.name} is shown after the due time", status=403,
                        field="assignment")


def in_archived(db: Session, term: str, name: str | None) -> Assignment:
    rows = list(db.scalars(select(Assignment).join(Term, Term.id == Assignment.term_id)
                           .where(Term.name == term).order_by(Assignment.position,
                                                              Assignment.id)))
    found = next((a for a in rows if name in (None, a.name)), None)
    if found is None:
        raise UserError(f"no assignment {name or ''!r} in term {term!r}; it has: "
                        f"{names(rows)}", status=404, field="assignment")
    return found
