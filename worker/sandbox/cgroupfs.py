"""Small, careful reads and writes of cgroup files, shared by worker.sandbox.cgroups."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from pathlib import Path


class CgroupError(RuntimeError):
    """This machine cannot give runs their own cgroup; the message says what is missing."""


def ensure_dir(path: Path) -> Path:
    try:
        path.mkdir(exist_ok=True)
    except OSError as exc:
        raise CgroupError(f"cannot create cgroup {path}: {exc}") from exc
    return path


def write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def read_key(path: Path, key: str) -> int | None:
    """Read `key N` from a flat-keyed cgroup file such as memory.events."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        return None
    return None


def kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def rmdir_retry(path: Path, timeout_s: float = 1.0) -> bool:
    """rmdir, retrying briefly: a just-killed process may take a moment to leave the cgroup."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                return False
            time.sleep(0.005)
