"""Every change to what a submission's page shows is noted in the change feed, by every writer.

Writers do not call `note_change` for submissions themselves: a future writer would forget. The
process's session factory carries two listeners (installed at start: app/wiring.py), so a note
for "submission:ID" joins the transaction of any change to a Submission, JudgedTest or Profile
row that goes through the ORM:

- `after_flush`: new, deleted and changed rows of those classes (ids are known after the flush;
  the note is added to the session and flushed before the commit, by commit's own flush loop);
- `do_orm_execute`: bulk `update(...)`/`delete(...)` statements on them, whose rows are read
  first with the statement's own WHERE (the service's bulk statements all name their ids).

A topic is noted once per transaction. Changes to bookkeeping no page shows (heartbeats, send
times, task ids) are not noted, so a worker's heartbeat does not wake every watcher. Writes that
bypass the ORM session (raw SQL, Core on a bare connection) are not seen: write through it.
Nothing is registered on import (tests/test_architecture.py): `track_submissions` does it, for
app/wiring.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from typing import Any

from sqlalchemy import event, inspect, select
from sqlalchemy.orm import ORMExecuteState, Session, sessionmaker

from app.changefeed.changes import note_change, submission_topic
from app.db.models import JudgedTest, Profile, Submission

# class -> the column that names its submission
TRACKED: dict[type, Any] = {Submission: Submission.id, JudgedTest: JudgedTest.submission_id,
                            Profile: Profile.submission_id}
QUIET = frozenset({"heartbeat_at", "sent_at", "task_id"})  # no page shows these
NOTED = "flashjudge.live.noted"  # session.info key: (transaction, topics noted in it)


def track_submissions(factory: sessionmaker[Session]) -> None:
    """Note submission changes in every session `factory` makes (once per factory)."""
    if not event.contains(factory, "after_flush", note_flushed):
        event.listen(factory, "after_flush", note_flushed)
        event.listen(factory, "do_orm_execute", note_bulk)


def note_flushed(session: Session, _flush_context: Any) -> None:
    """Note the submissions whose rows this flush wrote (the session still lists them)."""
    changed = [obj for obj in session.dirty if isinstance(obj, tuple(TRACKED)) and shown(obj)]
    tracked = [obj for obj in chain(session.new, session.deleted, changed)
               if isinstance(obj, tuple(TRACKED))]
    note_topics(session, (submission_of(obj) for obj in tracked))


def note_bulk(state: ORMExecuteState) -> None:
    """Note the submissions a bulk UPDATE or DELETE is about to change, in its transaction."""
    if not (state.is_update or state.is_delete) or state.bind_mapper is None:
        return
    column = TRACKED.get(state.bind_mapper.class_)
    if column is None:
        return
    query = select(column).distinct()
    where = getattr(state.statement, "whereclause", None)
    if where is not None:
        query = query.where(where)
    note_topics(state.session, state.session.scalars(query))


def shown(obj: object) -> bool:
    """Whether a changed row differs in anything but QUIET bookkeeping."""
    attrs = inspect(obj).attrs
    return any(attr.history.has_changes() for attr in attrs if attr.key not in QUIET)


def submission_of(obj: object) -> int | None:
    """The id of the submission a tracked row belongs to."""
    return getattr(obj, TRACKED[type(obj)].key)


def note_topics(session: Session, ids: Iterable[int | None]) -> None:
    """Note each submission once in the session's current transaction."""
    transaction = session.get_nested_transaction() or session.get_transaction()
    owner, noted = session.info.get(NOTED, (None, set()))
    if owner is not transaction:
        noted = set()
        session.info[NOTED] = (transaction, noted)
    for submission_id in ids:
        topic = submission_topic(submission_id) if submission_id is not None else None
        if topic is not None and topic not in noted:
            noted.add(topic)
            note_change(session, topic)
