"""The sandbox's value types: limits, binds, results, GPU access (re-exported by bwrap.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

NVIDIA_PROC = Path("/proc/driver/nvidia/gpus")


class SandboxUnavailable(RuntimeError):
    """This machine cannot sandbox submissions; the message says which protection is missing."""


class RunStatus(StrEnum):
    """How a sandboxed run ended; the engine maps these to verdicts."""

    OK = "ok"  # exited 0 within the limits
    EXIT_NONZERO = "exit_nonzero"  # exited with a non-zero code
    SIGNALED = "signaled"  # killed by a signal of its own making (SIGSEGV, SIGABRT, ...)
    TIMEOUT = "timeout"  # ran past the wall-time limit; the whole tree was killed
    MEMORY = "memory"  # the cgroup memory limit was hit (OOM kill)
    OUTPUT_LIMIT = "output_limit"  # wrote a file larger than the limit (SIGXFSZ)
    SYSTEM_ERROR = "system_error"  # our fault: bwrap failed to start, a cgroup would not empty


@dataclass(frozen=True)
class Limits:
    """What one run may use. Memory is capped by cgroups, never RLIMIT_AS (CUDA reserves ~14 GB)."""

    wall_s: float  # wall-clock limit; the whole process tree is killed on expiry
    memory_bytes: int = 4 << 30  # host memory via cgroups
    pids: int = 128  # CUDA needs several threads: at least 64
    file_size_bytes: int = 2 << 30  # largest file the program may write (output size limit)
    log_tail_bytes: int = 16 << 10  # stdout/stderr tails kept


@dataclass(frozen=True)
class Bind:
    """A host path made visible inside the sandbox (read-only unless writable)."""

    source: Path  # host path (file or directory)
    target: str  # absolute path inside the sandbox
    writable: bool = False  # bind read-write (never for the judge's inputs)


@dataclass
class RunResult:
    """What a run did, as the judge measured it."""

    status: RunStatus  # how it ended
    exit_code: int | None  # the program's exit code when it exited
    signal: int | None  # the signal that ended it, when one did
    wall_s: float  # the program's own wall time: from the sandbox being ready to the exit
    stdout_tail: str  # last log_tail_bytes of stdout (decoded, errors replaced)
    stderr_tail: str  # last log_tail_bytes of stderr
    memory_peak_bytes: int | None  # peak cgroup memory, when the kernel reports it
    message: str  # one line for humans; starts with INSECURE when protections were off
    output_truncated: bool = False  # stdout or stderr was longer than the tail kept
    setup_s: float = 0.0  # the sandbox's start-up before the program's time began (ours)


@dataclass(frozen=True)
class GpuAccess:
    """The device nodes a GPU run may open: the control nodes plus exactly one GPU."""

    device_nodes: tuple[str, ...]  # e.g. ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm")

    @classmethod
    def for_visible_device(cls, index: int | None = None) -> GpuAccess:
        """The nodes for the worker's GPU: `index`, else the first of CUDA_VISIBLE_DEVICES, else 0.

        CUDA_VISIBLE_DEVICES may hold a GPU UUID; it is resolved to its /dev/nvidiaN minor through
        /proc/driver/nvidia. Only nodes that exist are listed.
        """
        minor = index if index is not None else _visible_minor()
        names = ["/dev/nvidiactl", f"/dev/nvidia{minor}", "/dev/nvidia-uvm"]  # no profiler nodes
        nodes = tuple(name for name in names if os.path.exists(name))
        if f"/dev/nvidia{minor}" not in nodes:
            raise SandboxUnavailable(f"GPU device node /dev/nvidia{minor} does not exist")
        return cls(device_nodes=nodes)


def _visible_minor() -> int:
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    if not first:
        return 0
    if first.isdigit():
        return int(first)
    for info in NVIDIA_PROC.glob("*/information"):
        fields = dict(
            (key.strip(), value.strip())
            for key, _, value in (line.partition(":") for line in info.read_text().splitlines())
        )
        if fields.get("GPU UUID", "").startswith(first):
            return int(fields["Device Minor"])
    raise SandboxUnavailable(f"CUDA_VISIBLE_DEVICES={first!r} names no GPU in {NVIDIA_PROC}")
