"""The sweeper: the database is the truth, so anything stuck is sent again or closed.

A submission is looked at when it was never sent (broker down), sat queued longer than
`queued_timeout_s`, or is running with no heartbeat for `running_timeout_s`. The attempt ledger
(flashjudge.claims, beside the broker) then says what became of its live attempt:

- nobody took it: while its send is marked in the broker (younger than `in_flight_s`) it is
  still waiting and is left: one message in flight per attempt. A mark lost with the broker's
  data is the broker watch's to re-send (app/upkeep/broker_watch.py); an old mark (or a
  broker that keeps none) gets the SAME attempt sent again, and a worker takes whichever copy
  comes first and drops the other. Waiting never counts.
- a worker holds it and beats: leave it (the control side is only behind);
- a worker reported it: leave it for `queued_timeout_s` (its result waits on `control`);
- a worker took it and died, or its report never came: the judging is lost, and a new attempt
  starts (`record_lost`: SE after `max_lost_attempts`). Only system errors that workers report
  count toward `max_attempts` (app/submissions/recording.py).

Custom runs are swept the same way, and expire: after `custom_run_keep_h` their files are
deleted and the run is marked expired. Rows of the change feed older than `live_keep_s` are
deleted (a bounded number per pass: app/changefeed/feed.py); a page that reconnects reads the
current state anyway.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.changefeed import feed
from app.core.config import Settings
from app.custom_runs import quota, runs
from app.db.models import CustomRun, Submission, utcnow
from app.submissions import dispatch
from app.submissions.recording import record_lost
from app.upkeep.broker_watch import in_flight
from flashjudge.claims import (
    AttemptState,
    ClaimState,
    Ledger,
    attempt_name,
    custom_run_subject,
    now,
    submission_subject,
)
from flashjudge.contract import Status

log = logging.getLogger(__name__)
PRUNE_EVERY_S = 3600.0  # how often the ledger's old records are pruned
LEDGER_KEEP_S = 7 * 24 * 3600.0  # records untouched this long are pruned
UNSENT_GRACE_S = 5.0  # an unsent submission younger than this is still being sent by its upload


class Action(StrEnum):
    """What the sweeper does with one stuck attempt."""

    SEND_AGAIN = "send again"  # the same attempt, once more (it waited, or its message is lost)
    NEW_ATTEMPT = "new attempt"  # the judging is lost: judge again as the next attempt
    WAIT = "wait"  # a worker holds it or reported it: the control side is behind


@dataclass
class SweepReport:
    """What one sweep did."""

    resent: list[int] = field(default_factory=list)  # submissions sent again, same attempt
    retried: list[int] = field(default_factory=list)  # lost judgings: a new attempt sent
    waiting: list[int] = field(default_factory=list)  # held or reported by a worker: left
    failed: list[int] = field(default_factory=list)  # submissions closed as SE
    resent_runs: list[int] = field(default_factory=list)  # custom runs sent again
    retried_runs: list[int] = field(default_factory=list)  # custom runs lost: a new attempt
    failed_runs: list[int] = field(default_factory=list)  # custom runs given up
    expired_runs: list[int] = field(default_factory=list)  # custom runs whose files went
    pruned_changes: int = 0  # rows of the change feed deleted (older than live_keep_s)


class LedgerAway(Exception):
    """The attempt ledger (the broker) cannot be read: this pass ends."""


def state_of(ledger: Ledger, subject: str, attempt: str) -> AttemptState:
    try:
        return ledger.state(subject, attempt)
    except Exception as exc:  # noqa: BLE001 - Redis down, a file unreadable: any of it
        raise LedgerAway(str(exc)) from exc


def decide(queued: bool, claim: AttemptState, grace_s: float) -> Action:
    """The action for a stuck attempt, from the ledger's state (`queued`: the database has not
    seen it start)."""
    if claim.state is ClaimState.WORKING:
        return Action.WAIT
    if claim.state is ClaimState.REPORTED:
        reported = claim.reported_at or 0.0
        return Action.WAIT if now() - reported < grace_s else Action.NEW_ATTEMPT
    if claim.state in (ClaimState.UNCLAIMED, ClaimState.UNKNOWN) and queued:
        return Action.SEND_AGAIN
    return Action.NEW_ATTEMPT  # lost, or claimed-then-forgotten by a store that lost data


def stuck(db: Session, settings: Settings) -> list[Submission]:
    """Submissions to look at: unsent (after UNSENT_GRACE_S: the upload that stored one sends
    it a moment later, and a send of ours too would be a second copy), queued too long, or
    running without a heartbeat."""
    now_ = utcnow()
    queued_before = now_ - timedelta(seconds=settings.queued_timeout_s)
    silent_before = now_ - timedelta(seconds=settings.running_timeout_s)
    unsent_before = now_ - timedelta(seconds=UNSENT_GRACE_S)
    return list(db.scalars(select(Submission).where(or_(
        (Submission.status == Status.QUEUED) & (Submission.sent_at.is_(None))
        & (Submission.created_at < unsent_before),
        (Submission.status == Status.QUEUED) & (Submission.sent_at < queued_before),
        (Submission.status == Status.RUNNING)
        & (Submission.heartbeat_at.is_(None) | (Submission.heartbeat_at < silent_before)),
    )).order_by(Submission.id)))


def sweep(db: Session, settings: Settings) -> SweepReport:
    """One pass over stuck submissions and custom runs; old rows of the change feed go."""
    report = SweepReport()
    report.pruned_changes = feed.prune(db, utcnow() - timedelta(seconds=settings.live_keep_s))
    ledger = dispatch.ledger(settings)
    for sub in stuck(db, settings):
        try:
            sweep_one(db, sub, settings, ledger, report)
        except LedgerAway as exc:  # the broker is down: nothing can be sent either
            log.warning("sweeper: the attempt ledger is unreachable (%s); next pass", exc)
            return report
    sweep_custom_runs(db, settings, ledger, report)
    if report.retried or report.failed or report.resent:
        log.warning("sweeper: sent again %s, new attempts %s, SE %s",
                    report.resent, report.retried, report.failed)
    return report


def sweep_one(db: Session, sub: Submission, settings: Settings, ledger: Ledger,
              report: SweepReport) -> None:
    """Send, send again, start a new attempt, or leave one stuck submission."""
    if sub.status == Status.QUEUED and sub.sent_at is None:
        dispatch.send_attempt(db, sub, settings)  # the broker was down: send the same attempt again
        if sub.sent_at is not None:
            report.resent.append(sub.id)
        return
    claim = state_of(ledger, submission_subject(sub.id), attempt_name(sub.attempt, sub.job_key))
    action = decide(sub.status == Status.QUEUED, claim, settings.queued_timeout_s)
    if action is Action.WAIT:
        report.waiting.append(sub.id)
    elif action is Action.SEND_AGAIN and still_in_broker(
            ledger, submission_subject(sub.id), attempt_name(sub.attempt, sub.job_key), settings):
        report.waiting.append(sub.id)  # one message in flight per attempt
    elif action is Action.SEND_AGAIN:
        sent = sub.sent_at
        dispatch.send_attempt(db, sub, settings)
        if sub.sent_at != sent:
            report.resent.append(sub.id)
    elif record_lost(db, sub, lost_reason(sub, claim), settings):
        (report.failed if sub.status == Status.DONE else report.retried).append(sub.id)


def sweep_custom_runs(db: Session, settings: Settings, ledger: Ledger,
                      report: SweepReport) -> None:
    """Expire old runs; send unsent ones; for one sent a while ago, ask the ledger as for a
    submission (custom runs report only at the end, so a lost one is noticed after
    running_timeout_s, a waiting one re-sent after queued_timeout_s)."""
    report.expired_runs += runs.expire(db, settings)
    now_ = utcnow()
    look_before = now_ - timedelta(seconds=min(settings.running_timeout_s,
                                               settings.queued_timeout_s))
    queued_before = now_ - timedelta(seconds=settings.queued_timeout_s)
    for run in list(db.scalars(select(CustomRun).where(
            CustomRun.status.not_in([Status.DONE, quota.RESERVED]),
            CustomRun.sent_at.is_(None) | (CustomRun.sent_at < look_before)))):
        if run.sent_at is None:
            runs.send(db, run, settings)
            if run.sent_at is not None:
                report.resent_runs.append(run.id)
            continue
        try:
            claim = state_of(ledger, custom_run_subject(run.id), attempt_name(run.attempt))
        except LedgerAway as exc:
            log.warning("sweeper: the attempt ledger is unreachable (%s); next pass", exc)
            return
        sweep_run(db, run, settings, decide(True, claim, settings.queued_timeout_s),
                  run.sent_at < queued_before, report)


def sweep_run(db: Session, run: CustomRun, settings: Settings, action: Action, waited: bool,
              report: SweepReport) -> None:
    """Send a waiting run again (once it waited queued_timeout_s), or retry a lost one."""
    if action is Action.SEND_AGAIN and waited and not still_in_broker(
            dispatch.ledger(settings), custom_run_subject(run.id), attempt_name(run.attempt),
            settings):
        runs.send(db, run, settings)
        report.resent_runs.append(run.id)
    elif action is Action.NEW_ATTEMPT and run.attempt >= settings.max_attempts:
        runs.record(db, settings, run.id, run.attempt, {"error": (
            f"system error: no worker finished this run in {run.attempt} attempts")})
        report.failed_runs.append(run.id)
    elif action is Action.NEW_ATTEMPT:
        run.attempt += 1
        db.commit()
        runs.send(db, run, settings)
        report.retried_runs.append(run.id)


def still_in_broker(ledger: Ledger, subject: str, attempt: str, settings: Settings) -> bool:
    """broker_watch.in_flight, with an unreachable ledger ending the pass like state_of."""
    try:
        return in_flight(ledger, subject, attempt, settings)
    except Exception as exc:  # noqa: BLE001 - Redis down, a file unreadable: any of it
        raise LedgerAway(str(exc)) from exc


def lost_reason(sub: Submission, claim: AttemptState) -> str:
    if claim.state is ClaimState.REPORTED:
        return f"attempt {sub.attempt}: the worker's report never arrived"
    return f"attempt {sub.attempt}: the worker stopped reporting"


def start_sweeper(settings: Settings, make_session, stop: threading.Event) -> threading.Thread:
    """Run `sweep` every `sweep_interval_s` in a daemon thread until `stop` is set; prune the
    ledger's old records hourly."""

    def loop() -> None:
        pruned = now()
        while not stop.wait(settings.sweep_interval_s):
            try:
                with make_session() as db:
                    sweep(db, settings)
                if now() - pruned > PRUNE_EVERY_S:
                    pruned = now()
                    dispatch.ledger(settings).prune(LEDGER_KEEP_S)
            except Exception:  # keep sweeping: one bad pass must not end the loop
                log.exception("sweep failed")

    thread = threading.Thread(target=loop, name="flashjudge-sweeper", daemon=True)
    thread.start()
    return thread
