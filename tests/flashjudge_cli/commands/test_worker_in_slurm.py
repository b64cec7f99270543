"""`flashjudge worker` in a Slurm job: when it drains by itself, how long it lets its processes
finish, and the names that keep two jobs on one node apart."""

from __future__ import annotations

from flashjudge_cli.commands.worker import (
    SLURM_KILL_MARGIN_S,
    STOP_GRACE_S,
    WorkerSpec,
    drain_alarm,
    in_job,
    stop_grace,
)
from worker.slurm_job import SlurmJob

NOW = 1_800_000_000.0


def job(left_s: float | None) -> SlurmJob:
    return SlurmJob(job_id="4812", node="gpu07", partition="nvidia", cluster="", gpus=(),
                    gpus_from="", gpu_ids=(), end_time=None if left_s is None else NOW + left_s,
                    end_from="squeue")


def test_it_drains_by_itself_ahead_of_the_end_or_halfway_through_a_short_job() -> None:
    assert drain_alarm(job(4 * 3600), 600, NOW) == 4 * 3600 - 600
    assert drain_alarm(job(600), 600, NOW) == 300  # a 10-minute job: halfway, not at once
    assert drain_alarm(job(None), 600, NOW) == 0  # no limit: only a signal drains it
    assert drain_alarm(None, 600, NOW) == 0


def test_it_lets_its_processes_finish_until_just_before_slurm_would_kill_them() -> None:
    assert stop_grace(job(600), NOW) == 600 - SLURM_KILL_MARGIN_S
    assert stop_grace(job(3), NOW) == 0
    assert stop_grace(job(None), NOW) == stop_grace(None, NOW) == STOP_GRACE_S


def test_its_processes_carry_the_job_id_in_their_names() -> None:
    specs = [WorkerSpec("gpu0", "worker.celery_adapter.entry", "gpu", {})]
    assert [s.name for s in in_job(specs, job(60))] == ["gpu0-job4812"]
    assert in_job(specs, None) == specs
