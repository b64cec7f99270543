"""The sweeper: the database is the truth, so anything stuck is re-sent or closed as SE.

A submission is stuck when it was never sent (broker down), sat queued longer than
`queued_timeout_s`, or is running with no heartbeat for `running_timeout_s` (its worker died).
After `max_attempts` sends it ends as SE with the reason kept for TAs.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import CustomRun, Submission, utcnow
from app.services import custom_runs
from app.services.recording import give_up
from app.services.submissions import dispatch, resend
from flashjudge.contract import Status

log = logging.getLogger(__name__)


@dataclass
class SweepReport:
    """What one sweep did."""

    resent: list[int] = field(default_factory=list)  # submissions sent again (new attempt)
    failed: list[int] = field(default_factory=list)  # submissions closed as SE
    resent_runs: list[int] = field(default_factory=list)  # custom runs sent again
    failed_runs: list[int] = field(default_factory=list)  # custom runs given up


def stuck(db: Session, settings: Settings) -> list[Submission]:
    now = utcnow()
    queued_before = now - timedelta(seconds=settings.queued_timeout_s)
    silent_before = now - timedelta(seconds=settings.running_timeout_s)
    return list(db.scalars(select(Submission).where(or_(
        (Submission.status == Status.QUEUED) & (Submission.sent_at.is_(None)),
        (Submission.status == Status.QUEUED) & (Submission.sent_at < queued_before),
        (Submission.status == Status.RUNNING)
        & (Submission.heartbeat_at.is_(None) | (Submission.heartbeat_at < silent_before)),
    )).order_by(Submission.id)))


def sweep(db: Session, settings: Settings) -> SweepReport:
    """One pass over stuck submissions."""
    report = SweepReport()
    for sub in stuck(db, settings):
        if sub.status == Status.QUEUED and sub.sent_at is None:
            dispatch(db, sub, settings)  # the broker was down: send the same attempt again
            if sub.sent_at is not None:
                report.resent.append(sub.id)
            continue
        reason = "queued too long" if sub.status == Status.QUEUED else "worker stopped reporting"
        if sub.attempt >= settings.max_attempts:
            give_up(db, sub, reason)
            report.failed.append(sub.id)
        elif resend(db, sub, reason, settings):
            report.resent.append(sub.id)
    sweep_custom_runs(db, settings, report)
    if report.resent or report.failed:
        log.warning("sweeper: resent %s, failed %s", report.resent, report.failed)
    return report


def sweep_custom_runs(db: Session, settings: Settings, report: SweepReport) -> None:
    """Custom runs report only at the end: one unfinished past queued_timeout_s is sent again."""
    before = utcnow() - timedelta(seconds=settings.queued_timeout_s)
    for run in db.scalars(select(CustomRun).where(
            CustomRun.status != Status.DONE,
            CustomRun.sent_at.is_(None) | (CustomRun.sent_at < before))):
        if run.attempt >= settings.max_attempts:
            custom_runs.record(db, run.id, run.attempt, {"error": (
                f"system error: no worker finished this run in {run.attempt} attempts")})
            report.failed_runs.append(run.id)
            continue
        run.attempt += 1
        db.commit()
        custom_runs.send(db, run, settings)
        report.resent_runs.append(run.id)


def start_sweeper(settings: Settings, make_session, stop: threading.Event) -> threading.Thread:
    """Run `sweep` every `sweep_interval_s` in a daemon thread until `stop` is set."""

    def loop() -> None:
        while not stop.wait(settings.sweep_interval_s):
            try:
                with make_session() as db:
                    sweep(db, settings)
            except Exception:  # keep sweeping: one bad pass must not end the loop
                log.exception("sweep failed")

    thread = threading.Thread(target=loop, name="flashjudge-sweeper", daemon=True)
    thread.start()
    return thread
