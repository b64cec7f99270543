"""What protections this machine gives sandboxed runs, checked for real before judging starts.

The judge refuses to start when a protection is missing (no bubblewrap, no user namespaces, no
cgroups) unless the operator asked for --insecure; then every result says INSECURE.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from worker.sandbox.cgroups import CgroupError, CgroupLayout, RunCgroup, detect_layout, sweep_stale
from worker.sandbox.mounts import SANDBOX_UID, namespace_args, root_args
from worker.sandbox.types import SandboxUnavailable

BWRAP_ENV = "FLASHJUDGE_BWRAP"
BUNDLE_LIBS = "libcap.so.2"  # present in the lib/ dir of a scripts/bwrap-bundle.sh bundle


@dataclass(frozen=True)
class SecurityReport:
    """The protections found on this machine; `problems` lists each one missing, in words."""

    bwrap: str | None  # the bubblewrap binary used (None: not found)
    bwrap_version: str | None  # e.g. "bubblewrap 0.8.0"
    user_namespaces: bool  # a probe sandbox (new user/pid/net namespaces) started
    cgroups: CgroupLayout | None  # where run cgroups go (None: unavailable)
    host_uid: int | None  # host uid programs run as (None: the worker's own, it is not root)
    problems: tuple[str, ...]  # each missing protection, fit to show an operator
    insecure: bool  # the operator allowed running without the missing protections

    @property
    def secure(self) -> bool:
        return not self.problems

    @property
    def cgroup_version(self) -> int | None:
        return self.cgroups.version if self.cgroups else None

    def summary(self) -> str:
        """One line per protection, for `flashjudge worker` start-up logs."""
        cg = self.cgroups
        lines = [
            f"bubblewrap: {self.bwrap_version or 'missing'} ({self.bwrap or '-'})",
            f"user namespaces: {'yes' if self.user_namespaces else 'NO'}",
            f"cgroups: v{cg.version}, memory+pids, kill by {cg.tree_kill}" if cg else "cgroups: NO",
            f"host uid of programs: {self.host_uid if self.host_uid is not None else os.getuid()}",
        ]
        lines += [f"problem: {p}" for p in self.problems]
        if self.insecure and self.problems:
            lines.append("INSECURE: running without the protections above")
        return "\n".join(lines)


def find_bwrap(explicit: str | None = None) -> str | None:
    """bubblewrap from the argument (FLASHJUDGE_BWRAP, passed in), else PATH."""
    candidate = explicit or shutil.which("bwrap")
    if candidate and os.access(candidate, os.X_OK):
        return candidate
    return None


def bwrap_environment(bwrap: str) -> dict[str, str]:
    """The environment of the bwrap process itself: nothing of the worker's (bwrap is pid 1 inside,
    its /proc/1/environ readable), plus LD_LIBRARY_PATH when bwrap comes from a bundle."""
    lib = Path(bwrap).resolve().parent / "lib"
    return {"LD_LIBRARY_PATH": str(lib)} if (lib / BUNDLE_LIBS).exists() else {}


def drop_to(uid: int | None) -> None:
    """In the child before exec: become an unprivileged host user (no-op for None)."""
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)


def reachable_by(path: Path, uid: int, write: bool = False) -> bool:
    """Whether `uid` (no groups) may reach path: search on every ancestor, read (and write) on it.

    bwrap resolves mount sources with the permissions of the user it runs as, so a judge cache
    under a 0700 directory cannot be bound by an unprivileged bwrap.
    """
    try:
        target = path.resolve(strict=True)
        for parent in reversed(target.parents):
            if not _allows(parent.stat(), uid, 0o1):
                return False
        info = target.stat()
    except OSError:
        return False
    need = (0o4 | (0o2 if write else 0)) | (0o1 if stat.S_ISDIR(info.st_mode) else 0)
    return _allows(info, uid, need)


def _allows(info: os.stat_result, uid: int, bits: int) -> bool:
    mode = info.st_mode >> 6 if info.st_uid == uid else info.st_mode
    return (mode & bits) == bits


def _probe(bwrap: str, host_uid: int | None) -> str | None:
    """Start a minimal sandbox; None when it worked, else bwrap's complaint."""
    argv = [bwrap, *namespace_args(network=False), *root_args(), "--proc", "/proc", "true"]
    try:
        done = subprocess.run(
            argv, env=bwrap_environment(bwrap), capture_output=True, timeout=30,
            preexec_fn=partial(drop_to, host_uid),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    return None if done.returncode == 0 else done.stderr.decode(errors="replace").strip()


def _version(bwrap: str) -> str | None:
    try:
        done = subprocess.run([bwrap, "--version"], env=bwrap_environment(bwrap),
                              capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode(errors="replace").strip() or None


def _check_cgroups(root: str | None) -> tuple[CgroupLayout | None, str | None]:
    """Detect the layout and make (then remove) one limited cgroup to prove it works."""
    try:
        layout = detect_layout(root)
        sweep_stale(layout)
        RunCgroup(layout, memory_bytes=64 << 20, pids=8).remove()
    except (CgroupError, OSError) as exc:
        return None, f"cgroups unusable (no memory/pids limits, no tree kill): {exc}"
    return layout, None


def preflight(insecure: bool = False, bwrap: str | None = None,
              cgroup_root: str | None = None) -> SecurityReport:
    """Check every protection; raise SandboxUnavailable listing what is missing unless insecure.
    `bwrap` and `cgroup_root`: the operator's choices (worker.machine.Machine), else found."""
    problems: list[str] = []
    path = find_bwrap(bwrap)
    host_uid = SANDBOX_UID if os.geteuid() == 0 else None
    userns = False
    if path is None:
        problems.append(f"bubblewrap not found (install it or set {BWRAP_ENV})")
    else:
        failure = _probe(path, host_uid)
        userns = failure is None
        if failure:
            problems.append(f"bubblewrap cannot create namespaces: {failure}")
    layout, cg_problem = _check_cgroups(cgroup_root)
    if cg_problem:
        problems.append(cg_problem)
    report = SecurityReport(
        bwrap=path, bwrap_version=_version(path) if path else None, user_namespaces=userns,
        cgroups=layout, host_uid=host_uid, problems=tuple(problems), insecure=insecure,
    )
    if problems and not insecure:
        raise SandboxUnavailable(
            "the sandbox cannot protect this machine: " + "; ".join(problems)
            + " (use --insecure only for development)"
        )
    return report
