"""One timed run of one test, as the timing policy sees it, and the runner that makes one."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from worker.timing.gpustate import GpuMonitor, GpuSample, slowed_between


@dataclass(frozen=True)
class Sample:
    """One run of one test."""

    seconds: float  # the time that counts: the student's process wall time (TestResult.seconds)
    passed: bool  # the run's verdict was AC; a failed run's time is never used
    cost_s: float | None = None  # device time the run held (seconds + overhead); None: seconds
    gpu_before: GpuSample | None = None  # the GPU just before the run (None: no NVML)
    gpu_after: GpuSample | None = None  # the GPU just after the run
    kept: bool = True  # False: left out of the statistic (failed, or throttled and redone)

    @property
    def cost(self) -> float:
        """The device seconds this run held."""
        return self.cost_s if self.cost_s is not None else self.seconds

    @property
    def throttled(self) -> bool:
        """Whether the GPU was slowed during this run (gpustate.slowed_between)."""
        return slowed_between(self.gpu_before, self.gpu_after, self.seconds)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds, "passed": self.passed, "cost_s": self.cost_s,
            "gpu_before": self.gpu_before.to_dict() if self.gpu_before else None,
            "gpu_after": self.gpu_after.to_dict() if self.gpu_after else None,
            "kept": self.kept, "throttled": self.throttled,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sample:
        before, after = data.get("gpu_before"), data.get("gpu_after")
        return cls(
            seconds=float(data["seconds"]), passed=bool(data["passed"]),
            cost_s=data.get("cost_s"),
            gpu_before=GpuSample.from_dict(before) if before else None,
            gpu_after=GpuSample.from_dict(after) if after else None,
            kept=bool(data.get("kept", True)),
        )


Runner = Callable[[str], Sample]  # runs the test with this id once, returns its sample


def gpu_sampled(run: Runner, monitor: GpuMonitor | None) -> Runner:
    """`run`, with the GPU's state read just before and just after every call (unchanged when
    there is no monitor: the CPU track)."""
    if monitor is None:
        return run

    def sampled(test_id: str) -> Sample:
        before = monitor.sample()
        sample = run(test_id)
        return dataclasses.replace(sample, gpu_before=before, gpu_after=monitor.sample())

    return sampled
