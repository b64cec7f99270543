"""The sandbox's interface and value types: the Sandbox protocol, limits, binds, results, GPU
access (all re-exported by bwrap.py)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from worker.sandbox.gpu.driver_gate import GateReport

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
    timed: bool = False  # its time is a figure: the CPU before anything else, on the run cores


@dataclass(frozen=True)
class Bind:
    """A host path made visible inside the sandbox (read-only unless writable)."""

    source: Path  # host path (file or directory)
    target: str  # absolute path inside the sandbox
    writable: bool = False  # bind read-write (never for the judge's inputs)


@dataclass(frozen=True)
class GpuProcess:
    """A process of the run that held a context on the GPU."""

    host_pid: int  # as NVML and the worker see it
    sandbox_pid: int | None  # its pid inside the sandbox (None: gone before it was read)
    command: str  # its name (/proc/PID/comm)

    def to_dict(self) -> dict[str, Any]:
        return {"host_pid": self.host_pid, "sandbox_pid": self.sandbox_pid,
                "command": self.command}


@dataclass
class GpuRunReport:
    """What the GPU side of one run saw (RunResult.gpu)."""

    gate: GateReport = field(default_factory=GateReport)
    census: list[dict[str, Any]] = field(default_factory=list)  # one per process, as written
    processes: list[GpuProcess] = field(default_factory=list)  # of this run, on the GPU
    program_pid: int | None = None  # the started program's pid inside the sandbox
    watched: bool = False  # the GPU's process list was read during the run
    injected: bool = False  # the judge's injection was offered to the run

    def others(self) -> list[GpuProcess]:
        """Processes of the run on the GPU other than the program the judge started."""
        return [p for p in self.processes if p.sandbox_pid != self.program_pid]


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
    gpu: GpuRunReport | None = None  # a GPU run's driver gate, census and GPU processes
    clock: tuple[float, float] | None = None  # (ready, exit) on CLOCK_MONOTONIC: the census's
    # stamps are on the same clock, so a run splits into its parts (bench/neighbour_check.py)


@dataclass(frozen=True)
class GpuAccess:
    """The device nodes a GPU run may open: the control nodes plus exactly one GPU."""

    device_nodes: tuple[str, ...]  # e.g. ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm")

    @classmethod
    def for_visible_device(cls, device: str = "", minor: int | None = None) -> GpuAccess:
        """The nodes for the worker's GPU `device` (Machine.gpu's UUID; where no driver described
        one, Machine.gpu_device: the first entry of CUDA_VISIBLE_DEVICES, an index or a GPU
        UUID; "" is GPU 0).

        A UUID is resolved to its /dev/nvidiaN minor through /proc/driver/nvidia. Only nodes that
        exist are listed. `minor`, when known (Machine.gpu's, from NVML), is taken as is.
        """
        minor = _minor_of(device.strip()) if minor is None else minor
        names = ["/dev/nvidiactl", f"/dev/nvidia{minor}", "/dev/nvidia-uvm"]  # no profiler nodes
        nodes = tuple(name for name in names if os.path.exists(name))
        if f"/dev/nvidia{minor}" not in nodes:
            raise SandboxUnavailable(f"GPU device node /dev/nvidia{minor} does not exist")
        return cls(device_nodes=nodes)


def _minor_of(first: str) -> int:
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


class Sandbox(Protocol):
    """What runs untrusted commands: worker.sandbox.bwrap.BwrapSandbox, or a test's double. The
    pipeline, the languages and the runs know only this, so a double needs no `type: ignore`."""

    @property
    def insecure(self) -> bool:
        """Runs go without the sandbox's protections (development): every result says so."""
        ...

    def run(self, argv: list[str], *, workdir: Path, limits: Limits, binds: Sequence[Bind] = (),
            env: Mapping[str, str] | None = None, network: bool = False) -> RunResult:
        """Run argv with cwd /work (= workdir on the host) under the limits; never raises for
        anything the program does (failures of ours come back as SYSTEM_ERROR)."""
        ...
