"""Messages lost with the broker: noticed within seconds, sent again once, shown while it lasts.

Every send is marked beside the broker right after it (app/submissions/dispatch.py `mark_sent`: a
Redis key next to the queues, a file next to the embedded broker's). A Redis restarted without
its data has lost the queued messages and their marks together: the database still said "queued"
and the queue was empty, and the sweeper re-sent them only after `queued_timeout_s` (42
submissions waited 6 minutes, silently). Every `broker_check_s` this watch reads the marks of
the database's queued attempts; one whose mark is gone is lost. A worker may be judging it all
the same (its claim went with the data and comes back with its next heartbeat), so it is sent
again only after `broker_loss_wait_s` (longer than a worker's heartbeat_s) and only if still
unclaimed: the same attempt, so a copy that meets a claim is dropped and each is judged once.
The loss is kept in the state table: /readyz and the TA page say "broker lost N queued
message(s) at HH:MM UTC; re-sent" for NOTICE_S (and /readyz is not ready until they are
re-sent).

The sweeper leaves a queued attempt alone while its mark is younger than `in_flight_s`: one
message in flight per attempt, however short `queued_timeout_s` is.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.custom_runs import runs
from app.db.models import CustomRun, KeyValue, Submission, utcnow
from app.submissions import dispatch
from flashjudge.claims import (
    ClaimState,
    Ledger,
    attempt_name,
    custom_run_subject,
    submission_subject,
)
from flashjudge.contract import Status

log = logging.getLogger(__name__)
SEND_GRACE_S = 2.0  # the mark follows its send: a send this recent may not have one yet
IN_FLIGHT_MIN_S = 900.0  # a marked send counts as in the broker at least this long
NOTICE_S = 600.0  # how long the TA page and /readyz mention a loss once it is re-sent
LOSS_KEY = "broker_loss"  # KeyValue: {"n": count, "at": ISO time, "resent": bool}


@dataclass(frozen=True)
class Waiting:
    """One queued attempt the broker should hold, and how to send it again."""

    subject: str  # the ledger's name of the submission or custom run
    attempt: str  # the ledger's name of its live attempt
    send: Callable[[], None]  # sends the same attempt again (and marks it)


@dataclass(frozen=True)
class LossNotice:
    """What the TA page and /readyz say about the last loss."""

    count: int  # queued messages the broker lost
    at: datetime  # when the loss was noticed (naive UTC)
    resent: bool  # all sent again

    def text(self) -> str:
        then = "re-sent" if self.resent else "re-sending them once no worker holds them"
        return f"broker lost {self.count} queued message(s) at {self.at:%H:%M} UTC; {then}"


def in_flight_s(settings: Settings) -> float:
    return max(settings.queued_timeout_s, IN_FLIGHT_MIN_S)


def in_flight(ledger: Ledger, subject: str, attempt: str, settings: Settings) -> bool:
    """Whether the attempt's last message is still in the broker, for the sweeper: its mark is
    younger than `in_flight_s`. A missing mark is this watch's to re-send where it runs (else the
    sweeper's); a store that cannot tell says no (re-sent after queued_timeout_s, as before)."""
    marks = ledger.sent_at([(subject, attempt)])
    if marks is None:
        return False
    if marks[0] is None:
        return watching(settings)
    return time.time() - marks[0] < in_flight_s(settings)


def watching(settings: Settings) -> bool:
    """Whether this process runs the watch (it starts with the sweeper's thread)."""
    return settings.sweep_interval_s > 0 and settings.broker_check_s > 0


def waiting_work(db: Session, settings: Settings) -> list[Waiting]:
    """Queued submissions and custom runs sent more than a moment ago."""
    before = utcnow() - timedelta(seconds=SEND_GRACE_S)
    subs = db.scalars(select(Submission).where(Submission.status == Status.QUEUED,
                                               Submission.sent_at < before))
    custom = db.scalars(select(CustomRun).where(CustomRun.status == Status.QUEUED,
                                                CustomRun.sent_at < before))
    return [*(Waiting(submission_subject(s.id), attempt_name(s.attempt, s.job_key),
                      partial(dispatch.send_attempt, db, s, settings)) for s in subs),
            *(Waiting(custom_run_subject(r.id), attempt_name(r.attempt),
                      partial(runs.send, db, r, settings)) for r in custom)]


class BrokerWatch:
    """The check, with the time each lost send was first seen missing (per process)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.missing: dict[tuple[str, str], float] = {}  # (subject, attempt) -> first seen

    def check(self, db: Session) -> int:
        """One look: note lost sends, re-send those missing long enough; how many were sent."""
        ledger = dispatch.ledger(self.settings)
        work = waiting_work(db, self.settings)
        marks = ledger.sent_at([(w.subject, w.attempt) for w in work])
        if marks is None:
            return 0
        lost = {(w.subject, w.attempt): w for w, mark in zip(work, marks, strict=True)
                if mark is None}
        now = time.time()
        self.missing = {key: self.missing.get(key, now) for key in lost}
        if lost:
            note_loss(db, len(lost), resent=False)
        due = [w for key, w in lost.items()
               if now - self.missing[key] >= self.settings.broker_loss_wait_s]
        sent = sum(self.resend(ledger, w) for w in due)
        if due and len(due) == len(lost):
            note_loss(db, 0, resent=True)
            log.warning("broker watch: %d lost message(s) sent again", sent)
        return sent

    def resend(self, ledger: Ledger, work: Waiting) -> bool:
        """Send a lost attempt again if no worker holds it (else mark it: it is in hand)."""
        self.missing.pop((work.subject, work.attempt), None)
        if ledger.state(work.subject, work.attempt).state is not ClaimState.UNCLAIMED:
            ledger.mark_sent(work.subject, work.attempt)
            return False
        if ledger.sent_at([(work.subject, work.attempt)]) != [None]:
            return False  # another API process sent it meanwhile
        work.send()
        return True


def note_loss(db: Session, count: int, resent: bool) -> None:
    """Keep the last loss for the TA page and /readyz: an open one is created or grows to
    `count`; `resent` closes it."""
    notice = loss_notice(db, max_age_s=None)
    if notice is None or notice.resent:  # none open
        if not resent:
            save_notice(db, LossNotice(count, utcnow(), False))
    elif resent:
        save_notice(db, LossNotice(notice.count, notice.at, True))
    elif count > notice.count:
        save_notice(db, LossNotice(count, notice.at, False))


def save_notice(db: Session, notice: LossNotice) -> None:
    value = json.dumps({"n": notice.count, "at": notice.at.isoformat(), "resent": notice.resent})
    db.merge(KeyValue(key=LOSS_KEY, value=value))
    db.commit()


def loss_notice(db: Session, max_age_s: float | None = NOTICE_S) -> LossNotice | None:
    """The last loss: open, or re-sent less than `max_age_s` ago (None: nothing to say)."""
    row = db.get(KeyValue, LOSS_KEY)
    if row is None:
        return None
    data = json.loads(row.value)
    notice = LossNotice(int(data["n"]), datetime.fromisoformat(data["at"]), bool(data["resent"]))
    if max_age_s is not None and notice.resent and \
            (utcnow() - notice.at).total_seconds() > max_age_s:
        return None
    return notice


def start_broker_watch(settings: Settings, make_session, stop: threading.Event  # noqa: ANN001
                       ) -> threading.Thread:
    """Run `BrokerWatch.check` every `broker_check_s` in a daemon thread until `stop` is set."""
    watch = BrokerWatch(settings)

    def loop() -> None:
        while not stop.wait(settings.broker_check_s):
            try:
                with make_session() as db:
                    watch.check(db)
            except Exception:  # keep watching: the broker may be down right now
                log.exception("broker watch failed")

    thread = threading.Thread(target=loop, name="flashjudge-broker-watch", daemon=True)
    thread.start()
    return thread
