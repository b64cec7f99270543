"""The Slurm scaler's choices (app/upkeep/slurm_scaler.decide): a job when judgings wait and no
worker of their queue is idle, within the cap, never a second while one is pending, never again
soon after a refusal or a failure; a drain once the queue has been empty a while. (Against a
real Slurm: tests/slurm/test_slurm_scaler.py.)"""

from __future__ import annotations

from datetime import datetime, timedelta

from app.core.config import Settings
from app.db.models import SlurmJob
from app.upkeep.slurm_scaler import QueueLoad, decide

NOW = datetime(2026, 12, 3, 12, 0, 0)
SETTINGS = Settings(environment="test", secret_key="x" * 32, slurm_wait_s=120,
                    slurm_idle_s=600, slurm_max_jobs=3, slurm_retry_s=1800)


def load(waiting: int = 37, oldest_s: float = 240, idle: int = 0,
         idle_for_s: float | None = None, queue: str = "gpu") -> QueueLoad:
    return QueueLoad(queue, waiting, oldest_s, idle, idle_for_s)


def job(state: str, queue: str = "gpu", ended_ago_s: float | None = None) -> SlurmJob:
    ended = NOW - timedelta(seconds=ended_ago_s) if ended_ago_s is not None else None
    return SlurmJob(job_id="4812", queue=queue, state=state, reason="", why="",
                    submitted_at=NOW - timedelta(hours=1), updated_at=ended or NOW,
                    ended_at=ended)


def test_judgings_waiting_past_the_threshold_with_no_idle_worker_get_a_job() -> None:
    made = decide(load(), [job("RUNNING")], SETTINGS, NOW)
    assert made is not None and made.action == "submit"
    assert made.why == "37 judgings waiting 4 min, 2 of 3 jobs"


def test_no_job_before_the_threshold_or_while_a_worker_of_the_queue_is_idle() -> None:
    assert decide(load(oldest_s=119), [], SETTINGS, NOW) is None
    assert decide(load(idle=1), [], SETTINGS, NOW) is None


def test_the_cap_and_a_pending_job_hold_back_a_new_one() -> None:
    assert decide(load(), [job("RUNNING")] * 3, SETTINGS, NOW) is None
    assert decide(load(), [job("PENDING")], SETTINGS, NOW) is None
    other = decide(load(), [job("PENDING", queue="cpu")], SETTINGS, NOW)  # another queue's
    assert other is not None and other.action == "submit"


def test_a_refused_or_failed_job_is_not_retried_in_a_loop() -> None:
    for state in ("REFUSED", "FAILED"):
        assert decide(load(), [job(state, ended_ago_s=60)], SETTINGS, NOW) is None
        again = decide(load(), [job(state, ended_ago_s=1801)], SETTINGS, NOW)
        assert again is not None and again.action == "submit"
    finished = decide(load(), [job("COMPLETED", ended_ago_s=60)], SETTINGS, NOW)
    assert finished is not None  # a job that drained and ended is no trouble


def test_a_queue_empty_for_a_while_drains_its_jobs() -> None:
    made = decide(load(waiting=0, oldest_s=0, idle_for_s=600), [job("RUNNING")], SETTINGS, NOW)
    assert made is not None and (made.action, made.why) == ("drain",
                                                            "the gpu queue empty for 10 min")
    assert decide(load(waiting=0, oldest_s=0, idle_for_s=599), [job("RUNNING")], SETTINGS,
                  NOW) is None
    assert decide(load(waiting=0, oldest_s=0, idle_for_s=3600), [job("DRAINING")], SETTINGS,
                  NOW) is None  # told once
    assert decide(load(waiting=0, oldest_s=0, idle_for_s=3600), [], SETTINGS, NOW) is None
