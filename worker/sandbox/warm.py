"""Keeping the kernel's cgroup-migration lock warm while runs start one after another.

Every run's first process joins its fresh cgroup by writing its pid to cgroup.procs. In the kernel
that write takes the global cgroup_threadgroup_rwsem for writing, and a writer that finds the lock
idle first waits for a full RCU grace period (rcu_sync): 10-30 ms on a quiet machine, paid by every
test of a judging (tests are a few hundred ms apart, and the lock falls idle one grace period after
its last writer). A second write within that window costs well under a millisecond.

So while runs are being started, a background thread moves a parked `sleep` process between two
cgroups of its own every few milliseconds, and the lock never falls idle: the run's own join is
then cheap. The thread stops IDLE_STOP_S after the last run ended (and the lock goes idle again).
Any failure just stops the warming: runs are equally confined, only slower to start. While it
runs, forks and exits on the machine take the lock's slower (atomic) read path, the trade-off the
kernel's own `favordynmods` cgroup2 mount option makes; mounting cgroup2 with it makes this moot.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import threading
import time
import uuid
from pathlib import Path

from worker.sandbox.cgroupfs import CgroupError, ensure_dir, kill, rmdir_retry, write
from worker.sandbox.cgroups import CgroupLayout

PERIOD_S = 0.003  # between migrations: well under a grace period
IDLE_STOP_S = 2.0  # keep warm this long after the last run ended (the next test starts sooner)
# The parked process waits for EOF on its stdin, a pipe only the judge holds: it exits with the
# judge however the judge ends (even SIGKILL); its empty cgroups go at the next preflight's sweep.
PARK = ["/bin/sh", "-c", "read -r line; exit 0", "flashjudge-parked"]

_shared: dict[tuple[int, tuple[str, ...]], MigrationWarmer] = {}
_shared_lock = threading.Lock()


def shared_warmer(layout: CgroupLayout) -> MigrationWarmer:
    """This process's warmer for `layout`: one for all its Sandbox objects (a judging makes one
    each), and a new one in a forked child (the parent's thread did not come along)."""
    key = (os.getpid(), tuple(sorted(str(path) for path in layout.parents.values())))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = MigrationWarmer(layout)
        return _shared[key]


class MigrationWarmer:
    """Keeps cgroup migrations cheap while runs start; `started()`/`ended()` bracket each run."""

    def __init__(self, layout: CgroupLayout) -> None:
        key = "unified" if layout.version == 2 else "pids"
        parent = layout.parents[key]
        name = f"warm-{os.getpid()}-{uuid.uuid4().hex[:8]}"  # pid first: swept like run cgroups
        self.cgroups = [parent / f"{name}-{i}" for i in (0, 1)]
        self._lock = threading.Lock()
        self._active = 0  # runs in progress
        self._last_end = 0.0  # monotonic time the last run ended
        self._thread: threading.Thread | None = None
        self._life = threading.Lock()  # held by the thread for its whole life, clean-up included
        self._failed = False
        self._closed = False
        self._pid = os.getpid()
        atexit.register(self.close)

    def started(self) -> None:
        """A run is starting: make sure the warming thread is on."""
        with self._lock:
            self._active += 1
            if self._thread is None and not (self._failed or self._closed):
                self._thread = threading.Thread(target=self._loop, name="flashjudge-cgroup-warm",
                                                daemon=True)
                self._thread.start()

    def ended(self) -> None:
        with self._lock:
            self._active -= 1
            self._last_end = time.monotonic()

    def close(self) -> None:
        """Stop warming now and wait until the parked process and its cgroups are gone."""
        if os.getpid() != self._pid:
            return  # inherited through fork: the thread and the parked process are the parent's
        with self._lock:
            self._closed = True
        with self._life:
            pass

    def _wanted(self) -> bool:
        with self._lock:
            recent = self._active > 0 or time.monotonic() - self._last_end < IDLE_STOP_S
            if recent and not self._closed:
                return True
            self._thread = None
            return False

    def _loop(self) -> None:
        with self._life:
            self._warm()

    def _warm(self) -> None:
        parked: subprocess.Popen[bytes] | None = None
        try:
            for path in self.cgroups:
                ensure_dir(path)
            parked = subprocess.Popen(PARK, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True, env={})
            side = 0
            while self._wanted():
                write(self.cgroups[side] / "cgroup.procs", str(parked.pid))
                side ^= 1
                time.sleep(PERIOD_S)
        except (OSError, CgroupError):
            with self._lock:
                self._failed, self._thread = True, None
        finally:
            self._stop(parked)

    def _stop(self, parked: subprocess.Popen[bytes] | None) -> None:
        if parked is not None:
            kill(parked.pid)
            parked.wait()
            if parked.stdin is not None:
                parked.stdin.close()
        for path in self.cgroups:
            with contextlib.suppress(OSError):
                if Path(path).exists():
                    rmdir_retry(path)
