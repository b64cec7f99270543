"""The node's driver gate: one GPU process of the node inside CUDA's start-up or teardown at once.

The CUDA driver serializes a process's start-up (cuInit, the context) and its teardown (the
context destroyed, the process's driver state released at exit) across every GPU of a host:
measured on 4x H100 (docs/kernel-timing.md, "A time that belongs to the program"), a probe's
start-up and teardown took 0.46 s alone, 0.78 s while one other GPU started and stopped CUDA
processes in a loop, 1.52 s beside three. A whole hw4 program is mostly that, so its time
carried whatever the node's other GPUs were doing.

So every GPU process a worker starts passes through this gate, a lock over flock(2) on a file in
the node's data directory (every worker of the node shares it; the kernel drops a dead holder's
lock), twice, by what the judge's CUDA injection (worker/harness/census_inject.c; the Triton
runner says the same itself) says on the run's gate socket:

- 'I' when cuInit begins (the driver has loaded the injection, before any device work): the
  worker freezes the run's cgroup, takes the gate, thaws it and answers 'G'; the gate is the
  run's until it says 'S' (its first context exists), or `startup_bound_s` at most.
- 'T' when its teardown begins (the first context destroyed, or exit), after the GPU's work is
  done: frozen again until the gate is the run's, then 'G'; it keeps the gate until it exits,
  or `teardown_bound_s` at most.

The frozen time is taken off the run's wall time and its limit (`GateReport.frozen_s`), so a
program's figure holds its own start-up and teardown, alone on the node, and nothing of anyone
else's. What a process says is a claim, never trusted beyond ordering: one that says nothing is
timed as before (ungated); one that says 'I' early stands frozen with no GPU context, so nothing
of it runs; one that says 'T' early gains at most GPU work left running past the injection's
synchronize, during one wait, only while another process held the gate (paired rounds hold the
node alone and see none of that).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

INIT = b"I"  # cuInit begins; the process waits for GO
STARTED = b"S"  # its first context exists: start-up is over
TEARDOWN = b"T"  # its teardown begins; it waits for GO
GO = b"G"  # the gate is the process's: it may go on
GATE_FD_ENV = "FLASHJUDGE_GATE_FD"  # the socket's number inside the sandbox


class Freezer:
    """Stops and resumes every process of one run (its cgroup's freezer); both return success."""

    def __init__(self, freeze: Callable[[], bool], thaw: Callable[[], bool]) -> None:
        self.freeze, self.thaw = freeze, thaw


@dataclass(frozen=True)
class DriverGate:
    """The gate of the node whose workers share `directory`."""

    directory: Path
    startup_bound_s: float = 2.0  # the most a start-up holds the gate without saying it is over
    teardown_bound_s: float = 1.0  # the most a teardown holds it

    def session(self, freezer: Freezer | None) -> GateSession:
        """A run's passage through the gate (one per sandboxed GPU run)."""
        return GateSession(self, freezer)

    def lock_path(self) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        return self.directory / "driver.gate"


@dataclass
class GateReport:
    """What the gate did for one run (kept with the run's result)."""

    startup_wait_s: float = 0.0  # stood frozen at cuInit until the gate was the run's
    teardown_wait_s: float = 0.0  # stood frozen at its teardown until the gate was the run's
    said: list[str] = field(default_factory=list)  # what the process said, in order
    notes: list[str] = field(default_factory=list)  # anything unusual, in words

    @property
    def frozen_s(self) -> float:
        """Off the run's clock: both waits."""
        return self.startup_wait_s + self.teardown_wait_s


class GateSession:
    """One run through the gate: `serve` once the process runs, `leave` after it exited.
    `child_fd` goes into the sandbox (its number in GATE_FD_ENV)."""

    def __init__(self, gate: DriverGate, freezer: Freezer | None) -> None:
        self.gate, self.freezer = gate, freezer
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.ours = ours
        self.child_fd = theirs.detach()
        os.set_inheritable(self.child_fd, True)
        self.report = GateReport()
        self._held: int | None = None
        self._closed = False  # the run is over: nothing is taken any more
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._frozen_since: float | None = None  # a wait in progress

    def serve(self) -> None:
        """Answer the process from a thread while it runs (the child's end is closed here)."""
        os.close(self.child_fd)
        self._thread = threading.Thread(target=self._serve, name="driver-gate", daemon=True)
        self._thread.start()

    def frozen_s(self) -> float:
        """Seconds the process stood frozen by the gate so far, a wait in progress too."""
        since = self._frozen_since
        return self.report.frozen_s + (time.monotonic() - since if since else 0.0)

    def leave(self) -> GateReport:
        """The process has exited: give the gate back, stop serving, close the socket."""
        with self._lock:
            self._closed = True
        with contextlib.suppress(OSError):  # wakes the serving thread with end of stream
            self.ours.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.ours.close()
        self._give_back()
        return self.report

    def abandon(self) -> None:
        """The process never started: give everything back."""
        self._closed = True
        os.close(self.child_fd)
        self.ours.close()

    def _serve(self) -> None:
        phase, deadline = "before", float("inf")
        while True:
            byte = self._read(max(0.0, deadline - time.monotonic()))
            if byte == b"":
                return  # the process and everything it started are gone
            if byte is None:  # a bound passed with the gate still held
                self.report.notes.append(f"the gate was taken back at the {phase}'s bound")
                self._give_back()
                phase, deadline = "after " + phase, float("inf")
                continue
            self.report.said.append(byte.decode(errors="replace"))
            if byte == INIT and phase == "before":
                self.report.startup_wait_s = self._wait_frozen("start-up")
                phase, deadline = "start-up", time.monotonic() + self.gate.startup_bound_s
            elif byte == STARTED and phase == "start-up":
                self._give_back()
                phase, deadline = "running", float("inf")
            elif byte == TEARDOWN and phase in ("before", "start-up", "running",
                                                 "after start-up"):
                self.report.teardown_wait_s = self._wait_frozen("teardown")
                phase, deadline = "teardown", time.monotonic() + self.gate.teardown_bound_s

    def _read(self, timeout: float) -> bytes | None:
        """One byte from the process; b"" at end of stream; None when `timeout` passed."""
        try:
            ready, _, _ = select.select([self.ours], [], [], min(timeout, 3600.0))
            return self.ours.recv(1) if ready else None
        except OSError:
            return b""

    def _wait_frozen(self, what: str) -> float:
        """Take the gate and answer GO. A free gate is taken at once; otherwise the run waits
        frozen, and the seconds from its asking to GO are off its clock (none when it could not
        be frozen: then the wait is in its time, and said so)."""
        asked = time.monotonic()
        if self._try_take():
            self._go()
            return 0.0
        frozen = self.freezer is not None and self.freezer.freeze()
        if frozen:
            self._frozen_since = asked
        self._take()
        off_clock = 0.0
        if frozen and self.freezer is not None:
            if not self.freezer.thaw():
                self.report.notes.append(f"could not thaw the run after its {what} wait")
            off_clock = time.monotonic() - asked
            self._frozen_since = None
        else:
            waited = time.monotonic() - asked
            self.report.notes.append(f"waited {waited:.3f} s at {what} unfrozen (counted)")
        self._go()
        return off_clock

    def _go(self) -> None:
        with contextlib.suppress(OSError):
            self.ours.send(GO)

    def _try_take(self) -> bool:
        """Take the gate if nobody holds it; False (nothing taken) otherwise."""
        fd = os.open(self.gate.lock_path(), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        with self._lock:
            if self._closed or self._held is not None:
                os.close(fd)
            else:
                self._held = fd
        return True

    def _take(self) -> None:
        if self._held is not None:
            return
        fd = os.open(self.gate.lock_path(), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # never under self._lock: leave() must not wait for it
        with self._lock:
            if self._closed or self._held is not None:
                os.close(fd)
            else:
                self._held = fd

    def _give_back(self) -> None:
        with self._lock:
            if self._held is not None:
                os.close(self._held)  # closing the descriptor drops the lock
                self._held = None
