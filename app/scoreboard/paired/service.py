"""Asking for the paired comparisons: at a freeze and on the TA's button.

The board students see (the frozen one while frozen) is read, each pair of neighbours whose
bands overlap gets a comparison unless the same two submissions already have one pending or
done, and each is sent to the workers. A student who submits again changes their board row,
so a later request compares the new submission.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.core.config import Settings
from app.core.errors import UserError, not_found
from app.db.models import PairedRun, Submission
from app.scoreboard import boards
from app.scoreboard.paired import store
from app.scoreboard.paired.pairs import Neighbours, overlapping
from app.scoreboard.standing.maintain import current_state
from app.submissions import dispatch
from flashjudge.contract import LANGUAGES

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Started:
    """What one request did."""

    overlapping: int  # neighbour pairs whose bands overlap on the board
    sent: int  # comparisons asked for now
    known: int  # pairs already compared or pending (left alone)
    skipped: int  # pairs that cannot be compared on one machine (a CPU and a GPU program)

    def message(self) -> str:
        return (f"{self.overlapping} neighbour pair(s) overlap: {self.sent} paired comparison(s) "
                f"sent, {self.known} already compared or pending, {self.skipped} skipped")


def public_board(db: Session, least_band: float, assignment_id: int = 0) -> list[Neighbours]:
    """The overlapping neighbours of the board students see (frozen while frozen) of one
    assignment (0: the default board)."""
    state = current_state(db)
    snapshot = boards.read(db, state.version, state.models,
                           boards.View(False, None, assignment_id))
    return overlapping(snapshot.rows, least_band)


def comparable(a: Submission, b: Submission) -> bool:
    """Both on the GPU or both on the CPU track: one machine runs both."""
    return LANGUAGES[a.language].uses_gpu == LANGUAGES[b.language].uses_gpu


def send(db: Session, run: PairedRun, a: Submission, b: Submission, settings: Settings) -> bool:
    try:
        dispatch.send_paired(run, a, b, settings)
    except Exception as exc:  # noqa: BLE001 - the TA sees it failed and may ask again
        log.warning("could not send paired run %s: %s", run.id, exc)
        store.give_up(db, run, f"could not be sent: {exc}")
        return False
    return True


def start(db: Session, settings: Settings, assignment_id: int = 0) -> Started:
    """Ask for a comparison of every overlapping pair not compared yet on an assignment's board
    (0: the default one); commit, then send."""
    pairs = public_board(db, settings.paired_least_band, assignment_id)
    known = skipped = 0
    asked: list[tuple[PairedRun, Submission, Submission]] = []
    for pair in pairs:
        a = db.get(Submission, pair.above.submission_id)
        b = db.get(Submission, pair.below.submission_id)
        if a is None or b is None or not comparable(a, b):
            skipped += 1
            continue
        old = store.existing(db, a.id, b.id)
        if old is not None and old.status != store.FAILED:
            known += 1
            continue
        users = (pair.above.user, pair.below.user)
        asked.append((store.request(db, a.id, b.id, users, settings.paired_budget_s), a, b))
    db.commit()
    sent = sum(send(db, run, a, b, settings) for run, a, b in asked)
    return Started(len(pairs), sent, known, skipped)


def again(db: Session, settings: Settings, run_id: int) -> str:
    """A second comparison of one settled (or failed) pair, on the TA's word: say its rounds
    ran while the node's other GPU was busy (docs/benchmarks.md, "Paired runs next to a busy
    GPU"). The earlier outcome stays on the board until the new one is recorded; the pair's
    newest settled comparison is the one that counts (store.settled)."""
    old = db.get(PairedRun, run_id)
    if old is None:
        raise not_found(f"paired comparison #{run_id}")
    newest = store.existing(db, old.submission_a, old.submission_b)
    if newest is not None and newest.status == store.PENDING:
        raise UserError(f"{old.user_a} and {old.user_b} are being compared already (paired "
                        f"comparison #{newest.id} is pending)", status=409, field="run_id")
    a, b = db.get(Submission, old.submission_a), db.get(Submission, old.submission_b)
    if a is None or b is None:
        raise UserError(f"paired comparison #{run_id}: one of its submissions is gone",
                        status=409, field="run_id")
    run = store.request(db, a.id, b.id, (old.user_a, old.user_b), settings.paired_budget_s)
    db.commit()
    if not send(db, run, a, b, settings):
        return f"{old.user_a} and {old.user_b}: the comparison could not be sent; try again"
    return (f"{old.user_a} and {old.user_b}: compared again (#{run.id}); the board keeps "
            f"#{run_id}'s outcome until this one ends")


def start_quietly(db: Session, settings: Settings, assignment_id: int = 0) -> None:
    """At a freeze: ask for the comparisons; a failure leaves the freeze done and the TA's
    button to try again."""
    if not settings.paired_on_freeze:
        return
    try:
        log.info("paired runs at the freeze: %s", start(db, settings, assignment_id).message())
    except Exception as exc:  # noqa: BLE001 - the board is frozen either way
        db.rollback()
        log.warning("could not ask for paired runs at the freeze: %s", exc)
