"""What the timing policy hands back: per test the runs, the statistic, the band and why it stopped,
and the total with its band. `TimingReport.to_dict()` is the payload of the "timing" message."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from worker.timing.sample import Sample
from worker.timing.stats import Estimate


class StopReason(StrEnum):
    """Why a test got no more runs."""

    TARGET = "target"  # its relative standard error reached the target after the minimum runs
    TINY = "tiny"  # too short to move the total: no repeats
    FAILED = "failed"  # the verdict pass failed it: never run again
    FAILED_REPEAT = "failed-repeat"  # a repeat failed (a flaky program): no more runs, time unused
    BUDGET = "budget"  # the refinement budget could not pay for its next runs
    MAX_RUNS = "max-runs"  # it reached the most runs a test may get


@dataclass
class TestTiming:
    """One test's timing."""

    __test__ = False  # not a pytest class

    id: str  # the test id, e.g. "t01"
    samples: list[Sample]  # every run in order, the verdict pass's first, those left out included
    estimate: Estimate  # the statistic and its band, from the kept runs
    stop: StopReason  # why it got no more runs

    @property
    def flagged(self) -> bool:
        """A run made while the GPU was slowed is in the statistic (its redo was slowed too, or
        the budget allowed none)."""
        return any(s.kept and s.throttled for s in self.samples)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "samples": [s.to_dict() for s in self.samples],
                "estimate": self.estimate.to_dict(), "stop": str(self.stop),
                "flagged": self.flagged}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TestTiming:
        return cls(str(data["id"]), [Sample.from_dict(s) for s in data["samples"]],
                   Estimate.from_dict(data["estimate"]), StopReason(data["stop"]))


@dataclass
class TimingReport:
    """A judging's timing after the refinement phase."""

    tests: list[TestTiming]  # per test, in the suite's order
    total: Estimate  # the sum of the tests' statistics, with its band
    first_pass_s: float  # device seconds the verdict pass held (the sum of its runs' costs)
    budget_s: float  # device seconds the refinement was allowed
    spent_s: float  # device seconds the refinement's runs held
    runs: int  # runs the refinement made (redone and failed ones included)
    stopped: str  # "settled": every test stopped for its own reason; "budget": the budget ran out

    @property
    def cost_ratio(self) -> float:
        """The judging's device time against one pass's: (first pass + refinement) / first pass."""
        return (self.first_pass_s + self.spent_s) / self.first_pass_s if self.first_pass_s else 1.0

    def test(self, test_id: str) -> TestTiming:
        """The timing of one test (KeyError naming it if absent)."""
        for timing in self.tests:
            if timing.id == test_id:
                return timing
        raise KeyError(f"test {test_id!r} is not in this timing report")

    def to_dict(self) -> dict[str, Any]:
        return {"tests": [t.to_dict() for t in self.tests], "total": self.total.to_dict(),
                "first_pass_s": self.first_pass_s, "budget_s": self.budget_s,
                "spent_s": self.spent_s, "runs": self.runs, "stopped": self.stopped,
                "cost_ratio": self.cost_ratio}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TimingReport:
        return cls([TestTiming.from_dict(t) for t in data["tests"]],
                   Estimate.from_dict(data["total"]), float(data["first_pass_s"]),
                   float(data["budget_s"]), float(data["spent_s"]), int(data["runs"]),
                   str(data["stopped"]))
