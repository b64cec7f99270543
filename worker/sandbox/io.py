"""Moving bytes across the sandbox wall safely: bounded log tails, and reading outputs without
following a link the submission planted."""

from __future__ import annotations

import os
import selectors
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from worker.sandbox.stamped import receive


class Tail:
    """The last `limit` bytes of a stream, however much was written (10 GB stays bounded)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk[-self.limit :] if self.limit else b""
        if len(self.data) > self.limit:
            del self.data[: len(self.data) - self.limit]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.data)

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


class Stamped(Tail):
    """Records from a stamped channel (worker/sandbox/stamped.py): when the first and the last
    were written, on the monotonic clock, however late they are read."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.first_at: float | None = None
        self.last_at: float | None = None

    def read_from(self, fd: int) -> bytes:
        chunk, written = receive(fd)
        if chunk:
            written = written if written is not None else time.monotonic()
            self.first_at = written if self.first_at is None else self.first_at
            self.last_at = written
        return chunk


class Signal(Stamped):
    """The sandbox's ready channel: when its line was written (the program's time starts there).

    The line is written inside the sandbox right before the program's exec (worker.sandbox.launch
    ready_argv), after bwrap's namespace and mount set-up: that set-up is the judge's time.
    """

    def __init__(self) -> None:
        super().__init__(16)

    @property
    def ready_at(self) -> float | None:
        return self.first_at

    @ready_at.setter
    def ready_at(self, value: float | None) -> None:  # no sandbox: the caller's own clock
        self.first_at = value

    def pid(self) -> int | None:
        """The program's pid inside the sandbox, as the ready line said it."""
        first = self.text().split("\n", 1)[0].strip()
        return int(first) if first.isdigit() else None


class OutputPump:
    """Drains a process's stdout and stderr pipes into tails while waiting for it to exit.

    One select loop serves both pipes and the process's pidfd, so waiting costs no polling and a
    chatty program can never block on a full pipe.
    """

    def __init__(self, proc: subprocess.Popen[bytes], tail_bytes: int,
                 status_fd: int | None = None, ready_fd: int | None = None) -> None:
        self.proc = proc
        self.stdout = Tail(tail_bytes)
        self.stderr = Tail(tail_bytes)
        self.status = Stamped(1 << 16)  # bwrap's --json-status-fd documents, the last at exit
        self.ready = Signal()
        self.selector = selectors.DefaultSelector()
        streams = [(proc.stdout.fileno() if proc.stdout else None, self.stdout),
                   (proc.stderr.fileno() if proc.stderr else None, self.stderr),
                   (status_fd, self.status), (ready_fd, self.ready)]
        for fd, sink in streams:
            if fd is not None:
                os.set_blocking(fd, False)
                self.selector.register(fd, selectors.EVENT_READ, sink)
        self.pidfd = _pidfd_open(proc.pid)
        if self.pidfd is not None:
            self.selector.register(self.pidfd, selectors.EVENT_READ, None)

    def wait(self, limit_s: float, started: float, startup_s: float,
             off_clock: Callable[[], float] | None = None) -> bool:
        """Pump until the process exits (True) or its time is up (False): `limit_s` after the
        sandbox said it is starting the program (ready.ready_at), or, until it says so,
        `startup_s + limit_s` after `started`; later by `off_clock()`, the time the run stood
        frozen by the judge (the driver gate's teardown wait)."""
        while self.proc.poll() is None:
            ready = self.ready.ready_at
            deadline = ready + limit_s if ready is not None else started + startup_s + limit_s
            deadline += off_clock() if off_clock is not None else 0.0
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            timeout = remaining if self.pidfd is not None else min(remaining, 0.01)
            self._pump(timeout)
        return True

    def drain(self, timeout_s: float = 1.0) -> None:
        """Read what is left after every writer is dead (EOF), waiting at most timeout_s."""
        deadline = time.monotonic() + timeout_s
        while self._has_pipes() and time.monotonic() < deadline:
            self._pump(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        self.selector.close()
        if self.pidfd is not None:
            os.close(self.pidfd)

    def _has_pipes(self) -> bool:
        return any(key.data is not None for key in self.selector.get_map().values())

    def _pump(self, timeout: float) -> None:
        for key, _ in self.selector.select(timeout):
            if key.data is None:
                continue  # the pidfd: the process exited; poll() in wait() notices
            sink = key.data
            stamped = isinstance(sink, Stamped)
            chunk = sink.read_from(key.fd) if stamped else os.read(key.fd, 1 << 16)
            if chunk:
                sink.add(chunk)
            else:
                self.selector.unregister(key.fd)


def _pidfd_open(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def read_regular_file(workdir: Path, name: str) -> Path | None:
    """The path of `name` in workdir if it is a plain file the submission made, else None.

    A submission can leave a symlink (to /etc/passwd, or to the expected output) where its output
    should be; following it would let it read or copy what it must not. So the file is opened with
    O_NOFOLLOW relative to the work dir (no path component may be a link), and must be a regular
    file. The returned path is safe to read while the sandboxed run is over.
    """
    if "/" in name or name in ("", ".", ".."):
        return None
    try:
        dir_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
    return workdir / name if regular else None
