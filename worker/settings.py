"""Worker settings: one pydantic-settings class read from FLASHJUDGE_* environment variables.

A GPU worker is configured by its environment alone (it holds no database credentials and no
session key). This is the one place on the worker side that reads it, at the edges: the Celery
adapter and the CLI build a JudgeConfig (`judge_config()`) or a Machine (`machine()`) from it and
pass that down; the pipeline, the languages and the sandbox never read the environment. Built
through the cached `get_worker_settings()`, never at import; tests that change the environment
call `get_worker_settings.cache_clear()`.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from worker.machine import Machine
from worker.pipeline import JudgeConfig
from worker.running.nodelock import NodeLock
from worker.running.overlap import Overlap
from worker.running.products import ProductCache
from worker.running.testrun import KernelTimer
from worker.sandbox.workspace import InputCache


class WorkerSettings(BaseSettings):
    """Everything a judge worker reads from its environment."""

    model_config = SettingsConfigDict(env_prefix="FLASHJUDGE_", extra="ignore",
                                      populate_by_name=True)

    data_dir: Path = Path("data")  # broker files (embedded broker) and the suite cache
    broker_url: str | None = None  # None: the embedded filesystem broker under data_dir
    log_level: str = "INFO"
    heartbeat_s: float = Field(10.0, gt=0)  # how often a worker tells the control side it lives
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
    gpu_minor: int | None = None  # the pinned GPU's device minor (set by `flashjudge worker`)
    cuda_visible_devices: str = Field(default="", validation_alias="CUDA_VISIBLE_DEVICES")
    cuda_home: str | None = Field(default=None,
                                   validation_alias=AliasChoices("CUDA_HOME", "CUDA_PATH"))

    @property
    def gpu_device(self) -> str:
        """The worker's GPU: the first entry of CUDA_VISIBLE_DEVICES (an index or a UUID)."""
        return self.cuda_visible_devices.split(",")[0].strip()

    def machine(self) -> Machine:
        """What the environment says about this machine, to hand down."""
        return Machine(gpu_device=self.gpu_device, gpu_minor=self.gpu_minor,
                       gpu_arch=self.gpu_arch,
                       cuda_home=self.cuda_home, bwrap=self.bwrap, cgroup_root=self.cgroup_root,
                       scratch=self.scratch, ncu=self.ncu)

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
