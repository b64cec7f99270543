"""The attempt ledger: which attempt of a piece of work is live, and which worker took it.

Exactly-once judging under re-sends rests on three facts kept beside the broker (Redis keys when
the broker is Redis, files under the data dir for the embedded broker), so that both the control
side and the judge workers (which hold no database credentials) can read them:

- `live(subject)`: the attempt the control side wants now, published before every send and
  retired ("done") once a verdict is recorded. A worker drops a message of any other attempt,
  before judging and between tests.
- `claim(subject, attempt)`: set-if-absent by the worker that takes an attempt, before it starts.
  A re-sent message of the same attempt finds it taken and is dropped: one judging per attempt.
- `beat` / `reported`: the claiming worker keeps the claim alive while it works (the mark expires
  by itself when the worker dies) and marks it reported once its result went out. The sweeper
  reads `state()` to tell a waiting attempt (send the same one again) from a lost one (a new one).

`ledger_for(broker_url, data_dir)` picks the store; both sides call it with the same settings.
"""

from __future__ import annotations

from pathlib import Path

from flashjudge.claims.base import (
    AttemptState,
    ClaimState,
    Ledger,
    LiveAttempt,
    NoLedger,
    attempt_name,
    custom_run_subject,
    now,
    submission_subject,
)
from flashjudge.claims.file_ledger import FileLedger
from flashjudge.claims.redis_ledger import RedisLedger

__all__ = [
    "AttemptState", "ClaimState", "attempt_name", "FileLedger", "Ledger", "LiveAttempt", "NoLedger",
    "RedisLedger", "custom_run_subject", "ledger_for", "now", "submission_subject",
]
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def ledger_for(broker_url: str | None, data_dir: Path) -> Ledger:
    """The ledger beside this broker: Redis keys on a Redis broker, files under data_dir/claims
    for the embedded broker (one machine), none for other brokers (then re-sends may judge an
    attempt twice, and the recording side's attempt check is the only guard)."""
    if broker_url is None:
        return FileLedger(data_dir / "claims")
    if broker_url.startswith(REDIS_SCHEMES):
        return RedisLedger(broker_url)
    return NoLedger()
