"""A worker process's drain (worker/celery_adapter/drain.py): the judging in hand is handed back
exactly once when the Slurm job's end comes near or a SIGTERM reaches the process, and never
after its result went out; a draining worker takes nothing new. (The same, inside real Slurm
jobs judging real submissions: tests/slurm/test_slurm_worker.py.)"""

from __future__ import annotations

import signal
from pathlib import Path

from flashjudge.contract import Attempt
from worker.celery_adapter.drain import STOPPED, Drain
from worker.slurm_job import SlurmJob

START = 1_800_000_000.0
ATTEMPT = Attempt(7, 1, "k1")


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def job(end: float | None) -> SlurmJob:
    return SlurmJob(job_id="4812", node="gpu07", partition="nvidia", cluster="", gpus=("0",),
                    gpus_from="CUDA_VISIBLE_DEVICES", gpu_ids=("2",), end_time=end,
                    end_from="squeue")


def drain(end: float | None = START + 600, drain_file: Path | None = None
          ) -> tuple[Drain, Clock, list[tuple[Attempt, str]]]:
    clock, sent = Clock(), []
    made = Drain(lambda: job(end), handback_s=60, drain_file=drain_file,
                 hand_back=lambda a, why: sent.append((a, why)), clock=clock)
    return made, clock, sent


def test_the_judging_goes_on_until_the_end_is_nearer_than_the_hand_back_margin() -> None:
    d, clock, sent = drain()
    with d.holding(ATTEMPT):
        d.check_now()
        clock.now = START + 539  # 61 s left
        d.check_now()
        assert sent == [] and d.may_report(ATTEMPT) is True
    d, clock, sent = drain()
    with d.holding(ATTEMPT):
        clock.now = START + 541  # 59 s left
        d.check_now()
        d.check_now()
        assert sent == [(ATTEMPT, "Slurm job 4812 ends in 59 s, under the 60 s a judging is "
                                  "given to finish")]
        assert d.handed_back(ATTEMPT) and d.may_report(ATTEMPT) is False


def test_a_result_that_went_out_is_never_handed_back() -> None:
    d, clock, sent = drain()
    with d.holding(ATTEMPT):
        assert d.may_report(ATTEMPT)
        clock.now = START + 590
        d.check_now()
    assert sent == []


def test_a_sigterm_while_judging_hands_it_back_at_once_and_no_result_follows() -> None:
    """Slurm's SIGTERM to every process of the job (scancel, the limit) reached the judged
    program too: whatever the judging says now is not to be trusted."""
    d, _clock, sent = drain(end=None)  # even in a job without a time limit
    with d.holding(ATTEMPT):
        assert signal.getsignal(signal.SIGTERM) == d.on_sigterm
        signal.raise_signal(signal.SIGTERM)  # the process lives on: the handler noted it
        assert d.stopped()
        assert d.may_report(ATTEMPT) is False  # the judging ended first: handed back here
        d.check_now()  # and the watch thread's later look sends nothing more
    assert sent == [(ATTEMPT, STOPPED)]
    assert signal.getsignal(signal.SIGTERM) != d.on_sigterm  # billiard's again, when idle


def test_a_draining_worker_takes_nothing_new_and_says_so(tmp_path: Path) -> None:
    d, clock, _sent = drain(drain_file=tmp_path / "drain")
    assert d.why_not_start() is None and d.state() == ""
    (tmp_path / "drain").touch()
    assert d.why_not_start() == "this worker is draining"
    with d.holding(ATTEMPT):
        assert d.state() == "draining, its Slurm job ends in 600 s: finishing submission 7"
    clock.now = START + 570
    assert d.why_not_go_on() is not None


def test_outside_slurm_nothing_drains_by_the_clock() -> None:
    d, clock, sent = drain(end=None)
    d.job = None
    with d.holding(ATTEMPT):
        clock.now = START + 10**6
        d.check_now()
    assert sent == [] and d.why_not_start() is None and d.state() == ""
