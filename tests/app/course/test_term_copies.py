"""A new term copies the last term's boards in their order: pages order boards by position and
then by id, so copies of boards with the same position must be made in the old boards' id order.
PostgreSQL hands back an unordered query's rows in heap order, where a renamed row (a change to an
indexed column: a new tuple, a new index entry) comes after the rows made since it."""

from __future__ import annotations

from sqlalchemy import select

from app.course import assignment_config, assignments, terms
from app.db.models import Assignment


def board(db, name: str, suite: str) -> Assignment:
    return assignment_config.apply(db, None, assignment_config.Config(name=name, suite=suite),
                                   suite, create=True)


def test_the_next_term_keeps_the_order_of_boards_of_equal_position(db, settings):
    first = board(db, "first", settings.suite)
    board(db, "second", settings.suite)
    first.name = "first-renamed"  # the earlier board's row now lies after the later one's
    db.commit()
    before = [a.name for a in assignments.in_term(db, settings.suite)]
    term = terms.start_next(db, None, "2027-spring")
    copies = db.scalars(select(Assignment).where(Assignment.term_id == term.id)
                        .order_by(Assignment.position, Assignment.id))
    assert [a.name for a in copies] == before
    assert before.index("first-renamed") < before.index("second")
