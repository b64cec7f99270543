"""A job's time limit, as a worker will meet it: the warning asked for with
`--signal=B:USR1@40` reaches the batch process alone, before the limit; a job still running at
its limit gets SIGTERM in every process, then SIGKILL, and ends TIMEOUT with the reason TimeLimit.

The job (conftest.time_limit_job) was sent when the first Slurm test started: Slurm's limits are
whole minutes and slurmctld looks at them every 30 s, so it ends 60-90 s after it starts, and
these tests wait only for what is left of that."""

from __future__ import annotations

import pytest

from tests.slurm.cluster import SlurmCluster, wait_until
from tests.slurm.conftest import WARN_AHEAD_S, TimedJob
from tests.slurm.joblog import alive, events, signals, wait_for_event, wait_started

CHECK_PERIOD_S = 30  # slurmctld's pass over time limits and warnings (PERIODIC_TIMEOUT)
pytestmark = pytest.mark.slow  # 60-90 s after the job starts, whatever runs meanwhile


def test_the_warning_reaches_the_batch_process_alone_before_the_limit(
        slurm: SlurmCluster, time_limit_job: TimedJob) -> None:
    wait_started(time_limit_job.output, ("main", "child"), 60)
    warned = wait_for_event(time_limit_job.output, "main", "got SIGUSR1", 60 + CHECK_PERIOD_S)
    job = slurm.job(time_limit_job.job_id)
    assert job.start is not None
    limit = job.start + 60  # the 1-minute limit (EndTime shows it while the job runs; once it
    # ended, and this test may run after that on a loaded machine, its real end)
    # due WARN_AHEAD_S before the limit, sent on slurmctld's next pass after that
    assert limit - WARN_AHEAD_S - 1 <= warned.at <= limit
    assert "SIGUSR1" not in signals(time_limit_job.output, "child")


def test_a_job_running_at_its_limit_is_terminated_then_killed(
        slurm: SlurmCluster, time_limit_job: TimedJob) -> None:
    started = wait_started(time_limit_job.output, ("main", "child"), 60)
    ended = slurm.wait_for(time_limit_job.job_id, {"TIMEOUT", "CANCELLED", "COMPLETED", "FAILED"},
                           60 + 2 * CHECK_PERIOD_S)
    assert (ended.state, ended.reason) == ("TIMEOUT", "TimeLimit")
    wait_until(lambda: not any(alive(p) for p in started.values()), 30, "the job's processes to go")
    for role in ("main", "child"):
        # Slurm sends SIGCONT with the SIGTERM: a process that was not running when both came
        # (a loaded machine) has them delivered lowest number first, SIGTERM (15) before
        # SIGCONT (18), so the last one logged may be either: what counts is the SIGTERM
        terms = [s for s in signals(time_limit_job.output, role) if s != "SIGCONT"]
        assert terms[-1:] == ["SIGTERM"], role
    assert not [e for e in events(time_limit_job.output) if e.what == "exit"]
    assert ended.end is not None and ended.start is not None and ended.end >= ended.start + 60
