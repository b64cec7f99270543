"""The bubblewrap command line: what a sandboxed program sees, and nothing more.

Visible inside: /usr read-only whole (/usr/local/cuda is a symlink through /etc/alternatives and
/usr/local/nvidia a mount on the GPU node), the /bin /lib /lib64 links, the few /etc files a
toolchain needs, a fresh /proc, /dev and /tmp, the work dir at /work and the caller's binds.
Host paths of binds travel as file descriptors, so no judge path appears in the sandbox's argv.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from worker.sandbox.types import Bind, GpuAccess

SANDBOX_UID = 65534
WORK = "/work"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
TOP_LEVEL_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# /etc entries a compiler, make, the loader or CUDA may need; nothing with secrets.
ETC_SHARED = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime")


# /etc files made for the sandbox: only the sandbox user exists.
ETC_MADE = {
    "passwd": f"nobody:x:{SANDBOX_UID}:{SANDBOX_UID}:nobody:{WORK}:/usr/sbin/nologin\n",
    "group": f"nogroup:x:{SANDBOX_UID}:\n",
    "hostname": "sandbox\n",
}


@dataclass
class MountPlan:
    """The bwrap arguments of one run and the descriptors they refer to (passed to bwrap)."""

    args: list[str] = field(default_factory=list)
    fds: list[int] = field(default_factory=list)

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()


def root_args() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in TOP_LEVEL_LINKS:
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    return args


def _add_etc(plan: MountPlan) -> None:
    """Shared /etc entries bound read-only; passwd/group/hostname copied in from memory
    (--ro-bind-data), so no file of ours lingers on the host if the worker dies."""
    for name in ETC_SHARED:
        if os.path.exists(f"/etc/{name}"):
            plan.args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    for name, text in ETC_MADE.items():
        fd = os.memfd_create(f"flashjudge-{name}", os.MFD_CLOEXEC)
        plan.fds.append(fd)
        os.write(fd, text.encode())
        os.lseek(fd, 0, os.SEEK_SET)
        plan.args += ["--perms", "0444", "--ro-bind-data", str(fd), f"/etc/{name}"]


def _fd_bind(plan: MountPlan, source: Path, target: str, writable: bool) -> None:
    """Bind through an O_PATH descriptor opened here, so paths the sandbox user could not traverse
    (a 0700 cache dir) still work and the host path never shows in /proc/1/cmdline inside."""
    fd = os.open(source, os.O_PATH | os.O_CLOEXEC)
    plan.fds.append(fd)
    plan.args += ["--bind-fd" if writable else "--ro-bind-fd", str(fd), target]


def build_mounts(
    *,
    workdir: Path,
    binds: Sequence[Bind],
    gpu: GpuAccess | None,
) -> MountPlan:
    """The filesystem half of the command line. Caller closes the plan after bwrap started."""
    plan = MountPlan(args=root_args())
    plan.args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for node in gpu.device_nodes if gpu else ():
        plan.args += ["--dev-bind", node, node]
    try:
        _add_etc(plan)
        _fd_bind(plan, workdir, WORK, writable=True)
        for bind in binds:
            _fd_bind(plan, Path(bind.source), bind.target, bind.writable)
    except OSError:
        plan.close()
        raise
    plan.args += ["--remount-ro", "/", "--chdir", WORK]  # only /work and /tmp stay writable
    return plan


def build_env(env: Mapping[str, str] | None) -> list[str]:
    """--clearenv, then only the basics plus what the caller passes: no worker secret gets in."""
    values = {"PATH": PATH, "HOME": WORK, "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
    values.update(env or {})
    args = ["--clearenv"]
    for key, value in values.items():
        args += ["--setenv", key, value]
    return args


def namespace_args(*, network: bool) -> list[str]:
    """New user/pid/net/ipc/uts namespaces; an unprivileged uid; no nested user namespaces."""
    args = ["--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    args += ["--hostname", "sandbox", "--disable-userns", "--die-with-parent", "--new-session"]
    if network:
        args.append("--share-net")
    return args
