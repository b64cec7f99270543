"""The only writer of `PairedRun` rows (tests/app/scoreboard/test_paired_store.py reads app/ for
any other): a comparison asked for, and its outcome recorded.

A submission's status never changes here (app/submissions/lifecycle.py owns that): a paired run is
a question about two recorded submissions, answered in its own row.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.db.models import PairedRun, utcnow
from app.db.models.standing import PAIRED_DONE, PAIRED_PENDING
from app.scoreboard.standing.maintain import bump, locked_state
from flashjudge.contract import PairedResult
from flashjudge.contract.paired import A_FASTER, B_FASTER, FAILED, TIED

PENDING, DONE = PAIRED_PENDING, PAIRED_DONE  # a row's status besides FAILED


@dataclass(frozen=True)
class SettledPair:
    """A comparison that can order the board: what the tie marking reads."""

    faster_submission: int  # the submission ranked first (either one when tied)
    slower_submission: int  # the other
    faster_user: str  # usernames, as on the board
    slower_user: str
    tied: bool  # True: equally fast within the margin (or no order found within the budget)
    rounds: int  # paired rounds behind the outcome
    reason: str  # "ordered", "equivalent", "futile", "budget", "max-rounds"


def existing(db: Session, a: int, b: int) -> PairedRun | None:
    """The latest comparison of these two submissions, either way round."""
    query = select(PairedRun).where(or_(
        (PairedRun.submission_a == a) & (PairedRun.submission_b == b),
        (PairedRun.submission_a == b) & (PairedRun.submission_b == a)))
    return db.scalars(query.order_by(PairedRun.id.desc())).first()


def request(db: Session, a: int, b: int, users: tuple[str, str], budget_s: float) -> PairedRun:
    """A new pending comparison of A (ranked above) and B, with a fresh key (flushed, not
    committed: the caller commits, then sends)."""
    run = PairedRun(submission_a=a, submission_b=b, user_a=users[0], user_b=users[1],
                    key=secrets.token_hex(8), status=PENDING, budget_s=budget_s)
    db.add(run)
    db.flush()
    return run


def record(db: Session, run_id: int, key: str, result: PairedResult) -> bool:
    """Store a worker's outcome for the pending request with this key; anything else (an older
    request's result, a second delivery) is stale and ignored."""
    run = db.get(PairedRun, run_id, with_for_update=True)
    if run is None or run.key != key or run.status != PENDING:
        db.rollback()
        return False
    run.status = DONE if result.settled else FAILED
    run.outcome = result.outcome
    run.reason = (result.error or result.reason)[:200]
    run.rounds = len(result.rounds)
    run.gpu_s = round(result.gpu_s, 3)
    run.detail = result.to_dict()
    run.finished_at = utcnow()
    if result.settled:
        rank_again(db)
    db.commit()
    return True


def rank_again(db: Session) -> None:
    """A settled outcome changes what the boards show (app/scoreboard/settled.py): bump their
    version in this transaction, so caches rebuild and open pages are pushed the new board. An
    unbuilt standing is rebuilt, with the outcome, by its next reader anyway."""
    state = locked_state(db)
    if state.built:
        bump(db, state, state.models)


def give_up(db: Session, run: PairedRun, why: str) -> None:
    """A request that could not be sent: failed at once, so it does not stay pending."""
    run.status, run.outcome, run.reason, run.finished_at = FAILED, FAILED, why[:200], utcnow()
    db.commit()


def settled(db: Session) -> list[SettledPair]:
    """Every finished comparison that orders or ties two submissions, newest first: the one
    call the board's tie marking needs (a pair of submissions appears once, its latest)."""
    seen: set[frozenset[int]] = set()
    found: list[SettledPair] = []
    for run in db.scalars(select(PairedRun).where(PairedRun.status == DONE)
                          .order_by(PairedRun.id.desc())):
        pair = frozenset((run.submission_a, run.submission_b))
        if pair not in seen:
            seen.add(pair)
            found.append(settled_pair(run))
    return found


def settled_pair(run: PairedRun) -> SettledPair:
    b_first = run.outcome == B_FASTER
    subs = (run.submission_b, run.submission_a) if b_first else (run.submission_a,
                                                                 run.submission_b)
    users = (run.user_b, run.user_a) if b_first else (run.user_a, run.user_b)
    return SettledPair(subs[0], subs[1], users[0], users[1], run.outcome == TIED, run.rounds,
                       run.reason)


__all__ = ["A_FASTER", "B_FASTER", "DONE", "FAILED", "PENDING", "TIED", "SettledPair", "existing",
           "give_up", "record", "request", "settled"]
