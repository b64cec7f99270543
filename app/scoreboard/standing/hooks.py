"""The session events that keep the standing in step with every commit, installed on each
process's session factory where the process starts (app/wiring.py): a writer cannot forget
them, whatever service it is in.

- after_flush: ORM changes that can move a row are noted in the session's `info`: a
  submission's ranking fields, its tests, a user's role or names, an assignment (its freeze,
  which one is the default board: then every board is rebuilt);
- do_orm_execute: a bulk UPDATE or DELETE of those tables (a rejudge, a cancel) notes the rows
  its WHERE clause names, read just before it runs, unless it says it moves no board's row
  (`UNRANKED_ONLY`: queued uploads closed as superseded or cancelled);
- a new submission still queued is not noted: no board shows it until it is judged;
- before_commit: flush, then rewrite the noted students' rows, bump the version and note the
  change (app/scoreboard/standing/maintain.py), inside the same transaction;
- after_rollback: forget the notes.

Not seen: SQL sent on a raw connection (engine.begin(), conn.execute(text(...))). Nothing in
app/ writes these tables that way; `flashjudge scoreboard rebuild` repairs the standing if
anything ever does.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Delete, Update, event, inspect, select
from sqlalchemy.orm import ORMExecuteState, Session, sessionmaker
from sqlalchemy.orm.util import identity_key

from app.db.models import Assignment, JudgedTest, Submission, Term, User
from app.db.session import UNRANKED_ONLY
from app.scoreboard.standing import maintain
from app.scoreboard.standing.maintain import Pending
from flashjudge.contract import Status

PENDING = "standing.pending"  # the key of a session's Pending in `Session.info`
SUBMISSION_FIELDS = ("status", "passed", "total_time", "score", "late", "late_penalty",
                     "flag_status", "gpu_model", "created_at", "user_id",
                     "result",  # result: the refined band
                     "assignment_id")
TEST_FIELDS = ("verdict", "seconds", "test_id", "submission_id")
USER_FIELDS = ("role", "username", "display_name", "board_alias", "board_hidden")
# what moves boards, or which board a request gets and whether a student may see it (the API
# keeps its choice per board version: app/scoreboard/cache.py)
ASSIGNMENT_FIELDS = ("is_open", "position", "frozen_at", "term_id", "name", "suite",
                     "visibility", "due_at")
DONE = str(Status.DONE)


def install(factory: sessionmaker[Session]) -> None:
    """Keep the standing in every session `factory` makes (once per factory)."""
    if event.contains(factory, "before_commit", before_commit):
        return
    event.listen(factory, "after_flush", after_flush)
    event.listen(factory, "do_orm_execute", before_bulk)
    event.listen(factory, "before_commit", before_commit)
    event.listen(factory, "after_rollback", after_rollback)


def pending(session: Session) -> Pending:
    return session.info.setdefault(PENDING, Pending())


def values(obj: Any, name: str) -> set[Any]:
    """An attribute's value before and after the flush (one value when it did not change)."""
    history = inspect(obj).attrs[name].history
    return {*history.added, *history.deleted, *history.unchanged}


def changed(obj: Any, names: tuple[str, ...]) -> bool:
    attrs = inspect(obj).attrs
    return any(attrs[name].history.has_changes() for name in names)


def after_flush(session: Session, _context: Any) -> None:
    for obj, whole in [*((o, True) for o in session.new), *((o, True) for o in session.deleted),
                       *((o, False) for o in session.dirty)]:
        if isinstance(obj, Submission):
            note_submission(session, obj, whole)
        elif isinstance(obj, JudgedTest) and (whole or changed(obj, TEST_FIELDS)):
            note_test(session, obj)
        elif isinstance(obj, User) and obj not in session.new and (
                whole or changed(obj, USER_FIELDS)):
            pending(session).users.add(obj.id)
        elif isinstance(obj, Assignment) and (whole or changed(obj, ASSIGNMENT_FIELDS)):
            pending(session).boards = True  # which board is the default, or a freeze
        elif isinstance(obj, Term):
            pending(session).boards = True  # a term archived or started: the default board


def note_submission(session: Session, sub: Submission, whole: bool) -> None:
    """A new, deleted or re-ranked submission moves its student's rows; one judged on a GPU
    that becomes (or stops being) done may also change the list of models with boards."""
    if not whole and not changed(sub, SUBMISSION_FIELDS):
        return
    if sub in session.new and DONE not in values(sub, "status"):
        return  # an upload (queued) shows on no board until judged (rules.counted): a burst
        # of 400 uploads took the standing's lock 400 times, one commit after another
    noted = pending(session)
    noted.users |= values(sub, "user_id") - {None} or {sub.user_id}
    moved = whole or changed(sub, ("status", "gpu_model"))
    if moved and DONE in values(sub, "status") and values(sub, "gpu_model") - {None}:
        noted.models = True


def note_test(session: Session, test: JudgedTest) -> None:
    """A test's cell shows only once its submission is done: a running one's progress events
    (dozens per judging) are skipped here when the submission is at hand."""
    noted = pending(session)
    for submission_id in values(test, "submission_id") - {None}:
        sub = session.identity_map.get(identity_key(Submission, submission_id))
        if sub is None:
            noted.submissions.add(submission_id)  # resolved at commit
        elif DONE in values(sub, "status"):
            noted.users.add(sub.user_id)


def before_bulk(state: ORMExecuteState) -> None:
    """A bulk UPDATE or DELETE: note the students (or the freeze) it is about to change."""
    statement = state.statement
    if not (state.is_update or state.is_delete) or not isinstance(statement, Update | Delete):
        return
    table = getattr(statement.table, "name", None)
    if state.execution_options.get(UNRANKED_ONLY):
        return  # it changes only rows no board shows, before and after (a supersede)
    where = statement.whereclause
    noted = pending(state.session)
    if table == Submission.__tablename__:
        noted.users |= set(state.session.scalars(scoped(select(Submission.user_id), where)))
        noted.models = True
    elif table == User.__tablename__:
        noted.users |= set(state.session.scalars(scoped(select(User.id), where)))
    elif table == JudgedTest.__tablename__:
        noted.submissions |= set(state.session.scalars(
            scoped(select(JudgedTest.submission_id), where)))
    elif table == Assignment.__tablename__:
        noted.boards = True


def scoped(query: Any, where: Any) -> Any:
    return (query if where is None else query.where(where)).distinct()


def before_commit(session: Session) -> None:
    session.flush()  # the commit would flush next; the notes come from that flush
    noted = session.info.pop(PENDING, None)
    if noted:
        maintain.apply(session, noted)


def after_rollback(session: Session) -> None:
    session.info.pop(PENDING, None)
