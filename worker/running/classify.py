"""From what happened in the sandbox and what the comparison found, to one verdict.

A pure function, so every branch is tested without running anything. The order matters and is the
order a student would expect: a program that ran out of time gets TLE even if it also crashed
when it was killed; one that crashed gets RE even if it left a correct-looking file behind.
"""

from __future__ import annotations

import signal as signals
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flashjudge.contract import Verdict
from worker.sandbox.bwrap import RunResult, RunStatus


class SystemFailure(Exception):
    """Our failure (sandbox, cache, harness set-up): judge the submission again, never blame it."""


@dataclass(frozen=True)
class OutputCheck:
    """What the judge found at the output path, without following links."""

    present: bool  # a regular file exists at the output path
    size: int  # its exact size in bytes (0 when absent)
    expected_size: int  # the size the output must have (4*B*N*d)
    path: Path | None = None  # the regular file found (None when absent or not a regular file)


@dataclass(frozen=True)
class Classification:
    """The verdict and the one line that explains it."""

    verdict: Verdict  # the test's verdict
    message: str  # why, in words a student can act on


def _signal_name(number: int | None) -> str:
    try:
        return signals.Signals(number).name if number is not None else "a signal"
    except ValueError:
        return f"signal {number}"


def classify_run(run: RunResult, time_limit_s: float) -> Classification | None:
    """The verdict decided by the process alone, or None when its output must be examined."""
    if run.status == RunStatus.SYSTEM_ERROR:
        raise SystemFailure(run.message or "the sandbox failed")
    if run.status == RunStatus.TIMEOUT or run.wall_s > time_limit_s:
        return Classification(Verdict.TLE, f"ran {run.wall_s:.2f} s, limit {time_limit_s:g} s")
    if run.status == RunStatus.MEMORY:
        return Classification(Verdict.MLE, "killed: host memory limit exceeded")
    if run.status == RunStatus.OUTPUT_LIMIT:
        return Classification(Verdict.OLE, "killed: wrote more than the output limit")
    if run.status == RunStatus.SIGNALED:
        return Classification(Verdict.RE, f"killed by {_signal_name(run.signal)}")
    if run.status == RunStatus.EXIT_NONZERO:
        return Classification(Verdict.RE, f"exit status {run.exit_code}")
    return None


def classify_output(output: OutputCheck, compare: Any | None) -> Classification:
    """The verdict of a program that ran cleanly: NO, WA or AC from its output and comparison."""
    if not output.present:
        return Classification(Verdict.NO, "no output file (or not a regular file)")
    if output.size != output.expected_size:
        return Classification(
            Verdict.NO, f"output has {output.size} bytes, expected {output.expected_size}"
        )
    if compare is None:
        raise SystemFailure("the output was not compared")
    if compare.ok:
        return Classification(Verdict.AC, compare.message or "within tolerance")
    return Classification(Verdict.WA, compare.message or "outside tolerance")


def classify(
    run: RunResult, time_limit_s: float, output: OutputCheck, compare: Any | None
) -> Classification:
    """One verdict for a test from its run, its output file and the comparison report."""
    return classify_run(run, time_limit_s) or classify_output(output, compare)
