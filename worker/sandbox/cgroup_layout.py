"""Where run cgroups are made on this machine: cgroup v1 or v2, the worker's own place, and the
group of timed runs that has the CPU before anything else on the host.

Both layouts are supported: cgroup v1 (one hierarchy per controller, as on the developer and CI
machines) and cgroup v2 (one unified hierarchy, as on the GPU node). Run cgroups are made under the
worker's own cgroup, so a limit on the worker bounds its runs (on v2, where a cgroup holding
processes cannot delegate, under the nearest ancestor that can). A root given to detect_layout
(FLASHJUDGE_CGROUP_ROOT, a cgroup path such as /judge) overrides the place (for every v1
controller alike).

Timed runs (a test's run, whose wall time is the figure) go under `flashjudge-timed`, a sibling of
`flashjudge` with the highest CPU weight the kernel takes (v2 cpu.weight 10000, v1 cpu.shares
262144): whatever else runs on the host (a build, the service, another course's job, a busy loop
someone started) gets the CPU only when a timed run leaves it. Measured on the 2-core development
machine with two busy loops beside: a CPU-bound program took 6.7-8.0 s in the default group and
1.26 s in the timed one (docs/benchmarks.md). Builds and tools keep the default weight.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from worker.sandbox.cgroupfs import CgroupError, ensure_dir, write

CGROUP_MOUNT = Path("/sys/fs/cgroup")
ROOT_ENV = "FLASHJUDGE_CGROUP_ROOT"
V1_CONTROLLERS = ("memory", "pids")


TIMED = "flashjudge-timed"
V1_TIMED_SHARES = 262144  # the most cpu.shares takes (default 1024)
V2_TIMED_WEIGHT = 10000  # the most cpu.weight takes (default 100)


@dataclass(frozen=True)
class CgroupLayout:
    """Where run cgroups are made on this machine."""

    version: int  # 1 (a hierarchy per controller) or 2 (unified)
    parents: dict[str, Path]  # v1: controller -> parent dir; v2: {"unified": parent dir}
    tree_kill: str  # how a whole run is killed: "cgroup.kill", "freezer" or "signal-loop"
    timed: dict[str, Path] | None = None  # the same for timed runs (None: no cpu controller)


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
    return CgroupLayout(version=1, parents=parents, tree_kill=tree_kill,
                        timed=_v1_timed(own, root, parents))


def _v1_timed(own: dict[str, str], root: str | None, parents: dict[str, Path]
              ) -> dict[str, Path] | None:
    """memory, pids (and freezer) as for any run; cpu (and cpuset) under TIMED, weighted."""
    if not (CGROUP_MOUNT / "cpu").is_dir():
        return None
    try:
        timed = dict(parents)
        place = (root or own.get("cpu", "/")).lstrip("/")
        timed["cpu"] = ensure_dir(CGROUP_MOUNT / "cpu" / place / TIMED)
        write(timed["cpu"] / "cpu.shares", str(V1_TIMED_SHARES))
        if (CGROUP_MOUNT / "cpuset").is_dir():
            where = CGROUP_MOUNT / "cpuset" / (root or own.get("cpuset", "/")).lstrip("/")
            timed["cpuset"] = ensure_dir(where / TIMED)
            copy_cpuset(where, timed["cpuset"])
        return timed
    except (OSError, CgroupError):
        return None


def copy_cpuset(source: Path, target: Path, cpus: str | None = None) -> None:
    """A v1 cpuset must name its cpus and memory nodes before a process may join it."""
    write(target / "cpuset.mems", (source / "cpuset.mems").read_text().strip())
    write(target / "cpuset.cpus", cpus or (source / "cpuset.cpus").read_text().strip())


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
        return CgroupLayout(version=2, parents={"unified": parent}, tree_kill=tree_kill,
                            timed=_v2_timed(parent.parent))
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


def _v2_timed(base: Path) -> dict[str, Path] | None:
    """base/TIMED, weighted above its siblings, whose children get memory, pids, cpu, cpuset."""
    try:
        if "cpu" not in (base / "cgroup.controllers").read_text().split():
            return None
        write(base / "cgroup.subtree_control", "+cpu")
        timed = base / TIMED
        timed.mkdir(exist_ok=True)
        write(timed / "cpu.weight", str(V2_TIMED_WEIGHT))
        _enable_v2(timed)
        wanted = [c for c in ("cpu", "cpuset")
                  if c in (timed / "cgroup.controllers").read_text().split()]
        write(timed / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))
        return {"unified": timed}
    except OSError:
        return None


def _enable_v2(cgroup: Path) -> None:
    """Enable memory and pids in cgroup's subtree_control, in its ancestors first if needed."""
    if {"memory", "pids"} <= set((cgroup / "cgroup.subtree_control").read_text().split()):
        return
    available = set((cgroup / "cgroup.controllers").read_text().split())
    if not {"memory", "pids"} <= available and cgroup != CGROUP_MOUNT:
        _enable_v2(cgroup.parent)
    write(cgroup / "cgroup.subtree_control", "+memory +pids")


