"""One fresh cgroup per sandboxed run: memory and pids limits, peak memory, OOM kills, tree kill.

Why cgroups and not rlimits: CUDA reserves ~14 GB of address space, so RLIMIT_AS cannot cap memory,
and only a cgroup reliably finds every process of a run (children that called setsid or
double-forked included) so that the wall-time limit can kill them all.

Where they are made (v1 or v2, the timed runs' weighted group) is worker.sandbox.cgroup_layout's.
A timed run may also be held to the cores its worker was given (`cpus`, a cpuset list).
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from worker.sandbox.cgroup_layout import (
    ROOT_ENV,
    CgroupLayout,
    copy_cpuset,
    detect_layout,
)
from worker.sandbox.cgroupfs import (
    CgroupError,
    ensure_dir,
    kill,
    read_int,
    read_key,
    rmdir_retry,
    write,
)

__all__ = ["ROOT_ENV", "CgroupError", "CgroupLayout", "RunCgroup", "detect_layout",
           "sweep_stale"]


class RunCgroup:
    """The cgroup(s) of one run: made with limits, joined before exec, killed, read, removed.
    A `timed` run goes in the layout's timed group (the CPU before anything else), on `cpus`
    when given (a cpuset list such as "4-7")."""

    def __init__(self, layout: CgroupLayout, memory_bytes: int, pids: int, *,
                 timed: bool = False, cpus: str | None = None) -> None:
        self.layout = layout
        name = f"run-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.dirs: dict[str, Path] = {}
        parents = layout.timed if timed and layout.timed else layout.parents
        try:
            for key, parent in parents.items():
                self.dirs[key] = ensure_dir(parent / name)
            self._set_limits(memory_bytes, pids)
            self._place(parents, cpus)
        except (OSError, CgroupError) as exc:
            self.remove()
            raise CgroupError(f"cannot set up cgroup {name}: {exc}") from exc

    @property
    def _mem(self) -> Path:
        return self.dirs["unified" if self.layout.version == 2 else "memory"]

    @property
    def _pids(self) -> Path:
        return self.dirs["unified" if self.layout.version == 2 else "pids"]

    def _set_limits(self, memory_bytes: int, pids: int) -> None:
        if self.layout.version == 2:
            write(self._mem / "memory.max", str(memory_bytes))
            if (self._mem / "memory.swap.max").exists():
                write(self._mem / "memory.swap.max", "0")
        else:
            write(self._mem / "memory.limit_in_bytes", str(memory_bytes))
            if (self._mem / "memory.memsw.limit_in_bytes").exists():
                write(self._mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
        write(self._pids / "pids.max", str(pids))

    def _place(self, parents: dict[str, Path], cpus: str | None) -> None:
        """A v1 cpuset group must be filled before anyone joins; v2 inherits unless told."""
        if "cpuset" in self.dirs:
            copy_cpuset(parents["cpuset"], self.dirs["cpuset"], cpus)
        elif cpus and (self.dirs.get("unified", Path("/nonexistent")) / "cpuset.cpus").exists():
            write(self.dirs["unified"] / "cpuset.cpus", cpus)

    def procs_files(self) -> list[str]:
        """The files a child writes its own pid to (before exec) to join every controller."""
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def pids(self) -> list[int]:
        """Every process still in the run (every controller holds the same set)."""
        try:
            return [int(p) for p in (self._pids / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def memory_peak(self) -> int | None:
        name = "memory.peak" if self.layout.version == 2 else "memory.max_usage_in_bytes"
        return read_int(self._mem / name)

    def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer struck inside this run (the memory limit was hit)."""
        name = "memory.events" if self.layout.version == 2 else "memory.oom_control"
        count = read_key(self._mem / name, "oom_kill")
        if count is not None:
            return count > 0
        return (read_int(self._mem / "memory.failcnt") or 0) > 0

    def kill_all(self, timeout_s: float = 5.0) -> bool:
        """SIGKILL every process of the run wherever it forked to; True when the cgroup is empty."""
        deadline = time.monotonic() + timeout_s
        if not self.pids():
            return True
        if self.layout.tree_kill == "cgroup.kill":
            write(self.dirs["unified"] / "cgroup.kill", "1")
        elif self.layout.tree_kill == "freezer":
            self._freeze_and_kill()
        while self.pids():
            if time.monotonic() > deadline:
                return False
            for pid in self.pids():
                kill(pid)
            time.sleep(0.002)
        return True

    @property
    def can_freeze(self) -> bool:
        """Whether the run can be stopped and resumed whole (v1's freezer, v2's cgroup.freeze)."""
        if self.layout.version == 2:
            return (self.dirs["unified"] / "cgroup.freeze").exists()
        return "freezer" in self.dirs

    def freeze(self, timeout_s: float = 1.0) -> bool:
        """Stop every process of the run; True once the kernel says all are frozen."""
        return self._set_frozen(True, timeout_s)

    def thaw(self, timeout_s: float = 1.0) -> bool:
        """Resume them; True once the kernel says none is frozen."""
        return self._set_frozen(False, timeout_s)

    def _set_frozen(self, frozen: bool, timeout_s: float) -> bool:
        try:
            if self.layout.version == 2:
                write(self.dirs["unified"] / "cgroup.freeze", "1" if frozen else "0")
            else:
                write(self.dirs["freezer"] / "freezer.state", "FROZEN" if frozen else "THAWED")
            deadline = time.monotonic() + timeout_s
            while not self._is_frozen(frozen):
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.0005)
            return True
        except (OSError, CgroupError, KeyError):
            return False

    def _is_frozen(self, frozen: bool) -> bool:
        """Whether the kernel reports the run in the state asked for (not still in between)."""
        if self.layout.version == 2:
            return read_key(self.dirs["unified"] / "cgroup.events", "frozen") == int(frozen)
        state = (self.dirs["freezer"] / "freezer.state").read_text().strip()
        return state == ("FROZEN" if frozen else "THAWED")

    def _freeze_and_kill(self) -> None:
        """Freeze first so nothing can fork while we kill, then thaw so SIGKILL is delivered."""
        state = self.dirs["freezer"] / "freezer.state"
        write(state, "FROZEN")
        deadline = time.monotonic() + 1.0
        while state.read_text().strip() != "FROZEN" and time.monotonic() < deadline:
            time.sleep(0.001)
        for pid in self.pids():
            kill(pid)
        write(state, "THAWED")

    def remove(self) -> bool:
        """Remove the run's cgroup directories; False if one could not be (still populated)."""
        ok = True
        for path in self.dirs.values():
            ok = rmdir_retry(path) and ok
        return ok


def sweep_stale(layout: CgroupLayout) -> int:
    """Kill and remove run cgroups left behind by a worker that died mid-run (SIGKILL, OOM), and
    the cgroups of its lock warmer (worker.sandbox.warm).

    A run cgroup's name carries its worker's pid; one whose worker is gone is stale. Its
    processes already died with bwrap (--die-with-parent) unless something went badly wrong,
    so this is mostly rmdir. Returns how many directories were removed.
    """
    removed = 0
    for parent in {*layout.parents.values(), *(layout.timed or {}).values()}:
        stale = [*parent.glob("run-*-*"), *parent.glob("warm-*-*")]  # warm: worker.sandbox.warm
        for path in stale:
            owner = path.name.split("-")[1]
            if not owner.isdigit() or Path(f"/proc/{owner}").exists():
                continue
            if (path / "freezer.state").exists():
                write(path / "freezer.state", "THAWED")
            for pid in (path / "cgroup.procs").read_text().split():
                kill(int(pid))
            removed += rmdir_retry(path)
    return removed
