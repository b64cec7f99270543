"""Reading and pruning the change feed, on both databases."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from app.changefeed import feed
from app.changefeed.changes import SCOREBOARD, note_change
from app.db.models import Change, utcnow


def noted(db, *topics: str, age_s: float = 0.0) -> list[int]:
    rows = [Change(topic=t, created_at=utcnow() - timedelta(seconds=age_s)) for t in topics]
    db.add_all(rows)
    db.commit()
    return [r.id for r in rows]


def test_reads_after_an_id_and_the_missing_ones_in_order(db):
    a, b, c, d = noted(db, "submission:1", SCOREBOARD, "submission:2", "submission:3")
    assert [r.id for r in feed.read_after(db, c)] == [d]
    assert [(r.id, r.topic) for r in feed.read_after(db, c, missing=[a, b])] == [
        (a, "submission:1"), (b, SCOREBOARD), (d, "submission:3")]
    assert feed.newest_id(db) == d and feed.newest_id(db, SCOREBOARD) == b


def test_pruning_deletes_old_rows_a_bounded_number_at_a_time_never_the_newest(db):
    old = noted(db, *[f"submission:{i}" for i in range(5)], age_s=7200)
    recent = noted(db, SCOREBOARD)
    before = utcnow() - timedelta(hours=1)
    assert feed.prune(db, before, limit=3) == 3
    assert feed.prune(db, before, limit=3) == 2
    assert db.scalars(select(Change.id).order_by(Change.id)).all() == recent
    assert old[-1] < recent[0]
    db.query(Change).delete()
    db.commit()
    only = noted(db, "submission:9", age_s=7200)
    assert feed.prune(db, before) == 0  # the newest stays: SQLite would hand out its id again
    assert db.scalars(select(Change.id)).all() == only


def test_a_note_is_rolled_back_with_its_transaction(db):
    note_change(db, SCOREBOARD)
    db.rollback()
    assert feed.newest_id(db) == 0
