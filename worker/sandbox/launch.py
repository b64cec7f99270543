"""Starting a sandboxed run without preexec_fn, so that CPython can vfork() instead of fork().

Before exec, a run's first process must join the run's cgroup (so nothing it starts can escape),
cap file sizes and core dumps, and drop host root. Doing that in Python (subprocess's preexec_fn)
makes CPython fork() the whole judge: on a GPU node the judge has CuPy and a CUDA context loaded,
and copying its page tables cost 15-17 ms per run. Without preexec_fn (and without Popen's
user/group/extra_groups) CPython uses vfork(), which copies nothing. The same steps are then done by
a chain of small programs that each exec the next, so the pid stays the same throughout:

    /bin/sh -c 'ulimit -f B -c 0; echo $$ > cgroup.procs...; exec "$@"'
                        caps file sizes (B blocks of 512 bytes) and core dumps, joins the cgroup
    setpriv --reuid=U --regid=U --clear-groups --
                        drops host root (real, effective and saved ids, no groups, no capabilities)
    bwrap ...           the sandbox proper

sh gets an empty environment (no ENV/BASH_ENV), paths are absolute. When a helper is missing,
`Launcher.find` returns None and the sandbox falls back to preexec_fn (slower, equally safe).

Inside the sandbox, `ready_argv` puts one more `sh -c` in front of the program: it writes a byte to
the judge's ready pipe and execs the program. The program's own time (RunResult.wall_s) starts at
that byte; everything before it (vfork, the chain above, bwrap's namespaces and mounts) is the
judge's start-up (RunResult.setup_s).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

JOIN_FAILED = 125  # the wrapper's exit code when it cannot join the cgroup (never the program's)
# $1: the file size limit in 512-byte blocks (POSIX sh's unit for ulimit -f); $2.. are
# cgroup.procs files up to "--", then the command: cap, join each, then exec the command.
# The shell exports PWD (its cwd): unset, so bwrap (pid 1 in the sandbox, its environment readable
# in /proc/1/environ) starts with exactly the environment the sandbox gave the chain.
JOIN_SCRIPT = (
    f'unset PWD OLDPWD; ulimit -f "$1" && ulimit -c 0 || exit {JOIN_FAILED}; shift; '
    f'while [ "$1" != -- ]; do echo $$ >"$1" || exit {JOIN_FAILED}; shift; done; shift; exec "$@"'
)
# Inside the sandbox, the last step before the program: say "ready" on fd 0 (the write end of the
# judge's ready pipe, passed as stdin through bwrap) with the shell's pid, which the program keeps
# (exec), then exec the program with stdin from /dev/null, which also closes the pipe for it. The
# program's own time starts at that line; the pid tells it from any process it starts.
READY_SHELL = "/bin/sh"  # inside the sandbox (/bin -> usr/bin)
READY_SCRIPT = 'echo $$ >&0; exec "$@" </dev/null'
BLOCK = 512  # bytes per ulimit -f block in dash, and in bash invoked as sh (POSIX mode)


@dataclass(frozen=True)
class Launcher:
    """The helper programs that prepare a run's process between vfork and bwrap."""

    sh: str  # a POSIX shell: sets RLIMIT_FSIZE and RLIMIT_CORE, joins the cgroup
    setpriv: str | None  # util-linux setpriv: drops host root (None: not needed or not found)

    @classmethod
    def find(cls, bwrap: str | None, need_setpriv: bool) -> Launcher | None:
        """The helpers, looked for next to bwrap first (a scripts/bwrap-bundle.sh bundle carries
        setpriv for nodes without it), then on PATH; None if one that is needed is missing or
        the shell's ulimit -f does not count in 512-byte blocks."""
        near = str(Path(bwrap).resolve().parent) if bwrap else None
        sh = _which("sh", None)
        setpriv = _which("setpriv", near) if need_setpriv else None
        if sh is None or (need_setpriv and setpriv is None) or not _blocks_of_512(sh):
            return None
        return cls(sh=sh, setpriv=setpriv)

    def argv(self, cmd: list[str], procs_files: list[str], file_size: int,
             host_uid: int | None) -> list[str]:
        """The command line that prepares the process, then execs `cmd` (bwrap's)."""
        if host_uid is not None and self.setpriv is None:
            raise ValueError("dropping to a host uid needs setpriv")
        blocks = -(-file_size // BLOCK)  # rounded up: the program may write file_size bytes
        argv = [self.sh, "-c", JOIN_SCRIPT, "sh", str(blocks), *procs_files, "--"]
        if host_uid is not None and self.setpriv is not None:
            argv += [self.setpriv, f"--reuid={host_uid}", f"--regid={host_uid}",
                     "--clear-groups", "--"]
        return argv + cmd

    def describe(self) -> str:
        """One line for start-up logs and benchmarks."""
        helpers = [self.sh] + ([self.setpriv] if self.setpriv else [])
        return "vfork, then " + " -> ".join(helpers) + " -> bwrap"


def _which(name: str, near: str | None) -> str | None:
    """An executable `name` in `near`, else on PATH (shutil.which: the system's default path
    when PATH is unset)."""
    if near and os.access(os.path.join(near, name), os.X_OK):
        return os.path.join(near, name)
    return shutil.which(name)


def _blocks_of_512(sh: str) -> bool:
    """Whether `sh`'s ulimit -f counts in 512-byte blocks, as seen in /proc/PID/limits."""
    try:
        done = subprocess.run([sh, "-c", "ulimit -f 3 && cat /proc/$$/limits"], env={},
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    for line in done.stdout.splitlines():
        if line.startswith("Max file size"):
            return line.split()[3:5] == [str(3 * BLOCK)] * 2
    return False


def ready_argv(argv: list[str]) -> list[str]:
    """The sandbox's command line for argv: signal readiness on stdin, then exec argv."""
    return [READY_SHELL, "-c", READY_SCRIPT, "sh", *argv]
