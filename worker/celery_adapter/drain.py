"""A judge worker process's way out: finish the judging it holds if it can, else hand it back.

A worker in a Slurm job must be gone before the job's time limit, and the judging it holds must
be judged exactly once, by someone. Three things end a worker process's work early:

- the drain: `flashjudge worker` (the supervisor) got Slurm's warning (`--signal=B:TERM@600`,
  or an admin's `scancel --batch --signal=TERM`), or its own clock says the limit is
  FLASHJUDGE_SLURM_DRAIN_S away. It creates the drain file and asks Celery for a warm shutdown:
  no new message is taken, and the judging in hand goes on;
- the deadline: the job's limit is nearer than FLASHJUDGE_SLURM_HANDBACK_S. The judging in hand
  could be cut by the kill, so it is handed back now;
- the stop: SIGTERM reached this very process. Slurm sends it to every process of the job (a
  plain `scancel`, or the time limit itself), so the program being judged got it too: what the
  judging measures from now on is wrong, and it is handed back at once, inside KillWait.

Handing back sends `flashjudge.record_handback` for the attempt (the control side starts a new
attempt at once, counted as nothing) and marks the claim reported, so the sweeper leaves it to
the control side. A lock makes the result and the hand-back exclusive: whichever comes first
wins, and the judging stops at its next check (StaleAttempt) without sending anything. A message
that arrives when its judging could not finish here is put back on its queue unclaimed.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from flashjudge.contract import Attempt
from worker.slurm_job import SlurmJob

log = logging.getLogger(__name__)
HandBack = Callable[[Attempt, str], None]  # (the attempt, why) -> sent to the control side
WATCH_S = 2.0  # how often the watch thread looks for the drain file
STOPPED = "SIGTERM reached the judge (scancel, or the job's time limit): its programs were stopped"


class Drain:
    """One worker process's drain: what it holds, whether it may go on, the hand-back."""

    def __init__(self, read_job: Callable[[], SlurmJob | None], handback_s: float,
                 drain_file: Path | None, hand_back: HandBack,
                 clock: Callable[[], float] = time.time) -> None:
        self._read_job = read_job
        self.job = read_job()  # the Slurm job this process lives in (None outside Slurm)
        self._handback_s = handback_s
        self._drain_file = drain_file
        self._hand_back = hand_back
        self._clock = clock
        self._lock = threading.Lock()  # the result and the hand-back: one of them, once
        self._held: Attempt | None = None  # the judging in hand
        self._settled: Attempt | None = None  # the held attempt's outcome went (result or back)
        self._handed_back: set[Attempt] = set()
        self._stopped = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._drain_seen = False  # the drain began and the job's end was read again

    # --- why this process must not go on ---------------------------------------------------
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def draining(self) -> bool:
        """The supervisor drains this worker (or a stop reached it)."""
        return self.stopped() or (self._drain_file is not None and self._drain_file.exists())

    def seconds_left(self) -> float | None:
        return None if self.job is None else self.job.seconds_left(self._clock())

    def why_not_go_on(self) -> str | None:
        """Why the judging in hand must be handed back now (None: it may go on)."""
        if self.stopped():
            return STOPPED
        left = self.seconds_left()
        if left is not None and left < self._handback_s:
            assert self.job is not None
            return (f"Slurm job {self.job.job_id} ends in {left:.0f} s, under the "
                    f"{self._handback_s:.0f} s a judging is given to finish")
        return None

    def why_not_start(self) -> str | None:
        """Why a message that just came is put back unjudged (None: judge it)."""
        if self.draining():
            return "this worker is draining"
        return self.why_not_go_on()

    def state(self) -> str:
        """The heartbeat's state: "" while it takes work, else what it does instead."""
        if not self.draining():
            return ""
        left = self.seconds_left()
        ends = f", its Slurm job ends in {left:.0f} s" if left is not None else ""
        held = f": finishing submission {self._held.submission_id}" if self._held else ""
        return f"draining{ends}{held}"

    # --- the judging in hand -------------------------------------------------------------
    @contextlib.contextmanager
    def holding(self, attempt: Attempt) -> Iterator[None]:
        """Hold `attempt` for the block, SIGTERM caught meanwhile. Only meanwhile: billiard sets
        its own handler in a pool process after Celery's start-up signals, and an idle pool
        process may die of SIGTERM as it always did."""
        with self._lock:
            self._held, self._settled = attempt, None
        caught = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, self.on_sigterm) if caught else None
        self._wake.set()
        try:
            yield
        finally:
            if caught:
                signal.signal(signal.SIGTERM, previous)
            with self._lock:
                self._held = None

    def handed_back(self, attempt: Attempt) -> bool:
        return attempt in self._handed_back

    def may_report(self, attempt: Attempt) -> bool:
        """Just before a judging's outcome is sent: True (and no hand-back can follow) unless it
        was handed back, or a stop came (then it is handed back here, and False)."""
        with self._lock:
            if attempt in self._handed_back:
                return False
            if self.stopped():
                self._give_back(attempt, STOPPED)
                return False
            self._settled = attempt
            return True

    # --- what wakes it -------------------------------------------------------------------
    def on_sigterm(self, _signum: int, _frame: object) -> None:
        """Signal handler: note the stop; the watch thread hands back (no lock taken here)."""
        self._stopped.set()
        self._wake.set()

    def start(self) -> None:
        """Watch the clock and the drain file, in this process."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, daemon=True, name="drain")
            self._thread.start()

    def _watch(self) -> None:
        while True:
            self._wake.wait(self._until_due())
            self._wake.clear()
            self.check_now()

    def _until_due(self) -> float | None:
        """Until the hand-back is due, looking at the drain file every WATCH_S till it shows."""
        left = self.seconds_left()
        due = None if left is None else max(1.0, left - self._handback_s)
        if self._drain_file is None or self._drain_seen:
            return due
        return WATCH_S if due is None else min(due, WATCH_S)

    def _read_end_again(self) -> None:
        """Once the drain begins, read the job's end again: the warning may say that an admin
        moved the limit since this process started."""
        if self.job is not None and not self._drain_seen and self.draining():
            self._drain_seen = True
            again = self._read_job()
            if again is not None and again.end_time is not None:  # a job slurmctld no longer
                self.job = again  # lists with an end (cancelled, ending) keeps the end it had

    def check_now(self) -> None:
        """Hand the judging in hand back if it may not go on (the watch thread calls it)."""
        self._read_end_again()
        reason = self.why_not_go_on()
        if reason is None:
            return
        with self._lock:
            held = self._held
            if held is not None and self._settled != held and held not in self._handed_back:
                self._give_back(held, reason)

    def _give_back(self, attempt: Attempt, reason: str) -> None:
        """Under the lock: send the hand-back (once per attempt)."""
        self._handed_back.add(attempt)
        try:
            self._hand_back(attempt, reason)
            log.warning("handed attempt %s of submission %s back: %s", attempt.attempt,
                        attempt.submission_id, reason)
        except Exception as exc:  # noqa: BLE001 - then the sweeper finds the judging lost
            log.error("could not hand attempt %s back (%s): %s", attempt.attempt, reason, exc)
