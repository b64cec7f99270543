"""The ledger as Redis keys, beside a Redis broker (every worker already reaches it).

    flashjudge:live:<subject>             "<attempt> <key>" or "done"
    flashjudge:claim:<subject>:<attempt>  Claim JSON, created with SET NX (one taker per attempt)
    flashjudge:alive:<subject>:<attempt>  present while the taker beats (PX expiry)
    flashjudge:sent:<subject>:<attempt>   epoch seconds of the last send (gone with the queues)

The client is made on first use (never at import) with short socket timeouts, so a Redis that is
away makes a call raise within seconds instead of hanging a judging.
"""

from __future__ import annotations

from typing import Any

import redis

from flashjudge.claims.base import (
    CLAIM_TTL_S,
    LIVE_TTL_S,
    AttemptState,
    Claim,
    Ledger,
    LiveAttempt,
    now,
    state_of,
)

PREFIX = "flashjudge:"
TIMEOUT_S = 5.0


def live_key(subject: str) -> str:
    return f"{PREFIX}live:{subject}"


def claim_key(subject: str, attempt: str) -> str:
    return f"{PREFIX}claim:{subject}:{attempt}"


def alive_key(subject: str, attempt: str) -> str:
    return f"{PREFIX}alive:{subject}:{attempt}"


def sent_key(subject: str, attempt: str) -> str:
    return f"{PREFIX}sent:{subject}:{attempt}"


class RedisLedger(Ledger):
    """Live attempts and claims in the broker's Redis database."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = redis.Redis.from_url(self.url, socket_timeout=TIMEOUT_S,
                                                socket_connect_timeout=TIMEOUT_S,
                                                decode_responses=True)
        return self._client

    def publish(self, subject: str, attempt: int, key: str = "") -> None:
        self.client.set(live_key(subject), LiveAttempt(attempt, key).encode(), ex=LIVE_TTL_S)

    def retire(self, subject: str) -> None:
        self.client.set(live_key(subject), LiveAttempt(None).encode(), ex=CLAIM_TTL_S)

    def live(self, subject: str) -> LiveAttempt | None:
        text = self.client.get(live_key(subject))
        return None if text is None else LiveAttempt.decode(text)

    def claim(self, subject: str, attempt: str, owner: str) -> bool:
        key = claim_key(subject, attempt)
        if self.client.set(key, Claim(owner, now()).encode(), nx=True, ex=CLAIM_TTL_S):
            return True
        held = self.client.get(key)  # our own claim whose reply was lost counts as ours
        return held is not None and Claim.decode(held).owner == owner

    def beat(self, subject: str, attempt: str, owner: str, ttl_s: float) -> None:
        """Refresh the alive mark; re-create the claim if Redis lost it (a restart without
        persistence), so a copy of the message cannot be taken meanwhile."""
        pipe = self.client.pipeline(transaction=False)
        pipe.set(alive_key(subject, attempt), owner, px=max(1, int(ttl_s * 1000)))
        pipe.set(claim_key(subject, attempt), Claim(owner, now()).encode(), nx=True,
                 ex=CLAIM_TTL_S)
        pipe.execute()

    def stop(self, subject: str, attempt: str) -> None:
        self.client.delete(alive_key(subject, attempt))

    def reported(self, subject: str, attempt: str) -> None:
        key = claim_key(subject, attempt)
        held = self.client.get(key)
        if held is not None:
            claim = Claim.decode(held)
            done = Claim(claim.owner, claim.claimed_at, now())
            self.client.set(key, done.encode(), xx=True, keepttl=True)
        self.client.delete(alive_key(subject, attempt))

    def state(self, subject: str, attempt: str) -> AttemptState:
        pipe = self.client.pipeline(transaction=False)
        pipe.get(claim_key(subject, attempt))
        pipe.exists(alive_key(subject, attempt))
        held, alive = pipe.execute()
        return state_of(None if held is None else Claim.decode(held), bool(alive))

    def mark_sent(self, subject: str, attempt: str, at: float | None = None) -> None:
        self.client.set(sent_key(subject, attempt), repr(now() if at is None else at),
                        ex=CLAIM_TTL_S)

    def sent_at(self, keys: list[tuple[str, str]]) -> list[float | None] | None:
        if not keys:
            return []
        values = self.client.mget([sent_key(s, a) for s, a in keys])
        return [None if v is None else float(v) for v in values]
