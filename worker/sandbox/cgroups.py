"""One fresh cgroup per sandboxed run: memory and pids limits, peak memory, OOM kills, tree kill.

Why cgroups and not rlimits: CUDA reserves ~14 GB of address space, so RLIMIT_AS cannot cap memory,
and only a cgroup reliably finds every process of a run (children that called setsid or
double-forked included) so that the wall-time limit can kill them all.

Both layouts are supported: cgroup v1 (one hierarchy per controller, as on the developer and CI
machines) and cgroup v2 (one unified hierarchy, as on the GPU node). Run cgroups are made under the
worker's own cgroup, so a limit on the worker bounds its runs (on v2, where a cgroup holding
processes cannot delegate, under the nearest ancestor that can). A root given to detect_layout
(FLASHJUDGE_CGROUP_ROOT, a cgroup path such as /judge) overrides the place (for every v1
controller alike).
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from worker.sandbox.cgroupfs import (
    CgroupError,
    ensure_dir,
    kill,
    read_int,
    read_key,
    rmdir_retry,
    write,
)

CGROUP_MOUNT = Path("/sys/fs/cgroup")
ROOT_ENV = "FLASHJUDGE_CGROUP_ROOT"
V1_CONTROLLERS = ("memory", "pids")


@dataclass(frozen=True)
class CgroupLayout:
    """Where run cgroups are made on this machine."""

    version: int  # 1 (a hierarchy per controller) or 2 (unified)
    parents: dict[str, Path]  # v1: controller -> parent dir; v2: {"unified": parent dir}
    tree_kill: str  # how a whole run is killed: "cgroup.kill", "freezer" or "signal-loop"


def _own_paths() -> dict[str, str]:
    """Map each controller (v2: "unified") to this process's cgroup path, from /proc/self/cgroup."""
    paths: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            paths["unified"] = path
        for name in controllers.split(","):
            if name:
                paths[name] = path
    return paths


def detect_layout(root: str | None = None) -> CgroupLayout:
    """Find a writable place for run cgroups (under `root` when given, else under our own), or
    raise CgroupError naming what is missing."""
    own = _own_paths()
    if (CGROUP_MOUNT / "cgroup.controllers").exists():
        return _detect_v2(own, root)
    if all((CGROUP_MOUNT / name).is_dir() for name in V1_CONTROLLERS):
        return _detect_v1(own, root)
    raise CgroupError(
        f"no usable cgroups under {CGROUP_MOUNT}: need cgroup v2, or v1 with memory and pids"
    )


def _detect_v1(own: dict[str, str], root: str | None) -> CgroupLayout:
    parents: dict[str, Path] = {}
    names = list(V1_CONTROLLERS)
    if (CGROUP_MOUNT / "freezer").is_dir():
        names.append("freezer")
    for name in names:
        where = root or own.get(name, "/")
        parents[name] = ensure_dir(CGROUP_MOUNT / name / where.lstrip("/") / "flashjudge")
    tree_kill = "freezer" if "freezer" in parents else "signal-loop"
    return CgroupLayout(version=1, parents=parents, tree_kill=tree_kill)


def _detect_v2(own: dict[str, str], root: str | None) -> CgroupLayout:
    if root:
        candidates = [CGROUP_MOUNT / root.lstrip("/")]
    else:
        here = CGROUP_MOUNT / own.get("unified", "/").lstrip("/")
        candidates = [here, *(p for p in here.parents if p.is_relative_to(CGROUP_MOUNT))]
    failures = []
    for base in candidates:
        try:
            parent = _v2_parent(base)
        except OSError as exc:
            failures.append(f"{base}: {exc.strerror or exc}")
            continue
        tree_kill = "cgroup.kill" if (parent / "cgroup.kill").exists() else "signal-loop"
        return CgroupLayout(version=2, parents={"unified": parent}, tree_kill=tree_kill)
    raise CgroupError(
        "cannot enable memory and pids for run cgroups (" + "; ".join(failures)
        + f"); set {ROOT_ENV} to a delegated cgroup v2 directory"
    )


def _v2_parent(base: Path) -> Path:
    """Make base/flashjudge, whose children get memory and pids.

    cgroup v2 lets a cgroup hand controllers to its children only if it holds no processes itself
    (the root excepted), so the worker's own cgroup usually fails (EBUSY) and its parent is tried.
    """
    _enable_v2(base)
    parent = base / "flashjudge"
    parent.mkdir(exist_ok=True)
    _enable_v2(parent)
    return parent


def _enable_v2(cgroup: Path) -> None:
    """Enable memory and pids in cgroup's subtree_control, in its ancestors first if needed."""
    if {"memory", "pids"} <= set((cgroup / "cgroup.subtree_control").read_text().split()):
        return
    available = set((cgroup / "cgroup.controllers").read_text().split())
    if not {"memory", "pids"} <= available and cgroup != CGROUP_MOUNT:
        _enable_v2(cgroup.parent)
    write(cgroup / "cgroup.subtree_control", "+memory +pids")


class RunCgroup:
    """The cgroup(s) of one run: made with limits, joined before exec, killed, read, removed."""

    def __init__(self, layout: CgroupLayout, memory_bytes: int, pids: int) -> None:
        self.layout = layout
        name = f"run-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.dirs: dict[str, Path] = {}
        try:
            for key, parent in layout.parents.items():
                self.dirs[key] = ensure_dir(parent / name)
            self._set_limits(memory_bytes, pids)
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
    for parent in layout.parents.values():
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
