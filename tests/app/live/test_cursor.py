"""The poller's position in the feed: nothing passed on twice, nothing lost to a late commit."""

from __future__ import annotations

from app.changefeed.feed import Noted
from app.live.cursor import MAX_LISTED, Cursor


def rows(*ids: int) -> list[Noted]:
    return [Noted(i, f"submission:{i}") for i in ids]


def test_a_row_committed_late_below_the_newest_is_still_passed_on():
    cursor = Cursor(last=4, hole_wait_s=60)
    assert [r.id for r in cursor.accept(rows(6), now=0)] == [6]  # 5 is still open
    assert cursor.wanted() == (6, [5])
    assert [r.id for r in cursor.accept(rows(5, 6), now=1)] == [5]  # 6 was passed on before
    assert cursor.wanted() == (6, [])


def test_rows_read_again_are_not_passed_on_again():
    cursor = Cursor(last=0, hole_wait_s=60)
    assert len(cursor.accept(rows(1, 2, 3), now=0)) == 3
    assert cursor.accept(rows(1, 2, 3), now=0) == []


def test_a_hole_of_a_rolled_back_transaction_is_given_up_after_a_while():
    cursor = Cursor(last=0, hole_wait_s=60)
    cursor.accept(rows(3), now=0)
    assert cursor.holes == [1, 2]
    cursor.expire(now=59)
    assert cursor.holes == [1, 2]
    cursor.expire(now=61)
    assert cursor.holes == []


def test_many_holes_are_read_as_a_range_from_the_oldest():
    cursor = Cursor(last=0, hole_wait_s=60)
    cursor.accept(rows(MAX_LISTED + 2), now=0)
    assert cursor.wanted() == (0, [])
    assert [r.id for r in cursor.accept(rows(1, MAX_LISTED + 2), now=0)] == [1]
