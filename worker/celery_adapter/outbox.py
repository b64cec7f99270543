"""Outcomes a worker sent, kept until the control side has them: sent again when the broker
lost them, as the broker watch sends lost judge messages again (app/upkeep/broker_watch.py).

A result waits on the `control` queue until the control worker records it. If Redis goes down
without its data meanwhile (the control worker was down too), the result goes with the queue,
and so does the attempt's claim: the broker watch then saw a queued submission whose message and
claim were gone, sent it again, and it was judged a second time 140 s later. So a worker keeps
each outcome it sent (a result, a failure report, a custom run's outcome) with its claim's
owner, and at every heartbeat looks at the ledger beside the broker:

- the control side moved on (the live attempt is another, or none: a verdict is recorded):
  the outcome arrived, it is forgotten;
- the claim is gone (the broker lost its data, and the outcome with it, perhaps): the claim is
  taken again as reported (the broker watch and the sweeper then wait for the control side
  instead of judging again) and the outcome is sent again. The control side records a message
  once per attempt (app/submissions/recording.py: a second copy is stale), so a copy of one
  that did arrive changes nothing;
- otherwise it is still on its way, and kept; for `KEEP_S` at most (memory is bounded).

Kept in the worker process's memory: a worker restarted meanwhile has nothing to send again,
and the sweeper judges such an attempt again after its timeouts, as before.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from flashjudge.claims import ClaimState, Ledger, attempt_name

log = logging.getLogger(__name__)
KEEP_S = 6 * 3600.0  # longer than a control worker is ever down; then the sweeper's turn


@dataclass(frozen=True)
class Sent:
    """One outcome on its way to the control side."""

    subject: str  # the ledger's name of the submission or custom run
    attempt: int  # its attempt number
    key: str  # the attempt's random key ("" where the work has none)
    owner: str  # the claim's owner when it was judged
    resend: Callable[[], None]  # sends the same outcome again
    at: float  # monotonic seconds it was sent

    @property
    def name(self) -> str:
        return attempt_name(self.attempt, self.key)


class Outbox:
    """The outcomes this worker process sent and the control side may not have yet."""

    def __init__(self) -> None:
        self.sent: dict[tuple[str, str], Sent] = {}
        self._lock = threading.Lock()

    def keep(self, sent: Sent) -> None:
        with self._lock:
            self.sent[(sent.subject, sent.name)] = sent

    def check(self, ledger: Ledger) -> int:
        """One look at every kept outcome (see the module's doc); how many were sent again."""
        with self._lock:
            kept = list(self.sent.values())
        again = 0
        for sent in kept:
            verdict = self.look(ledger, sent)
            if verdict == "settled":
                with self._lock:
                    self.sent.pop((sent.subject, sent.name), None)
            again += verdict == "resent"
        return again

    def look(self, ledger: Ledger, sent: Sent) -> str:
        """"settled" (forget it), "resent" or "waiting"."""
        live = ledger.live(sent.subject)
        if live is not None and not live.admits(sent.attempt, sent.key):
            return "settled"
        if time.monotonic() - sent.at > KEEP_S:
            return "settled"
        if ledger.state(sent.subject, sent.name).state is not ClaimState.UNCLAIMED:
            return "waiting"
        ledger.claim(sent.subject, sent.name, sent.owner)
        ledger.reported(sent.subject, sent.name)
        sent.resend()
        log.warning("the broker lost %s attempt %s's outcome with its claim: sent again",
                    sent.subject, sent.attempt)
        return "resent"
