"""A judge worker's side of the attempt ledger (flashjudge.claims): take an attempt before
working on it, keep it alive while working, and stop as soon as the control side moved on.

Celery may deliver a message more than once (the sweeper re-sends work that waited too long, the
broker redelivers after a lost connection), so a worker never trusts a message alone: it judges
an attempt only if that attempt is still the live one and it won the claim on it. Between tests it
asks again, so an attempt the control side gave up on stops within one test. The outcomes it
sent are kept until the control side has them, and sent again if the broker lost them
(worker/celery_adapter/outbox.py), at each heartbeat.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from flashjudge.claims import Ledger, attempt_name
from worker.celery_adapter.outbox import Outbox, Sent

log = logging.getLogger(__name__)
CLAIM_RETRY_S = 20.0  # how long a worker waits for an unreachable ledger before dropping work
RETRY_PAUSE_S = 0.5


class StaleAttempt(Exception):
    """The attempt being worked on is no longer the live one: stop, and send nothing."""


@dataclass(frozen=True)
class Work:
    """One attempt of one subject, as the ledger names it."""

    subject: str  # e.g. "sub-42" (flashjudge.claims.submission_subject)
    attempt: int  # the attempt number the message carries
    key: str = ""  # the attempt's random key ("" where the work has none)

    @property
    def name(self) -> str:
        """The attempt's name in the ledger."""
        return attempt_name(self.attempt, self.key)

    def __str__(self) -> str:
        return f"{self.subject} attempt {self.attempt}"


def owner_name() -> str:
    """One claim's owner: host, pid and a random token (unique per delivery)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Claims:
    """The attempts this worker process holds (one at a time), against one ledger."""

    def __init__(self, ledger: Callable[[], Ledger], alive_ttl_s: float) -> None:
        self._ledger = ledger
        self.alive_ttl_s = alive_ttl_s  # how long a beat keeps the attempt alive
        self.current: Work | None = None  # the attempt held now, if any
        self._owners: dict[Work, str] = {}  # the owner name each won claim was taken under
        self._lock = threading.Lock()  # a beat never lands after the attempt is let go
        self.outbox = Outbox()  # outcomes sent, until the control side has them

    def refusal(self, work: Work) -> str | None:
        """None when this process now holds `work`; else why its message is to be dropped.
        Each delivery claims under a new owner name, so a second delivery to this very process
        is refused like any other (only a retry of the same claim counts as its own)."""
        owner = owner_name()
        deadline = time.monotonic() + CLAIM_RETRY_S
        while True:
            try:
                refused = self._take(work, owner)
                break
            except Exception as exc:  # noqa: BLE001 - the ledger (the broker) is away
                if time.monotonic() > deadline:
                    return f"the attempt ledger is unreachable ({exc}); the sweeper re-sends it"
                time.sleep(RETRY_PAUSE_S)
        if refused is None:
            self._owners[work] = owner
        return refused

    def _take(self, work: Work, owner: str) -> str | None:
        ledger = self._ledger()
        live = ledger.live(work.subject)
        if live is not None and not live.admits(work.attempt, work.key):
            wanted = "none (done)" if live.attempt is None else f"attempt {live.attempt}"
            return f"stale: the live attempt is {wanted}"
        if not ledger.claim(work.subject, work.name, owner):
            return "duplicate: another delivery of this attempt was already taken"
        return None

    @contextlib.contextmanager
    def holding(self, work: Work) -> Iterator[None]:
        """Hold `work` (claimed by `refusal`) for the block: beaten alive at once and at every
        heartbeat, let go on the way out whatever happens (an exception, a failed send)."""
        with self._lock:
            self.current = work
        self.beat()
        try:
            yield
        finally:
            with self._lock:
                self.current = None
                self._owners.pop(work, None)
                self._quietly(lambda ledger: ledger.stop(work.subject, work.name))

    def beat(self) -> None:
        """Heartbeat hook: keep the held attempt alive (nothing when none is held); send again
        the outcomes the broker lost."""
        with self._lock:
            work = self.current
            if work is not None:
                owner = self._owners.get(work, "")
                self._quietly(lambda ledger: ledger.beat(work.subject, work.name, owner,
                                                         self.alive_ttl_s))
        self._quietly(self.outbox.check)

    def reported(self, resend: Callable[[], None] | None = None) -> None:
        """The held attempt's outcome went out: the sweeper waits for the control side.
        `resend` sends it again: kept until the control side has it (the outbox)."""
        work = self.current
        if work is None:
            return
        self._quietly(lambda ledger: ledger.reported(work.subject, work.name))
        if resend is not None:
            self.outbox.keep(Sent(work.subject, work.attempt, work.key,
                                  self._owners.get(work, ""), resend, time.monotonic()))

    def check_live(self) -> None:
        """Between tests: raise StaleAttempt when the control side moved on (an unreachable
        ledger changes nothing: judging goes on)."""
        work = self.current
        if work is None:
            return
        try:
            live = self._ledger().live(work.subject)
        except Exception as exc:  # noqa: BLE001 - cannot tell: keep judging
            log.debug("cannot read the live attempt of %s: %s", work, exc)
            return
        if live is not None and not live.admits(work.attempt, work.key):
            raise StaleAttempt(f"{work} is no longer live")

    def _quietly(self, call: Callable[[Ledger], object]) -> None:
        try:
            call(self._ledger())
        except Exception as exc:  # noqa: BLE001 - the alive mark expires by itself anyway
            log.debug("ledger call failed: %s", exc)
