"""The ledger's vocabulary and interface, shared by its stores (Redis keys, files)."""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from enum import StrEnum

CLAIM_TTL_S = 7 * 24 * 3600  # a claim outlives any re-sent or redelivered copy of its message
LIVE_TTL_S = 30 * 24 * 3600  # what is live for a subject is forgotten after this (Redis only)
DONE = "done"  # the live value of a subject whose verdict is recorded


def submission_subject(submission_id: int) -> str:
    """The ledger's name for a submission's judgings."""
    return f"sub-{submission_id}"


def custom_run_subject(run_id: int) -> str:
    """The ledger's name for a custom run's reference computations."""
    return f"run-{run_id}"


def attempt_name(attempt: int, key: str = "") -> str:
    """The ledger's name for one attempt: its number and random key, so that a reused id (a
    restored database) never meets an old claim."""
    return f"{attempt}-{key}" if key else str(attempt)


class ClaimState(StrEnum):
    """What the ledger knows of one attempt."""

    UNCLAIMED = "unclaimed"  # no worker took it: still waiting in a queue, or its message is lost
    WORKING = "working"  # a worker took it and its heartbeat is fresh
    REPORTED = "reported"  # a worker took it and sent its outcome (the control side may be behind)
    LOST = "lost"  # a worker took it, stopped beating and reported nothing: it died
    UNKNOWN = "unknown"  # this broker has no ledger


@dataclass(frozen=True)
class AttemptState:
    """One attempt's state, with the time of its last report (for REPORTED)."""

    state: ClaimState  # see ClaimState
    reported_at: float | None = None  # epoch seconds the outcome was sent, if it was


@dataclass(frozen=True)
class LiveAttempt:
    """The attempt the control side wants judged now (attempt None: the subject is done)."""

    attempt: int | None  # the live attempt; None once a verdict is recorded
    key: str = ""  # its random key ("" where the work has none)

    def admits(self, attempt: int, key: str) -> bool:
        """Whether a message for (attempt, key) is still wanted."""
        return self.attempt == attempt and (not key or not self.key or key == self.key)

    def encode(self) -> str:
        return DONE if self.attempt is None else f"{self.attempt} {self.key}".strip()

    @classmethod
    def decode(cls, text: str) -> LiveAttempt:
        if text.strip() == DONE:
            return cls(None)
        attempt, _, key = text.strip().partition(" ")
        return cls(int(attempt), key)


@dataclass(frozen=True)
class Claim:
    """Who took an attempt and what became of it (stored as JSON)."""

    owner: str  # "host:pid:token" of the worker process that took it
    claimed_at: float  # epoch seconds
    reported_at: float | None = None  # epoch seconds its outcome was sent, None until then

    def encode(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def decode(cls, text: str) -> Claim:
        data = json.loads(text)
        return cls(str(data["owner"]), float(data["claimed_at"]), data.get("reported_at"))


def state_of(claim: Claim | None, alive: bool) -> AttemptState:
    """The attempt's state from its claim and whether its alive mark is fresh."""
    if claim is None:
        return AttemptState(ClaimState.UNCLAIMED)
    if claim.reported_at is not None:
        return AttemptState(ClaimState.REPORTED, claim.reported_at)
    return AttemptState(ClaimState.WORKING if alive else ClaimState.LOST)


class Ledger(ABC):
    """One store of live attempts and claims. Per-attempt methods take the attempt's name
    (`attempt_name`). Every method may raise when the store is away (Redis down): callers decide
    what that means for them."""

    @abstractmethod
    def publish(self, subject: str, attempt: int, key: str = "") -> None:
        """Control side, before every send: (attempt, key) is the one wanted now."""

    @abstractmethod
    def retire(self, subject: str) -> None:
        """Control side, once a verdict is recorded: no attempt of subject is wanted any more."""

    @abstractmethod
    def live(self, subject: str) -> LiveAttempt | None:
        """The live attempt, or None when nothing was published (then nobody can tell)."""

    @abstractmethod
    def claim(self, subject: str, attempt: str, owner: str) -> bool:
        """Worker side: take the attempt if no one has; True when `owner` holds it now."""

    @abstractmethod
    def beat(self, subject: str, attempt: str, owner: str, ttl_s: float) -> None:
        """Worker side: `owner` still works on the attempt, for ttl_s more seconds."""

    @abstractmethod
    def stop(self, subject: str, attempt: str) -> None:
        """Worker side: no longer working on the attempt (the alive mark goes at once)."""

    @abstractmethod
    def reported(self, subject: str, attempt: str) -> None:
        """Worker side: the attempt's outcome was sent to the control side."""

    @abstractmethod
    def state(self, subject: str, attempt: str) -> AttemptState:
        """Sweeper side: what became of the attempt."""

    def prune(self, older_than_s: float) -> int:
        """Forget records older than this (stores without expiry); how many went."""
        del older_than_s
        return 0

    def mark_sent(self, subject: str, attempt: str, at: float | None = None) -> None:
        """Control side, after each send: a message of the attempt is in the broker. The mark
        lives where the messages do, so it is gone whenever they are (a Redis restart without
        its data): then the send is known lost (app/upkeep/broker_watch.py)."""
        del subject, attempt, at

    def sent_at(self, keys: list[tuple[str, str]]) -> list[float | None] | None:
        """For each (subject, attempt): when its last send was marked (None: no mark, the
        message is lost). None for the whole list when this store cannot tell."""
        del keys
        return None


class NoLedger(Ledger):
    """For brokers without a ledger: every claim is granted and nothing is known."""

    def publish(self, subject: str, attempt: int, key: str = "") -> None:
        pass

    def retire(self, subject: str) -> None:
        pass

    def live(self, subject: str) -> LiveAttempt | None:
        return None

    def claim(self, subject: str, attempt: str, owner: str) -> bool:
        return True

    def beat(self, subject: str, attempt: str, owner: str, ttl_s: float) -> None:
        pass

    def stop(self, subject: str, attempt: str) -> None:
        pass

    def reported(self, subject: str, attempt: str) -> None:
        pass

    def state(self, subject: str, attempt: str) -> AttemptState:
        return AttemptState(ClaimState.UNKNOWN)


def now() -> float:
    """Epoch seconds (claims are compared across processes, so wall-clock time)."""
    return time.time()
