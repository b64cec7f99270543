"""A judging's results as the timing policy's samples, by duck type (no pipeline import, so the
pipeline can move without breaking this).

- `sample_from_result(test)`: a pipeline TestResult as a policy Sample.
- `GpuEventRecorder`: a judge() listener that reads the GPU at each test-start and test-done, so
  the verdict pass's runs carry their GPU state too.
- `first_pass_samples(result, recorder)`: the verdict pass as the policy's first-pass input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from worker.timing.gpustate import GpuMonitor, GpuSample
from worker.timing.sample import Sample

PASSED = "AC"  # the verdict whose time counts (str(Verdict.AC))


class TestOutcome(Protocol):
    """What the policy needs of a pipeline TestResult."""

    id: str  # the test id
    verdict: Any  # a Verdict (str() gives "AC", "WA", ...)
    seconds: float  # the time that counts
    overhead_s: float  # the judge's time around the run


class Event(Protocol):
    """What the recorder needs of a pipeline JudgeEvent."""

    kind: str  # "test-start" | "test-done" | others, ignored
    test_id: str | None  # the test concerned


def sample_from_result(test: TestOutcome, before: GpuSample | None = None,
                       after: GpuSample | None = None) -> Sample:
    """One run's sample: its time, whether it passed, the device time it held (run + overhead)."""
    return Sample(seconds=test.seconds, passed=str(test.verdict) == PASSED,
                  cost_s=test.seconds + test.overhead_s, gpu_before=before, gpu_after=after)


@dataclass
class GpuEventRecorder:
    """A judge() listener: the GPU's state at each test's start and end (nothing without NVML).

    The reads bracket the judge's work around the run too (setup, compare), which is harmless: a
    slowdown's violation counters only grow while the GPU works."""

    monitor: GpuMonitor | None  # None: the CPU track, nothing is read
    before: dict[str, GpuSample] = field(default_factory=dict)  # test id -> state at test-start
    after: dict[str, GpuSample] = field(default_factory=dict)  # test id -> state at test-done

    def __call__(self, event: Event) -> None:
        if self.monitor is None or event.test_id is None:
            return
        if event.kind == "test-start":
            self.before[event.test_id] = self.monitor.sample()
        elif event.kind == "test-done":
            self.after[event.test_id] = self.monitor.sample()


def first_pass_samples(tests: list[TestOutcome],
                       recorder: GpuEventRecorder | None = None) -> dict[str, Sample]:
    """The verdict pass's tests (JudgeResult.tests) as refine()'s first pass, in their order."""
    before = recorder.before if recorder else {}
    after = recorder.after if recorder else {}
    return {t.id: sample_from_result(t, before.get(t.id), after.get(t.id)) for t in tests}
