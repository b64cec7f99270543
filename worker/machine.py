"""What the worker's environment says about this machine, as one plain value handed down.

`worker.settings` reads it (FLASHJUDGE_*, CUDA_VISIBLE_DEVICES, CUDA_HOME) where a process starts:
the Celery adapter, the CLI, the tests. Nothing below reads the environment itself, so a judging
depends only on what it is given, and a test gives what it means. The defaults are a bare machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Machine:
    """Where this worker's programs come from and where its runs go."""

    gpu_device: str = ""  # the worker's GPU: an index or a UUID prefix ("": the first GPU)
    gpu_minor: int | None = None  # its /dev/nvidia<minor> as NVML gave it (None: from gpu_device)
    gpu_arch: str | None = None  # the sm number to build for (None: asked from the GPU)
    cuda_home: str | None = None  # the CUDA toolkit's directory (None: found from nvcc)
    bwrap: str | None = None  # the bubblewrap binary (None: bwrap on the PATH)
    cgroup_root: str | None = None  # the cgroup under which runs get theirs (None: our own)
    scratch: Path | None = None  # where work dirs go (None: /dev/shm when roomy, else /tmp)
    ncu: str | None = None  # Nsight Compute's ncu (None: the newest under /opt/nvidia, or CUDA's)
