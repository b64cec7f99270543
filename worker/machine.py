"""What the worker's environment says about this machine, as one plain value handed down.

`worker.settings` reads it (FLASHJUDGE_*, CUDA_VISIBLE_DEVICES, CUDA_HOME) where a process starts:
the Celery adapter, the CLI, the tests. Nothing below reads the environment itself, so a judging
depends only on what it is given, and a test gives what it means. The defaults are a bare machine.

"Which GPU am I" has one answer: `Machine.gpu`, the GPU the worker was handed, as the driver
(NVML, else nvidia-smi) describes it, resolved once where the process starts (worker/gpus.py
`handed_gpu`). The build's architecture, the sandbox's device node, the heartbeat's model, the
model's queue and the speed of light's cache key all read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

NO_GPU = "cpu"  # the model a worker without a GPU reports (the CPU track)


@dataclass(frozen=True)
class Gpu:
    """One GPU as the driver describes it."""

    index: int  # NVML's index: nvidia-smi's GPU number (PCI bus order)
    uuid: str  # "GPU-8c1e...": what a worker is pinned with
    name: str  # the model, e.g. "NVIDIA H100 80GB HBM3" (limits and boards follow it)
    minor: int | None  # the driver's minor: /dev/nvidia<minor> (None: the sandbox reads /proc)
    pci_bus_id: str  # "00000000:19:00.0"
    compute_cap: str | None = None  # e.g. "90" for 9.0: what nvcc builds for (None: not said)
    sm_count: int | None = None  # streaming multiprocessors (None: the driver did not say)
    driver: str = ""  # the driver's version, e.g. "580.65.06" ("": not said)

    def pin(self) -> dict[str, str]:
        """The environment that pins one worker process to this GPU, whatever the node mixes
        (the worker then finds this GPU again by its UUID)."""
        return {"CUDA_VISIBLE_DEVICES": self.uuid, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}

    def label(self) -> str:
        node = "" if self.minor is None else f", /dev/nvidia{self.minor}"
        return f"GPU {self.index} {self.name} ({self.uuid}{node})"


@dataclass(frozen=True)
class Machine:
    """Where this worker's programs come from and where its runs go."""

    gpu_device: str = ""  # what the worker was handed: the first entry of CUDA_VISIBLE_DEVICES,
    # an index or a UUID prefix ("": the first GPU); the sandbox's last resort when `gpu` is None
    gpu: Gpu | None = None  # that GPU as the driver describes it (None: no GPU, or no driver)
    gpu_arch: str | None = None  # the sm number to build for (None: the GPU's compute_cap)
    cuda_home: str | None = None  # the CUDA toolkit's directory (None: found from nvcc)
    bwrap: str | None = None  # the bubblewrap binary (None: bwrap on the PATH)
    cgroup_root: str | None = None  # the cgroup under which runs get theirs (None: our own)
    scratch: Path | None = None  # where work dirs go (None: /dev/shm when roomy, else /tmp)
    ncu: str | None = None  # Nsight Compute's ncu (None: the newest under /opt/nvidia, or CUDA's)
    driver_gate: Path | None = None  # the node's driver gate's directory, shared by every worker
    # of the node (None: GPU runs start and stop CUDA ungated; worker/sandbox/gpu/driver_gate.py)
    cuda_injection: Path | None = None  # the built census_inject.c every GPU run gets (None: none)
    run_cpus: str | None = None  # the cores this worker's timed runs own, a cpuset list such as
    # "4-19" (None: any core; worker/cpus.py)
    cuda_connections: int = 0  # CUDA_DEVICE_MAX_CONNECTIONS of every GPU run (0: CUDA's own, 8)

    @property
    def gpu_model(self) -> str:
        """The GPU's model as heartbeats, limits and boards name it, or "cpu" without one."""
        return self.gpu.name if self.gpu is not None else NO_GPU
