"""The ledger as files under the data dir, for the embedded broker (every process on one machine).

    <root>/live/<subject>              "<attempt> <key>" or "done"
    <root>/claim/<subject>.<attempt>   Claim JSON, published with link(2): fails if it exists
    <root>/alive/<subject>.<attempt>   the epoch second the alive mark expires
    <root>/sent/<subject>.<attempt>    the epoch second of the attempt's last send

Every write goes to a temporary file first and is then renamed or linked into place, so a reader
never sees half a record. Nothing expires by itself: the sweeper calls `prune`.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

from flashjudge.claims.base import AttemptState, Claim, Ledger, LiveAttempt, now, state_of


class FileLedger(Ledger):
    """Live attempts and claims as small files (made on first write, never at construction)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, kind: str, name: str) -> Path:
        return self.root / kind / name

    def _write(self, path: Path, text: str) -> Path:
        """A complete temporary file beside `path` (the caller moves it into place)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.parent / f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
        temp.write_text(text)
        return temp

    def _replace(self, path: Path, text: str) -> None:
        os.replace(self._write(path, text), path)

    def _read(self, path: Path) -> str | None:
        try:
            return path.read_text()
        except FileNotFoundError:
            return None

    def publish(self, subject: str, attempt: int, key: str = "") -> None:
        self._replace(self._path("live", subject), LiveAttempt(attempt, key).encode())

    def retire(self, subject: str) -> None:
        self._replace(self._path("live", subject), LiveAttempt(None).encode())

    def live(self, subject: str) -> LiveAttempt | None:
        text = self._read(self._path("live", subject))
        return None if text is None else LiveAttempt.decode(text)

    def claim(self, subject: str, attempt: str, owner: str) -> bool:
        path = self._path("claim", f"{subject}.{attempt}")
        temp = self._write(path, Claim(owner, now()).encode())
        try:
            os.link(temp, path)  # atomic and exclusive: EEXIST when someone holds it
            return True
        except FileExistsError:
            held = self._read(path)
            return held is not None and Claim.decode(held).owner == owner
        finally:
            temp.unlink(missing_ok=True)

    def beat(self, subject: str, attempt: str, owner: str, ttl_s: float) -> None:
        """Refresh the alive mark; re-create the claim if it went (as the Redis store does)."""
        self._replace(self._path("alive", f"{subject}.{attempt}"), repr(now() + ttl_s))
        if not self._path("claim", f"{subject}.{attempt}").exists():
            self.claim(subject, attempt, owner)

    def stop(self, subject: str, attempt: str) -> None:
        self._path("alive", f"{subject}.{attempt}").unlink(missing_ok=True)

    def reported(self, subject: str, attempt: str) -> None:
        path = self._path("claim", f"{subject}.{attempt}")
        held = self._read(path)
        if held is not None:
            claim = Claim.decode(held)
            self._replace(path, Claim(claim.owner, claim.claimed_at, now()).encode())
        self.stop(subject, attempt)

    def state(self, subject: str, attempt: str) -> AttemptState:
        held = self._read(self._path("claim", f"{subject}.{attempt}"))
        until = self._read(self._path("alive", f"{subject}.{attempt}"))
        alive = until is not None and float(until) > now()
        return state_of(None if held is None else Claim.decode(held), alive)

    def prune(self, older_than_s: float) -> int:
        """Remove records untouched for older_than_s (done subjects, old claims, dead marks)."""
        cutoff = time.time() - older_than_s
        removed = 0
        for kind in ("live", "claim", "alive", "sent"):
            folder = self.root / kind
            if not folder.is_dir():
                continue
            for path in folder.iterdir():
                with contextlib.suppress(FileNotFoundError):
                    if path.stat().st_mtime < cutoff:
                        path.unlink()
                        removed += 1
        return removed

    def mark_sent(self, subject: str, attempt: str, at: float | None = None) -> None:
        self._replace(self._path("sent", f"{subject}.{attempt}"),
                      repr(now() if at is None else at))

    def sent_at(self, keys: list[tuple[str, str]]) -> list[float | None] | None:
        texts = [self._read(self._path("sent", f"{s}.{a}")) for s, a in keys]
        return [None if t is None else float(t) for t in texts]
