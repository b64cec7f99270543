"""What the TA page and the board show of the paired comparisons: how many are pending and
done, the GPU seconds spent of those allowed, and one line per pair saying how it ended."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import PairedRun
from app.scoreboard.paired.store import DONE, FAILED, PENDING, SettledPair, settled


@dataclass
class Progress:
    """The comparisons asked for so far, newest first."""

    pending: int = 0  # sent, no outcome yet
    done: int = 0  # ordered or tied
    failed: int = 0  # no order claimed: a run failed, our failure, or not sent
    gpu_s: float = 0.0  # GPU seconds the finished ones held
    allowed_s: float = 0.0  # GPU seconds all of them may hold (their budgets together)
    runs: list[PairedRun] = field(default_factory=list)  # the rows, newest first


def progress(db: Session, shown: int = 50) -> Progress:
    """The counts over every comparison, and the newest `shown` rows."""
    found = Progress()
    for run in db.scalars(select(PairedRun).order_by(PairedRun.id.desc())):
        found.pending += run.status == PENDING
        found.done += run.status == DONE
        found.failed += run.status == FAILED
        found.gpu_s += run.gpu_s
        found.allowed_s += run.budget_s
        if len(found.runs) < shown:
            found.runs.append(run)
    return found


def note(pair: SettledPair) -> str:
    """The board's line for one settled pair."""
    if pair.tied:
        return f"{pair.faster_user} and {pair.slower_user}: tied after {pair.rounds} paired rounds"
    return (f"{pair.faster_user} ahead of {pair.slower_user}: ordered by paired runs "
            f"({pair.rounds} rounds)")


def board_notes(db: Session) -> list[str]:
    """One line per settled pair, for the scoreboard page."""
    return [note(p) for p in settled(db)]
