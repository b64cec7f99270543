"""The pairs paired runs settled, as app/scoreboard/ties.py takes them: what the
board's ranking reads of table `paired_runs` (written by app/scoreboard/paired/store.py, which
bumps the board's version when an outcome lands, so every board is ranked again).

A comparison counts only while both its submissions are still the ones the board ranks: a
student who submits a better program later is compared afresh, never by an old outcome.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import PairedRun
from app.db.models.standing import PAIRED_DONE
from app.scoreboard import ties
from app.scoreboard.rows import Row

A_FASTER, TIED = "a-faster", "tied"  # flashjudge.contract.paired's outcomes


def settled_for(db: Session, rows: list[Row]) -> list[tuple[str, str] | frozenset[str]]:
    """(faster, slower) usernames of each ordered pair and {a, b} of each tied one, among the
    submissions these rows rank; the latest outcome of a pair counts."""
    user_of = {r.submission_id: r.user for r in rows}
    if len(user_of) < 2:
        return []
    query = (select(PairedRun.submission_a, PairedRun.submission_b, PairedRun.outcome)
             .where(PairedRun.status == PAIRED_DONE)
             .order_by(PairedRun.id.desc()))
    seen: set[frozenset[int]] = set()
    found: list[tuple[str, str] | frozenset[str]] = []
    for a, b, outcome in db.execute(query):
        if a not in user_of or b not in user_of or frozenset((a, b)) in seen:
            continue
        seen.add(frozenset((a, b)))
        if outcome == TIED:
            found.append(frozenset((user_of[a], user_of[b])))
        else:
            faster, slower = (a, b) if outcome == A_FASTER else (b, a)
            found.append((user_of[faster], user_of[slower]))
    return found


__all__ = ["settled_for", "ties"]
