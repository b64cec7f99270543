"""The node's timing lock: a paired round runs with the rest of the node quiet.

CUDA start-up, most of a whole-program test, does not scale across the GPUs of one host: on
2x H100 a 0.19 s run took 0.34 s while the other GPU's worker was starting CUDA processes too,
and paired rounds next to a busy GPU were noisier and once ordered two copies of one program
(docs/benchmarks.md, "Paired runs next to a busy GPU"). A paired comparison exists to settle
what the noise could not, so each of its rounds holds this lock alone, and the node's other
test runs hold it shared (a verdict pass once for all its tests, so a judging waits for at
most one round; a refinement run by run): a round waits for what is in flight, then the rest
of the node waits for the round.

A readers-writer lock over flock(2) on two files in the node's data directory, which every
worker of `flashjudge worker --gpus all` (and of `serve`) shares: the kernel drops a dead
process's locks, so nothing can stay locked. A writer takes the turnstile first and keeps it
until it has the room, and readers pass the turnstile on their way in, so a stream of test
runs on the other GPUs cannot keep a round out. Within the process that holds the room alone,
a shared hold is a no-op: a round's own runs go through the same test runner.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_alone = threading.local()  # .held: this thread holds its node alone


class NodeLock:
    """The lock of the node whose workers share `directory` (created on first use)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def __repr__(self) -> str:
        return f"NodeLock({str(self.directory)!r})"

    @contextmanager
    def alone(self) -> Iterator[None]:
        """Hold the node alone (a paired round): no other test run of the node meanwhile."""
        if held_alone():
            yield
            return
        with self._locked("turnstile", fcntl.LOCK_EX):
            room = self._open("room")
            fcntl.flock(room, fcntl.LOCK_EX)
        _alone.held = True
        try:
            yield
        finally:
            _alone.held = False
            os.close(room)  # closing the descriptor drops its lock

    @contextmanager
    def shared(self) -> Iterator[None]:
        """Hold the node with the other test runs (one test run); waits for a round."""
        if held_alone():
            yield
            return
        with self._locked("turnstile", fcntl.LOCK_EX):
            pass  # a writer waiting for the room keeps the turnstile: new runs queue here
        with self._locked("room", fcntl.LOCK_SH):
            yield

    @contextmanager
    def _locked(self, name: str, mode: int) -> Iterator[None]:
        fd = self._open(name)
        try:
            fcntl.flock(fd, mode)
            yield
        finally:
            os.close(fd)

    def _open(self, name: str) -> int:
        self.directory.mkdir(parents=True, exist_ok=True)
        return os.open(self.directory / f"timing.{name}", os.O_RDWR | os.O_CREAT, 0o600)


def held_alone() -> bool:
    """Whether this thread holds its node alone (inside NodeLock.alone)."""
    return bool(getattr(_alone, "held", False))
