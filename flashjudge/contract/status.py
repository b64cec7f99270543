"""The enums both sides read: a test's verdict and a submission's status."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """One verdict per test (CE and SE apply to the whole submission)."""

    AC = "AC"  # accepted: every number within tolerance, in time
    WA = "WA"  # wrong answer: some number off by more than the tolerance (or NaN/inf)
    TLE = "TLE"  # time limit exceeded (measured wall time over the test's limit)
    RE = "RE"  # runtime error: non-zero exit status or killed by a signal
    MLE = "MLE"  # memory limit exceeded (host memory, cgroup)
    OLE = "OLE"  # output limit exceeded (wrote more than the output may hold)
    NO = "NO"  # no output: the output file is missing, not a regular file, or of the wrong size
    BK = "BK"  # borrowed kernel: a library's attention or matrix kernel ran (the suite forbids it)
    CE = "CE"  # compile error: the build failed (the log says why)
    SE = "SE"  # system error: our failure, to be retried, never the student's fault


class Status(StrEnum):
    """Where a submission (or custom run, or profile) is in its life."""

    QUEUED = "queued"  # stored and sent (or about to be); waiting for a worker
    RUNNING = "running"  # a worker reported that it judges the current attempt
    DONE = "done"  # final: a verdict (or SE, superseded, cancelled) is recorded
