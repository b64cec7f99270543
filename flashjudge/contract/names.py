"""Task and queue names: the strings on the wire between app/ and worker/.

Celery routes by these names, so a typo on one side is a message nobody consumes; both sides read
them from here and nowhere else.
"""

from __future__ import annotations

from enum import StrEnum


class Queue(StrEnum):
    """Broker queues. GPU workers read `gpu` then `gpu-low`; CPU workers `cpu`; the control worker,
    next to the database, reads `control`; custom runs have their own lower-priority queues."""

    GPU = "gpu"  # judging on a GPU
    CPU = "cpu"  # judging on the CPU track (c-program)
    CONTROL = "control"  # results and heartbeats, consumed next to the database
    GPU_LOW = "gpu-low"  # ncu profiles and timing refinement: only when no judging waits
    CUSTOM_GPU = "custom-gpu"  # custom runs (reference outputs of uploaded inputs) on a GPU
    CUSTOM_CPU = "custom-cpu"  # custom runs on the CPU


class Task(StrEnum):
    """Celery task names."""

    JUDGE = "flashjudge.judge"  # app -> gpu|cpu: judge one submission attempt
    CUSTOM_RUN = "flashjudge.custom_run"  # app -> custom-*: reference output of an uploaded input
    PROFILE = "flashjudge.profile"  # app -> gpu-low: one ncu run of a submission on one test
    REFINE_TIMING = "flashjudge.refine_timing"  # app -> gpu-low|cpu: re-run passed tests for times
    PAIRED_RUN = "flashjudge.paired_run"  # app -> gpu-low|cpu: two neighbours run interleaved
    RECORD_PROGRESS = "flashjudge.record_progress"  # worker -> control: a judging event
    RECORD_RESULT = "flashjudge.record_result"  # worker -> control: the final result
    RECORD_FAILURE = "flashjudge.record_failure"  # worker -> control: our failure (retry / SE)
    RECORD_HANDBACK = "flashjudge.record_handback"  # worker -> control: a judging it cannot
    # finish (its Slurm job ends or was cancelled): judge it again elsewhere, counted as nothing
    RECORD_DIAGNOSIS = "flashjudge.record_diagnosis"  # worker -> control: sanitizer findings
    RECORD_PROFILE = "flashjudge.record_profile"  # worker -> control: an ncu profile's outcome
    RECORD_CUSTOM_RUN = "flashjudge.record_custom_run"  # worker -> control: a custom run's outcome
    RECORD_TIMING = "flashjudge.record_timing"  # worker -> control: refined times of a result
    RECORD_PAIRED = "flashjudge.record_paired"  # worker -> control: a paired comparison's outcome
    WORKER_STATUS = "flashjudge.worker_status"  # worker -> control: heartbeat
    FINGERPRINT = "flashjudge.fingerprint"  # app -> control: similarity fingerprints of a
    # stored submission or an uploaded source (computed next to the database, never on a GPU)


JUDGE_QUEUES = (Queue.GPU, Queue.CPU)  # the queues a judging can wait on
LOW_PRIORITY = 9  # custom runs, profiles, timing refinements: a Redis broker hands a worker one
# only when no message of a higher priority (judgings: 0, the default) waits on its queues
ALL_QUEUES = tuple(Queue)
