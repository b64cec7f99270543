"""The throwaway Slurm runs jobs as a real one does, and the signals a worker will live by arrive
as the worker's drain expects: sbatch runs a job and keeps its output; plain `scancel` sends
SIGTERM to every process of the job (a sandboxed program included), then SIGKILL after KillWait;
`scancel --batch --signal=TERM` reaches the batch process alone, which is how a worker is asked
to drain; a partition that is down holds a job with a reason squeue names; an inactive one
refuses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slurm.cluster import (
    CLOSED,
    INACTIVE,
    KILL_WAIT_S,
    NODE,
    PARTITION,
    SlurmCluster,
    wait_until,
)
from tests.slurm.conftest import logger_job
from tests.slurm.joblog import alive, signals, wait_for_event, wait_started

# Submit the 1-minute time-limit job (test_slurm_time_limit.py) before these run, so its wait
# overlaps theirs.
pytestmark = pytest.mark.usefixtures("time_limit_job")


def test_a_batch_job_runs_and_its_output_appears(slurm: SlurmCluster, tmp_path: Path) -> None:
    output = tmp_path / "hello.out"
    job_id = slurm.sbatch("--output", str(output), "--wrap",
                          'echo "job $SLURM_JOB_ID on $SLURMD_NODENAME in $SLURM_JOB_PARTITION"')
    ended = slurm.wait_for(job_id, {"COMPLETED", "FAILED"}, 30)
    assert ended.state == "COMPLETED"
    assert output.read_text() == f"job {job_id} on {NODE} in {PARTITION}\n"


def test_scancel_terms_every_process_of_the_job_then_kills_it(slurm: SlurmCluster,
                                                              tmp_path: Path) -> None:
    """Both the batch process and a child in a session of its own get SIGTERM; neither exits on
    it, and both are gone KillWait later: what `scancel` does to a worker mid-judging."""
    output = tmp_path / "job.out"
    job_id = slurm.sbatch("--output", str(output), "--wrap", logger_job("--child"))
    started = wait_started(output, ("main", "child"))
    slurm.command("scancel", job_id)
    wait_until(lambda: not any(alive(p) for p in started.values()), 10 * KILL_WAIT_S + 10,
               "both processes to be killed")
    assert slurm.job(job_id).state == "CANCELLED"
    for role in ("main", "child"):
        assert "SIGTERM" in signals(output, role), role
    assert "exit" not in output.read_text()  # they ignored SIGTERM: SIGKILL ended them


def test_scancel_batch_signal_reaches_the_batch_process_alone(slurm: SlurmCluster,
                                                              tmp_path: Path) -> None:
    """`scancel --batch --signal=TERM`: the worker is told, its judged programs are not, and the
    job runs on until the worker leaves."""
    output = tmp_path / "job.out"
    job_id = slurm.sbatch("--output", str(output), "--wrap", logger_job("--child"))
    wait_started(output, ("main", "child"))
    slurm.command("scancel", "--batch", "--signal=TERM", job_id)
    wait_for_event(output, "main", "got SIGTERM", 20)
    assert signals(output, "child") == []
    assert slurm.job(job_id).state == "RUNNING"
    slurm.command("scancel", job_id)


def test_a_down_partition_holds_the_job_with_a_reason(slurm: SlurmCluster,
                                                     tmp_path: Path) -> None:
    job_id = slurm.sbatch("--partition", CLOSED, "--output", str(tmp_path / "never.out"),
                          "--wrap", "true")
    seen: list[str] = []

    def partition_down() -> bool:
        seen.append(slurm.job(job_id).reason)  # "None", then "Resources" for a pass or two
        return seen[-1] == "PartitionDown"
    wait_until(partition_down, 30, "the reason PartitionDown")
    assert slurm.job(job_id).state == "PENDING"
    squeue = slurm.command("squeue", "-h", "-j", job_id, "-o", "%T %r").stdout.strip()
    assert squeue == "PENDING PartitionDown"
    slurm.command("scancel", job_id)


def test_an_inactive_partition_refuses_the_job(slurm: SlurmCluster) -> None:
    refused = slurm.command("sbatch", "--partition", INACTIVE, "--wrap", "true", check=False)
    assert refused.returncode != 0
    assert "sbatch: error:" in refused.stderr
    assert "inactive" in refused.stderr.lower()
