"""Worker settings: one pydantic-settings class read from FLASHJUDGE_* environment variables.

A GPU worker is configured by its environment alone (it holds no database credentials and no
session key). This is the one place on the worker side that reads it, at the edges: the Celery
adapter and the CLI build a JudgeConfig (`judge_config()`) or a Machine (`machine()`, with the GPU
CUDA_VISIBLE_DEVICES names, described by the driver once per process) from it and pass that
down; the pipeline, the languages and the sandbox never read the environment. Built through the
cached `get_worker_settings()`, never at import; tests that change the environment call
`get_worker_settings.cache_clear()`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, PrivateAttr
from pydantic_settings import BaseSettings, SettingsConfigDict

from worker.cpus import local_cpus, plan_cpus
from worker.gpus import handed_gpu, node_gpus
from worker.harness.build import HarnessBuildError, injection_library
from worker.machine import Gpu, Machine
from worker.pipeline import JudgeConfig
from worker.running.nodelock import NodeLock
from worker.running.overlap import Overlap
from worker.running.products import ProductCache
from worker.running.testrun import KernelTimer
from worker.sandbox.workspace import InputCache
from worker.slurm_job import SlurmJob

log = logging.getLogger(__name__)


class WorkerSettings(BaseSettings):
    """Everything a judge worker reads from its environment."""

    model_config = SettingsConfigDict(env_prefix="FLASHJUDGE_", extra="ignore",
                                      populate_by_name=True)
    _gpus: tuple[Gpu, ...] | None = PrivateAttr(default=None)  # the node's, once asked

    data_dir: Path = Path("data")  # broker files (embedded broker) and the suite cache
    broker_url: str | None = None  # None: the embedded filesystem broker under data_dir
    log_level: str = "INFO"
    heartbeat_s: float = Field(10.0, gt=0)  # how often a worker tells the control side it lives
    slurm_drain_s: float = Field(600.0, ge=0)  # in a Slurm job: stop taking work this long
    # before the job's time limit, even if Slurm's --signal warning never comes
    slurm_handback_s: float = Field(60.0, ge=0)  # in a Slurm job: hand the judging in hand back
    # (judged again by another worker) once the time limit is nearer than this
    drain_file: Path | None = None  # set by `flashjudge worker` for its processes: it exists
    # once the worker drains (takes no new work and finishes or hands back what it holds)
    worker_name: str = ""  # "gpu0": one heartbeat row per worker process (default: worker-PID)
    queues: str = ""  # the queues this worker consumes (set by `flashjudge worker`)
    suite: str = "hw4"  # the service's suite (the speed of light is measured against it)
    insecure: bool = False  # started with --insecure: run without the sandbox (development)
    input_cache_gb: float | None = None  # tmpfs input cache cap (default: 40% of /dev/shm)
    scratch: Path | None = None  # where work dirs go (default: /dev/shm when roomy, else /tmp)
    bwrap: str | None = None  # the bubblewrap binary (default: bwrap on the PATH)
    cgroup_root: str | None = None  # the cgroup under which runs get theirs (default: our own)
    gpu_arch: str | None = None  # the sm number to build for (default: read from the GPU)
    ncu: str | None = None  # the Nsight Compute binary (default: found under CUDA)
    kernel_timer: KernelTimer = "split"  # cuda-kernel timing: the trusted
    # timer in its own process (docs/kernel-timing.md), or the old in-process harness (held)
    verdict_parallel: int = Field(1, ge=1, le=16)  # tests of the verdict pass at once (1: one
    # by one); a failed or near-limit test is then run again alone (worker/running/overlap.py)
    verdict_alone_share: float = Field(0.5, gt=0, le=1)  # ... near: at this share of its limit
    verdict_parallel_gb: float = Field(24.0, gt=0)  # inputs + outputs of the tests at once at
    # most (k CUDA contexts and their buffers share one GPU's memory)
    custom_run_time_limit_s: float = 120.0  # a custom run's reference computation at most
    driver_gate: bool = True  # GPU runs start and stop CUDA one at a time on the node, their
    # waits off their clocks (worker/sandbox/gpu/driver_gate.py)
    driver_keeper: bool = True  # an idle cuInit process per GPU worker keeps the driver's state
    # built between runs (worker/sandbox/gpu/driver_keeper.py)
    cuda_injection: bool = True  # every GPU run gets the judge's CUDA injection: the gate's
    # signals and the census of kernels (worker/harness/census_inject.c)
    run_cpus: str = "auto"  # the cores this worker's timed runs own: "auto" (its share of the
    # node's cores near its GPU, worker/cpus.py), "none", or a cpuset list such as "4-19"
    house_cores: int = Field(0, ge=0)  # the lowest cores kept for everything else (0: 1 in 8)
    cuda_connections: int = Field(0, ge=0, le=32)  # the hardware work queues CUDA sets up for
    # every GPU run (CUDA_DEVICE_MAX_CONNECTIONS; 0: CUDA's own 8). Fewer take start-up time off
    # every run but serialize kernels of streams issued one stream after another: a course's
    # choice, docs/kernel-timing.md "Work queues"
    cuda_visible_devices: str | None = Field(default=None,
                                             validation_alias="CUDA_VISIBLE_DEVICES")
    cuda_home: str | None = Field(default=None,
                                   validation_alias=AliasChoices("CUDA_HOME", "CUDA_PATH"))

    @property
    def gpu_device(self) -> str:
        """The worker's GPU: the first entry of CUDA_VISIBLE_DEVICES (an index or a UUID)."""
        return (self.cuda_visible_devices or "").split(",")[0].strip()

    def machine(self, gpus: Sequence[Gpu] | None = None) -> Machine:
        """What the environment says about this machine, to hand down; its GPU is the one
        CUDA_VISIBLE_DEVICES names among `gpus` (None: the node's, asked from the driver once
        per process: `node_gpus`)."""
        listed = self._node_gpus() if gpus is None else gpus
        gpu = handed_gpu(self.cuda_visible_devices, listed)
        return Machine(gpu_device=self.gpu_device, gpu=gpu, gpu_arch=self.gpu_arch,
                       cuda_home=self.cuda_home, bwrap=self.bwrap, cgroup_root=self.cgroup_root,
                       scratch=self.scratch, ncu=self.ncu,
                       driver_gate=self.data_path / "locks" if self.driver_gate else None,
                       cuda_injection=self._injection() if gpu is not None else None,
                       run_cpus=self._run_cpus(gpu, listed),
                       cuda_connections=self.cuda_connections)

    def _injection(self) -> Path | None:
        """The CUDA injection, built on first use into the cache (None: off, or no toolkit)."""
        if not self.cuda_injection:
            return None
        try:
            return injection_library(self.cache_dir)
        except (HarnessBuildError, OSError) as exc:
            log.warning("no CUDA injection for GPU runs (no census, no driver gate): %s", exc)
            return None

    def _run_cpus(self, gpu: Gpu | None, listed: Sequence[Gpu]) -> str | None:
        if self.run_cpus != "auto":
            return None if self.run_cpus in ("", "none") else self.run_cpus
        available = frozenset(os.sched_getaffinity(0))
        house = self.house_cores or max(2, len(available) // 8)
        if gpu is None:
            return None
        near = [local_cpus(g.pci_bus_id) for g in listed] or [None]
        index = next((i for i, g in enumerate(listed) if g.uuid == gpu.uuid), 0)
        return plan_cpus(available, near, index, house).run_list()

    def _node_gpus(self) -> tuple[Gpu, ...]:
        if self._gpus is None:
            self._gpus = tuple(node_gpus())
        return self._gpus

    def judge_config(self, **changes: Any) -> JudgeConfig:
        """This worker's JudgeConfig (its machine, sandbox mode, kernel timer and input cache),
        with `changes` (e.g. suite=...) on top."""
        cap = None if self.input_cache_gb is None else int(self.input_cache_gb * (1 << 30))
        config = JudgeConfig(insecure=self.insecure, machine=self.machine(),
                             kernel_timer=self.kernel_timer,
                             inputs=InputCache.beside(self.scratch, cap), overlap=self.overlap(),
                             products=ProductCache.beside(self.scratch),
                             node_lock=NodeLock(self.data_path / "locks"))
        return dataclasses.replace(config, **changes)

    def overlap(self) -> Overlap:
        """How the verdict pass may overlap tests (FLASHJUDGE_VERDICT_PARALLEL and friends)."""
        return Overlap(k=self.verdict_parallel, alone_share=self.verdict_alone_share,
                       memory_bytes=int(self.verdict_parallel_gb * (1 << 30)))

    @property
    def data_path(self) -> Path:
        return self.data_dir.resolve()

    @property
    def cache_dir(self) -> Path:
        """Prepared inputs and expected outputs, per suite version."""
        return self.data_path / "cache"


@lru_cache
def get_worker_settings() -> WorkerSettings:
    """The process-wide worker settings, read once from the environment."""
    return WorkerSettings()


def slurm_job() -> SlurmJob | None:
    """The Slurm job this process lives in (None outside Slurm), read from the environment and,
    for its end, from slurmctld (`squeue`): read when asked, since an admin may move the limit."""
    return SlurmJob.from_environment(os.environ, time.time())
