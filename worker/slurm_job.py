"""What a worker learns from the Slurm job it lives in: the job, its node, its GPUs, its end.

A worker started by `sbatch`/`srun` must judge on the GPUs Slurm granted and nothing else, name
its job in its heartbeat, and drain before the job's time limit. This module reads those facts
from an environment it is handed (the edges, worker.settings and celery_adapter, read os.environ)
and, where Slurm puts no end time there, from slurmctld through `squeue`. Standard library only.

Which GPU variable wins (Slurm 22.05, gres/gpu; gres.html "GPU Management", sbatch(1), srun(1)):
- CUDA_VISIBLE_DEVICES: Slurm sets it for the batch step and every srun step to the GPUs of that
  step, in the numbering this process's CUDA sees: the node's gres order, or, where the site
  constrains devices with cgroups (ConstrainDevices=yes), renumbered from 0 ("the first GPU
  device visible to the job"). It is what a worker must pin to, and whatever narrowed it later
  (a TaskProlog, the operator) narrowed it for CUDA too, so it wins.
- GPU_DEVICE_ORDINAL: Slurm sets it to the same list (for OpenCL/ROCm); used where
  CUDA_VISIBLE_DEVICES is missing.
- SLURM_STEP_GPUS (an srun step's GPUs) and SLURM_JOB_GPUS (the batch or interactive job's):
  the node's global GPU ids, "not relative to any device cgroup". They name the grant the way
  `scontrol show job -d` and the node's admins do, so they are what a TA page shows
  (`SlurmJob.gpu_ids`); as devices to open they are right only where devices are not
  constrained, so they are the last resort for `SlurmJob.gpus`. A step's list wins over the job's.
Slurm writes `NoDevFiles` where a gres has no device files; that names no GPU.

The end: Slurm 22.05 puts no end time in the job's environment (newer releases set
SLURM_JOB_END_TIME, which is read where present). slurmctld knows it: `squeue -h -j ID -o %e`
with SLURM_TIME_FORMAT=%s prints it in epoch seconds, whatever the node's time zone. A job
without a limit has none (`%l` says UNLIMITED). An admin may move the limit while the job runs
(`scontrol update jobid=ID TimeLimit=+60`): a SlurmJob is a snapshot; read it again to see that.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

GPU_VARIABLES = ("CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "SLURM_STEP_GPUS",
                 "SLURM_JOB_GPUS")  # for SlurmJob.gpus, the first one set wins
NO_DEVICES = "NoDevFiles"  # Slurm's value where a gres has no device files
QUERY_TIMEOUT_S = 10.0

# (job id, environment for the command, now) -> the job's end in epoch seconds, or None
EndTimeLookup = Callable[[str, Mapping[str, str], float], "float | None"]


def gpu_list(value: str) -> tuple[str, ...]:
    """`0,2` or `GPU-8c1e...,MIG-...` as a tuple; `` and `NoDevFiles` name none."""
    return tuple(t.strip() for t in value.split(",") if t.strip() and t.strip() != NO_DEVICES)


def parse_squeue_end(line: str, now: float) -> float | None:
    """One `squeue -o '%e|%L|%l'` line (SLURM_TIME_FORMAT=%s) -> the end in epoch seconds.

    %e is the end as epoch seconds; where a wrapper ignored SLURM_TIME_FORMAT, %L (time left,
    `[days-]hours:minutes:seconds`) is added to `now`. UNLIMITED, NOT_SET or anything
    unreadable: None."""
    fields = line.strip().split("|")
    if len(fields) != 3 or fields[2].strip() in ("UNLIMITED", "NOT_SET", "INVALID", ""):
        return None
    end, left = fields[0].strip(), fields[1].strip()
    if end.isdigit():
        return float(end)
    seconds = duration_seconds(left)
    return None if seconds is None else now + seconds


def duration_seconds(text: str) -> int | None:
    """Slurm's `[days-][hours:]minutes:seconds` (or `minutes`) as seconds; None if unreadable."""
    days, _, clock = text.rpartition("-") if "-" in text else ("0", "", text)
    parts = clock.split(":")
    if not days.isdigit() or not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        return None
    numbers = [int(p) for p in parts]
    if len(numbers) == 1:
        numbers = [0, numbers[0], 0]  # a bare number is minutes
    while len(numbers) < 3:
        numbers.insert(0, 0)
    hours, minutes, seconds = numbers
    return ((int(days) * 24 + hours) * 60 + minutes) * 60 + seconds


def squeue_end_time(job_id: str, env: Mapping[str, str], now: float) -> float | None:
    """Ask slurmctld for the job's end; None where squeue is missing, fails or says no limit."""
    try:
        done = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%e|%L|%l"],
                              env={**env, "SLURM_TIME_FORMAT": "%s"}, capture_output=True,
                              text=True, timeout=QUERY_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.strip().splitlines()
    return parse_squeue_end(lines[0], now) if done.returncode == 0 and lines else None


@dataclass(frozen=True)
class SlurmJob:
    """The Slurm job a worker lives in, as it stood when read."""

    job_id: str  # SLURM_JOB_ID
    node: str  # SLURMD_NODENAME: Slurm's name for this node (may differ from the host name)
    partition: str  # SLURM_JOB_PARTITION ("" where unset)
    cluster: str  # SLURM_CLUSTER_NAME ("" where unset)
    gpus: tuple[str, ...]  # the granted GPUs as this process's CUDA numbers them: what to pin
    gpus_from: str  # the variable `gpus` came from ("" when none names a GPU)
    gpu_ids: tuple[str, ...]  # the same GPUs by Slurm's global ids: what the TA page names
    end_time: float | None  # epoch seconds of the time limit (None: no limit, or unknown)
    end_from: str  # "SLURM_JOB_END_TIME", "squeue", or "" when unknown

    @classmethod
    def from_environment(cls, env: Mapping[str, str], now: float,
                         ask: EndTimeLookup | None = squeue_end_time) -> SlurmJob | None:
        """The job `env` belongs to; None outside Slurm. `now` (epoch seconds) places an end
        that slurmctld gives as time left; `ask` None: never ask slurmctld."""
        job_id = env.get("SLURM_JOB_ID", "").strip()
        if not job_id:
            return None
        gpus, gpus_from = _granted_gpus(env)
        ids = gpu_list(env.get("SLURM_STEP_GPUS", "") or env.get("SLURM_JOB_GPUS", ""))
        end, end_from = _end_time(job_id, env, now, ask)
        return cls(job_id=job_id, node=env.get("SLURMD_NODENAME", ""),
                   partition=env.get("SLURM_JOB_PARTITION", ""),
                   cluster=env.get("SLURM_CLUSTER_NAME", ""), gpus=gpus, gpus_from=gpus_from,
                   gpu_ids=ids or gpus, end_time=end, end_from=end_from)

    def seconds_left(self, now: float) -> float | None:
        """Seconds until the time limit (0 once past it); None without a known limit."""
        return None if self.end_time is None else max(0.0, self.end_time - now)

    def summary(self) -> dict[str, object]:
        """What a heartbeat carries (flashjudge.contract.WorkerStatus.slurm): the TA page and
        /readyz name the job, its node and GPUs, and count down to `end_time`."""
        return {"job_id": self.job_id, "node": self.node, "partition": self.partition,
                "gpus": list(self.gpu_ids), "end_time": self.end_time}

    def describe(self, now: float) -> str:
        """One line for a heartbeat or a log: `Slurm job 4812 on gpu07 (nvidia), GPUs 2,3,
        1:02:03 left`."""
        where = f" ({self.partition})" if self.partition else ""
        gpus = f"GPUs {','.join(self.gpu_ids)}" if self.gpu_ids else "no GPU"
        left = self.seconds_left(now)
        until = "no time limit" if left is None else f"{_clock(left)} left"
        return f"Slurm job {self.job_id} on {self.node or '?'}{where}, {gpus}, {until}"


def _granted_gpus(env: Mapping[str, str]) -> tuple[tuple[str, ...], str]:
    for name in GPU_VARIABLES:
        if name in env:
            return gpu_list(env[name]), name if gpu_list(env[name]) else ""
    return (), ""


def _end_time(job_id: str, env: Mapping[str, str], now: float,
              ask: EndTimeLookup | None) -> tuple[float | None, str]:
    given = env.get("SLURM_JOB_END_TIME", "").strip()
    if given.isdigit():
        return float(given), "SLURM_JOB_END_TIME"
    end = ask(job_id, env, now) if ask is not None else None
    return (end, "squeue") if end is not None else (None, "")


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
