"""Fresh work directories and the tmpfs copy of the inputs.

Every build and every test gets a new directory, on tmpfs (/dev/shm) when the machine has one, that
is removed afterwards whatever the submission left in it. Inputs are served from a tmpfs copy so a
test's time does not depend on the disk; the copies are kept across submissions up to a size cap
(least recently used first out), so a worker judging many submissions copies each input once.
Where they go and the cache's cap are given (worker.machine.Machine, worker.settings), never read.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import stat
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

SHM = Path("/dev/shm")
MIN_SHM_FREE = 8 << 30  # a smaller /dev/shm (Docker's default is 64 MiB) cannot hold hw4's outputs
STALE_AFTER_S = 2 * 3600  # no judging lasts this long: older work dirs are a killed worker's
CACHE_SHARE = 0.4  # the input cache may take this share of its tmpfs (hw4 + fresh inputs: 20 GB)
log = logging.getLogger(__name__)


def input_cache_cap(base: Path) -> int:
    """CACHE_SHARE of the file system holding `base`: the cap unless one is given.

    Sized so that a whole suite fits: a cache smaller than the suite would evict every input
    before it is used again (a cyclic access pattern) and copy the whole suite every judging."""
    stats = os.statvfs(base if base.exists() else base.parent)
    return int(stats.f_blocks * stats.f_frsize * CACHE_SHARE)


def scratch_root() -> Path:
    """Where work dirs go unless the caller says (Machine.scratch): /dev/shm when writable and
    roomy, else /tmp.

    A full scratch dir would fail a student's write and be blamed on the student, so a small
    /dev/shm is not used."""
    if SHM.is_dir() and os.access(SHM, os.W_OK) and _free_bytes(SHM) >= MIN_SHM_FREE:
        return SHM
    return Path(tempfile.gettempdir())


def _free_bytes(path: Path) -> int:
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize


def pid_namespace() -> str:
    """This process's pid namespace (its inode): pids mean something only within one."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "0"


def process_tag(pid: int | None = None) -> str | None:
    """"<pid namespace>_<pid>_<start time>" of a live process (None if it is gone): a work
    dir's owner, which a reused pid cannot impersonate (its start time differs)."""
    pid = os.getpid() if pid is None else pid
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return f"{pid_namespace()}_{pid}_{stat[stat.rindex(')') + 2:].split()[19]}"  # starttime


def make_workdir(prefix: str, root: Path | None = None) -> Path:
    """A new empty directory (mode 0755) under `root` (default: scratch_root()/flashjudge-work),
    named "<prefix>.<owner tag>.<random>" so a later worker can tell when its owner died."""
    base = (root or scratch_root()) / "flashjudge-work"
    base.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}.{process_tag() or os.getpid()}.", dir=base))
    path.chmod(0o755)
    return path


def owner_dead(path: Path) -> bool:
    """Whether the process that made this work dir is gone: False for names without an owner
    and for owners in another pid namespace (another container), which we cannot see."""
    parts = path.name.split(".")
    tag = parts[-2].split("_") if len(parts) >= 3 else []
    if len(tag) != 3 or tag[0] != pid_namespace() or not tag[1].isdigit():
        return False
    return process_tag(int(tag[1])) != parts[-2]


def sweep_stale(root: Path | None = None, max_age_s: float = STALE_AFTER_S) -> int:
    """Remove work dirs whose owner process died (a worker killed mid-judging) and any older
    than `max_age_s`; how many went. Called at worker start and before every judging."""
    base = (root or scratch_root()) / "flashjudge-work"
    if not base.is_dir():
        return 0
    cutoff = time.time() - max_age_s
    removed = 0
    for path in list(base.iterdir()):
        try:
            stale = owner_dead(path) or path.lstat().st_mtime < cutoff
        except FileNotFoundError:
            continue  # its owner removed it meanwhile
        if stale:
            try:
                remove_tree(path)
            except OSError as exc:  # another user's dir: theirs to remove
                log.debug("cannot remove %s: %s", path, exc)
                continue
            removed += 1
    if removed:
        log.info("removed %d work dir(s) of dead or long-gone judgings", removed)
    return removed


def remove_tree(path: Path) -> None:
    """Remove a work dir whatever the submission did to its modes (read-only dirs included)."""

    def make_writable(func: object, target: str, exc_info: object) -> None:
        del func, exc_info
        parent = os.path.dirname(target)
        os.chmod(parent, stat.S_IRWXU)
        if os.path.isdir(target) and not os.path.islink(target):
            os.chmod(target, stat.S_IRWXU)
            shutil.rmtree(target, ignore_errors=True)
        else:
            os.unlink(target)

    if path.exists():
        shutil.rmtree(path, onerror=make_writable)


class InputCache:
    """Copies of input files on tmpfs, at most `cap_bytes` in all, least recently used evicted.

    The copies live in one directory shared by every worker on the machine (one per GPU): copying
    and evicting take a file lock, and a copy appears under its final name only when complete.
    """

    def __init__(self, root: Path | None = None, cap_bytes: int | None = None) -> None:
        base = root or scratch_root()
        self.enabled = base == SHM or root is not None
        self.dir = base / "flashjudge-inputs"
        self.cap_bytes = input_cache_cap(base) if cap_bytes is None else cap_bytes

    @classmethod
    def beside(cls, scratch: Path | None, cap_bytes: int | None = None) -> InputCache:
        """The cache beside work dirs made under `scratch` (None: scratch_root()). It copies only
        onto /dev/shm: a copy on another disk would gain nothing."""
        if scratch is None:
            return cls(cap_bytes=cap_bytes)
        cache = cls(root=scratch, cap_bytes=cap_bytes)
        cache.enabled = scratch == SHM
        return cache

    def path_for(self, source: Path) -> Path:
        """The tmpfs copy of `source` (made now if missing), or `source` if it cannot be cached."""
        if not self.enabled:
            return source
        info = source.stat()
        if info.st_size > self.cap_bytes:
            return source
        key = hashlib.sha256(f"{source.resolve()}:{info.st_size}:{info.st_mtime_ns}".encode())
        target = self.dir / f"{key.hexdigest()[:24]}{source.suffix}"
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if target.exists():
                os.utime(target)  # mark as recently used
                return target
            self._evict(info.st_size)
            partial = self.dir / f".{target.name}.{os.getpid()}.partial"
            shutil.copyfile(source, partial)
            partial.chmod(0o444)
            partial.rename(target)
            return target

    def _evict(self, incoming: int) -> None:
        """Drop the least recently used copies until `incoming` more bytes fit under the cap."""
        entries = sorted((p for p in self.dir.iterdir() if not p.name.startswith(".")),
                         key=lambda p: p.stat().st_mtime)
        used = sum(p.stat().st_size for p in entries)
        for entry in entries:
            if used + incoming <= self.cap_bytes:
                break
            used -= entry.stat().st_size
            entry.unlink(missing_ok=True)


class Cleaner:
    """Removes finished work dirs on a background thread.

    Deleting a test's output (up to ~1 GB on tmpfs) takes tens of milliseconds that need not sit
    between two tests: the next test starts while the last one's work dir goes away. `drain()`
    waits for all of it, so nothing is left behind when a judging returns.
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="flashjudge-cleaner")
        self._pending: list[Future[None]] = []

    def later(self, path: Path) -> None:
        self._pending.append(self._pool.submit(remove_tree, path))

    def drain(self) -> None:
        for future in self._pending:
            future.result()
        self._pending.clear()
        self._pool.shutdown(wait=True)
