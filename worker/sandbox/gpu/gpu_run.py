"""What a sandboxed run with the GPU has beyond any other: the node's driver gate, the judge's
CUDA injection with its census, and the GPU's process list watched while it runs.

`GpuRuntime` is the worker's (one per sandbox, handed in by the edges); `GpuRun` is one run's:
`prepare` gives the sandbox the binds, environment and descriptor the run needs, `enter` passes
the gate before the program starts, `started` begins serving the gate and watching the GPU,
`finished` gathers it all into a `GpuRunReport` kept with the run's result.

- The injection (worker/harness/census_inject.c, CUDA_INJECTION64_PATH) is bound read-only at
  INJECTION; it speaks to the gate on its socket and writes one census file per process that
  used CUDA into a directory of the run's own, bound writable at CENSUS_DIR.
- The watch reads the GPU's compute processes (NVML) every WATCH_EVERY_S and keeps those that
  belong to the run's cgroup, each with its pid inside the sandbox and its command name, so the
  judge can tell the program it started from any other process of the run that used the GPU.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worker.machine import Machine
from worker.sandbox.gpu.driver_gate import GATE_FD_ENV, DriverGate, Freezer, GateSession
from worker.sandbox.types import Bind, GpuProcess, GpuRunReport

INJECTION = "/flashjudge/libfjcensus.so"  # inside the sandbox
CENSUS_DIR = "/flashjudge-census"  # inside the sandbox
CENSUS_FILE_MAX = 4 << 20  # a census larger than this is not read (kernel names are short)
CENSUS_FILES_MAX = 16  # census files read per run (one per process that used CUDA)
WATCH_EVERY_S = 0.005
NO_INJECTION = "FLASHJUDGE_NO_INJECTION"  # in a run's env: this run speaks to the gate itself
# and keeps its own census (the Triton runner, whose torch.profiler needs CUPTI to itself)
CONNECTIONS_ENV = "CUDA_DEVICE_MAX_CONNECTIONS"  # the hardware work queues of a CUDA context


@dataclass(frozen=True)
class GpuRuntime:
    """The worker's GPU side of every sandboxed GPU run (each part optional)."""

    gate: DriverGate | None = None  # the node's driver gate
    injection: Path | None = None  # the built libfjcensus.so (None: no injection)
    list_pids: Callable[[], set[int]] | None = None  # the GPU's compute processes (NVML)
    connections: int = 0  # CUDA_DEVICE_MAX_CONNECTIONS of every run (0: CUDA's own default)

    def run(self, workdir: Path) -> GpuRun:
        return GpuRun(self, workdir)


def gpu_runtime_for(machine: Machine) -> GpuRuntime:
    """The runtime of `machine`'s GPU runs: its node's gate, its injection, NVML's process list
    of its GPU (where NVML answers)."""
    gate = DriverGate(machine.driver_gate) if machine.driver_gate is not None else None
    lister = nvml_lister(machine.gpu.uuid) if machine.gpu is not None else None
    return GpuRuntime(gate=gate, injection=machine.cuda_injection, list_pids=lister,
                      connections=machine.cuda_connections)


def nvml_lister(uuid: str) -> Callable[[], set[int]] | None:
    """A function that lists the pids holding a context on the GPU `uuid` (NVML), or None
    where NVML cannot be loaded here."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByUUID(uuid)
    except Exception:  # no NVML library, no driver, no such GPU: no watch  # noqa: BLE001
        return None

    def pids() -> set[int]:
        return {p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)}

    return pids


class GpuRun:
    """One GPU run's gate session, census directory and process watch."""

    def __init__(self, runtime: GpuRuntime, workdir: Path) -> None:
        self.runtime = runtime
        self.census_dir = workdir.parent / f"{workdir.name}.census"
        self.session: GateSession | None = None
        self.report = GpuRunReport(injected=runtime.injection is not None)
        self._watch: threading.Thread | None = None
        self._stop = threading.Event()
        self._seen: dict[int, GpuProcess] = {}

    def prepare(self, sandbox_uid: int, inject: bool = True
                ) -> tuple[list[Bind], dict[str, str], list[int]]:
        """Binds, environment and descriptors to pass for this run (`inject`: the judge's
        injection too). The work queues are set for every run, profiles included, so every
        process of a judging starts the same CUDA."""
        binds: list[Bind] = []
        env: dict[str, str] = {}
        if self.runtime.connections:
            env[CONNECTIONS_ENV] = str(self.runtime.connections)
        fds: list[int] = []
        self.report.injected = inject and self.runtime.injection is not None
        if inject and self.runtime.injection is not None:
            self.census_dir.mkdir(mode=0o700)
            os.chown(self.census_dir, sandbox_uid, sandbox_uid)
            binds += [Bind(self.runtime.injection, INJECTION),
                      Bind(self.census_dir, CENSUS_DIR, writable=True)]
            env.update(CUDA_INJECTION64_PATH=INJECTION,
                       FLASHJUDGE_CENSUS_PATH=f"{CENSUS_DIR}/census-%p.json")
        return binds, env, fds

    def gate_env(self, freezer: Freezer | None) -> tuple[dict[str, str], list[int]]:
        """Open the run's gate session: its environment and the descriptor to pass."""
        if self.runtime.gate is None:
            return {}, []
        self.session = self.runtime.gate.session(freezer)
        return {GATE_FD_ENV: str(self.session.child_fd)}, [self.session.child_fd]

    def frozen_s(self) -> float:
        """Time the run stood frozen by the gate so far (off its clock and its limit)."""
        return self.session.frozen_s() if self.session is not None else 0.0

    def started(self, run_pids: Callable[[], list[int]]) -> None:
        """The program runs: serve the gate, watch the GPU for the run's processes."""
        if self.session is not None:
            self.session.serve()
        if self.runtime.list_pids is not None:
            self.report.watched = True
            self._watch = threading.Thread(target=self._watch_gpu, args=(run_pids,),
                                           name="gpu-watch", daemon=True)
            self._watch.start()

    def abandon(self) -> None:
        if self.session is not None:
            self.session.abandon()
        self.cleanup()

    def finished(self, program_pid: int | None) -> GpuRunReport:
        """The run is over (its processes gone): everything it left, gathered."""
        self._stop.set()
        if self._watch is not None:
            self._watch.join(timeout=5)
        if self.session is not None:
            self.report.gate = self.session.leave()
        self.report.program_pid = program_pid
        self.report.processes = sorted(self._seen.values(), key=lambda p: p.host_pid)
        self.report.census = read_census_dir(self.census_dir)
        self.cleanup()
        return self.report

    def cleanup(self) -> None:
        shutil.rmtree(self.census_dir, ignore_errors=True)

    def _watch_gpu(self, run_pids: Callable[[], list[int]]) -> None:
        assert self.runtime.list_pids is not None
        while True:
            try:
                on_gpu = self.runtime.list_pids()
            except Exception:  # NVML went away: what was seen stands  # noqa: BLE001
                return
            new = on_gpu - self._seen.keys()
            if new:
                ours = set(run_pids())
                for pid in new & ours:
                    self._seen[pid] = describe_process(pid)
            if self._stop.wait(WATCH_EVERY_S):
                return


def describe_process(host_pid: int) -> GpuProcess:
    """Its pid inside its own PID namespace (the last of NSpid) and its command name."""
    sandbox_pid, command = None, "?"
    try:
        for line in Path(f"/proc/{host_pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                sandbox_pid = int(line.split()[-1])
        command = Path(f"/proc/{host_pid}/comm").read_text().strip() or "?"
    except (OSError, ValueError):
        pass
    return GpuProcess(host_pid, sandbox_pid, command)


def read_census_dir(directory: Path) -> list[dict[str, Any]]:
    """Every census file the run's processes wrote: plain files only, bounded, parsed."""
    docs: list[dict[str, Any]] = []
    try:
        names = sorted(os.listdir(directory))[:CENSUS_FILES_MAX]
    except OSError:
        return docs
    for name in names:
        doc = _read_json(directory, name)
        if doc is not None:
            docs.append(doc)
    return docs


def _read_json(directory: Path, name: str) -> dict[str, Any] | None:
    try:
        fd = os.open(directory / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            data = f.read(CENSUS_FILE_MAX + 1)
        doc = json.loads(data) if len(data) <= CENSUS_FILE_MAX else None
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None
