"""The control side's worker jobs against the tests' Slurm (app/upkeep/slurm_scaler.py): the queue
grows until a job of the template is submitted, the job judges it all, and once the queue is
idle the job drains and ends COMPLETED; a partition that refuses jobs, or one that is down, is
shown on the TA page and in the audit log and not retried in a loop. Counts: judged once, lost
0, SE 0. The passes are driven here with the clock they look at (`now`), so what "waited 2
minutes" means does not depend on this machine's load."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.core.config import Settings
from app.db.models import AuditLog, SlurmJob, utcnow
from app.results.overview import status
from app.submissions import capacity, dispatch, lifecycle
from app.upkeep.slurm_commands import SlurmCommands, job_env
from app.upkeep.slurm_scaler import Decision, scale
from app.wiring import wired_sessions
from tests.app.utils.processes import REPO
from tests.slurm.cluster import SlurmCluster, wait_until
from tests.slurm.judging import DRAIN_S, TEMPLATE, Judging

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("time_limit_job")]
WAIT_S, IDLE_S = 120.0, 600.0


def scaler(judging: Judging, slurm: SlurmCluster, *sbatch: str, retry_s: float = 1800
           ) -> tuple[Settings, SlurmCommands]:
    """The service's settings with the scaler on for the cpu queue, and its Slurm commands
    (what FLASHJUDGE_SLURM_JOB_ENV names: the worker's env file and checkout)."""
    args = " ".join(["--cpus-per-task=2", "--mem=2G", "--time=10",
                     f"--signal=B:TERM@{DRAIN_S}",
                     f"--output={judging.folder}/scaled-%j.out", *sbatch])
    job_vars = (f"FLASHJUDGE_ENV_FILE={judging.env_file} FLASHJUDGE_HOME={REPO} "
                f"FLASHJUDGE_VENV={sys.prefix}")
    settings = judging.settings.model_copy(update={
        "slurm_autoscale": True, "slurm_script": TEMPLATE, "slurm_sbatch_args": args,
        "slurm_queues": "cpu", "slurm_max_jobs": 1, "slurm_wait_s": WAIT_S,
        "slurm_idle_s": IDLE_S, "slurm_retry_s": retry_s, "slurm_job_env": job_vars})
    return settings, SlurmCommands(job_env(slurm.env, job_vars))


def passing(judging: Judging, settings: Settings, slurm: SlurmCommands,
            ahead_s: float) -> Callable[[], list[Decision]]:
    """One scaler pass, its clock `ahead_s` past now."""
    def once() -> list[Decision]:
        with wired_sessions(settings.db_url)() as db:
            return scale(db, settings, slurm, utcnow() + timedelta(seconds=ahead_s))
    return once


def audit_lines(judging: Judging) -> list[str]:
    with wired_sessions(judging.settings.db_url)() as db:
        return [str((row.detail or {}).get("message", "")) for row in
                db.scalars(select(AuditLog).where(AuditLog.action.like("slurm-%"))
                           .order_by(AuditLog.id))]


def our_jobs(judging: Judging) -> list[SlurmJob]:
    with wired_sessions(judging.settings.db_url)() as db:
        rows = list(db.scalars(select(SlurmJob).order_by(SlurmJob.id)))
        db.expunge_all()
        return rows


def no_live_cpu_worker(judging: Judging) -> bool:
    with wired_sessions(judging.settings.db_url)() as db:
        return not [w for w in capacity.live_workers(db, judging.settings) if "cpu" in w.queues]


def forget_queued_work(judging: Judging) -> None:
    """Cancel what waits, as a TA's "Cancel all queued" does."""
    with wired_sessions(judging.settings.db_url)() as db:
        task_ids = lifecycle.cancel_queued(db, "c-program")
        db.commit()
        dispatch.revoke(task_ids, judging.settings)


def forget_jobs(judging: Judging) -> None:
    """Each test starts with no job of ours on the books, no queued work."""
    with wired_sessions(judging.settings.db_url)() as db:
        for row in db.scalars(select(SlurmJob)):
            db.delete(row)
        db.commit()
    forget_queued_work(judging)


def test_the_queue_grows_until_a_job_is_submitted_then_idles_until_it_ends(
        slurm: SlurmCluster, judging: Judging) -> None:
    forget_jobs(judging)
    wait_until(lambda: no_live_cpu_worker(judging), 60, "earlier tests' workers to be gone")
    settings, commands = scaler(judging, slurm)
    ids = [judging.submit() for _ in range(2)]
    assert passing(judging, settings, commands, 0)() == []  # waiting, not yet for long
    made = passing(judging, settings, commands, WAIT_S + 1)()
    assert [d.action for d in made] == ["submit"]
    [job] = our_jobs(judging)
    assert job.job_id and job.why.endswith("1 of 1 jobs")
    assert re.fullmatch(rf"submitted job {job.job_id}: 2 judgings waiting \d+ min, 1 of 1 jobs",
                        audit_lines(judging)[0])
    later = passing(judging, settings, commands, WAIT_S + 1)
    wait_until(lambda: later() == [] and judging.all_done(ids), 120, "the job's verdicts")
    assert len(our_jobs(judging)) == 1  # busy, then idle: never a second job
    idle = passing(judging, settings, commands, WAIT_S + IDLE_S + 2)
    wait_until(lambda: idle() is not None and our_jobs(judging)[0].state == "COMPLETED", 90,
               "the idle job to drain and end")
    assert judging.counts(ids) == {"judged once": 2, "lost": 0, "SE": 0, "failures": 0}
    said = audit_lines(judging)
    assert any(re.fullmatch(rf"drained job {job.job_id}: the cpu queue empty for \d+ min", line)
               for line in said), said
    assert f"job {job.job_id} is COMPLETED" in said
    with wired_sessions(settings.db_url)() as db:
        shown = status(db, settings)["slurm_jobs"]
    assert [(j["job_id"], j["state"]) for j in shown] == [(job.job_id, "COMPLETED")]
    assert (judging.folder / f"scaled-{job.job_id}.out").exists()  # the template's --output


def test_a_partition_that_refuses_or_holds_jobs_is_shown_not_retried(
        slurm: SlurmCluster, judging: Judging) -> None:
    forget_jobs(judging)
    refusing, commands = scaler(judging, slurm, "--partition=inactive")
    judging.submit()
    for _ in range(3):
        passing(judging, refusing, commands, WAIT_S + 1)()
    [refused] = our_jobs(judging)
    assert (refused.job_id, refused.state) == (None, "REFUSED")
    assert "partition" in refused.reason.lower()
    refusals = [line for line in audit_lines(judging) if line.startswith("sbatch refused")]
    assert len(refusals) == 1 and refusals[0].startswith(
        "sbatch refused a cpu worker job (1 judging waiting 2 min, 1 of 1 jobs): ")
    down, commands = scaler(judging, slurm, "--partition=closed", retry_s=0)
    for _ in range(3):
        passing(judging, down, commands, WAIT_S + 1)()
    pending = our_jobs(judging)[1:]
    assert [(j.state, j.reason) for j in pending] == [("PENDING", "PartitionDown")]
    with wired_sessions(down.db_url)() as db:
        shown = status(db, down)["slurm_jobs"]
    assert [(j["state"], j["reason"]) for j in shown] == [("PENDING", "PartitionDown"),
                                                          ("REFUSED", refused.reason)]
    forget_queued_work(judging)
    idle = passing(judging, down, commands, WAIT_S + IDLE_S + 2)
    wait_until(lambda: idle() is not None and our_jobs(judging)[-1].state == "CANCELLED", 30,
               "the pending job cancelled once nothing waits")
    cancelled = rf"cancelled pending job {pending[0].job_id}: the cpu queue empty for \d+ min"
    assert any(re.fullmatch(cancelled, line) for line in audit_lines(judging))

