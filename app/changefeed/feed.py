"""Reading and pruning the change feed (app/db/models/live.py): the queries of the poller and
the sweeper, nothing else.

Ids are not commit order on PostgreSQL: a transaction that took id 5 may commit after one that
took id 6 was read. The poller therefore reads "after the newest id I saw, or one of these ids I
have not seen yet" (app/live/cursor.py) rather than only "after the newest".

Pruning never deletes the newest row. SQLite (without AUTOINCREMENT) numbers a new row after the
largest id in the table, so an emptied table would hand out ids the pollers already passed.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, or_, select
from sqlalchemy.orm import Session

from app.db.models import Change
from app.db.session import write

READ_LIMIT = 1000  # rows per read; the poller reads again at once while reads come back full
PRUNE_LIMIT = 5000  # rows deleted per pass at most, so a pass stays short


@dataclass(frozen=True)
class Noted:
    """One committed row of the feed."""

    id: int  # its id: the order it was noted in, not always the order it committed in
    topic: str  # "submission:ID" | "scoreboard"


def newest_id(db: Session, topic: str | None = None) -> int:
    """The largest id in the feed (of `topic`, if given); 0 when there is none."""
    query = select(func.max(Change.id))
    if topic is not None:
        query = query.where(Change.topic == topic)
    return db.scalar(query) or 0


def read_after(db: Session, after: int, missing: Collection[int] = (),
               limit: int = READ_LIMIT) -> list[Noted]:
    """Rows with an id above `after` or in `missing`, in id order, at most `limit`."""
    wanted = Change.id > after
    if missing:
        wanted = or_(wanted, Change.id.in_(sorted(missing)))
    rows = db.execute(select(Change.id, Change.topic).where(wanted).order_by(Change.id)
                      .limit(limit))
    return [Noted(row.id, row.topic) for row in rows]


def prune(db: Session, before: datetime, limit: int = PRUNE_LIMIT) -> int:
    """Delete at most `limit` rows noted before `before` (never the newest row); committed.
    Returns how many went."""
    newest = select(func.max(Change.id)).scalar_subquery()
    old = (select(Change.id).where(Change.created_at < before, Change.id < newest)
           .order_by(Change.id).limit(limit))
    gone = write(db, delete(Change).where(Change.id.in_(old))
                 .execution_options(synchronize_session=False)).rowcount
    db.commit()
    return gone
