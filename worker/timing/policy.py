"""Adaptive repeats: after the verdict pass, spend a bounded budget of runs where they cut the
uncertainty of the total most.

The verdict pass (one run per test) has already been sent to the student. Refinement then re-runs
passed tests, within `extra_share` (0.5) of the verdict pass's device time, so a whole judging costs
at most 1.5x one pass. The rules:
- A failed test is never run again; a tiny test (under 0.5 s AND under 1% of the pass's total: its
  3% noise moves the total by < 0.03%) gets no repeats.
- The next step goes to the test whose runs cut the total's variance most per device second:
  sigma^2 * (1/n - 1/(n+k)) / (k * cost). With the prior noise (3% of the time) that favours the
  long tests; once measured, the noisy ones. Tests with fewer than `min_runs` runs come first.
- A step is two runs while a test has an odd count (so the median is a true middle run), else
  one; one run when only one fits the budget.
- A test stops once it has `min_runs` runs and its relative standard error is <= `target_rse`,
  or at `max_runs`; everything stops when no next step fits the budget.
- A run during which the GPU was slowed (gpustate) is left out and redone, once per test; a later
  slowed run of that test is kept and the test flagged (a kernel that caps its own power would
  otherwise be redone forever). A repeat that fails ends that test's repeats, its time unused.
The budget is checked against the test's slowest run so far plus 10% (`cost_margin`), so the
spending stays within it unless a run comes out over 10% slower than every earlier run of its test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from worker.timing.report import StopReason, TestTiming, TimingReport
from worker.timing.sample import Runner, Sample
from worker.timing.stats import NoiseModel, estimate, run_sigma, total_estimate

MIN_COST_S = 1e-6  # a run costs at least this in the priority (no division by zero)


@dataclass(frozen=True)
class PolicyConfig:
    """The refinement's limits and targets."""

    extra_share: float = 0.5  # device time allowed, as a share of the verdict pass's
    min_runs: int = 3  # runs each repeated test gets first, where the budget allows
    max_runs: int = 9  # the most kept runs a test gets
    target_rse: float = 0.01  # a test stops once its relative standard error is at most this
    tiny_s: float = 0.5  # a test under this many seconds ...
    tiny_share: float = 0.01  # ... and under this share of the pass's total is not repeated
    redo_throttled: bool = True  # redo (once per test) a run the GPU slowed
    cost_margin: float = 0.1  # a next run is priced at the test's slowest run times 1 + this
    noise: NoiseModel = field(default_factory=NoiseModel)  # the noise assumed before measured


@dataclass
class _Test:
    """One test's runs while the refinement goes on."""

    id: str  # the test id
    samples: list[Sample]  # every run so far, the verdict pass's first
    stop: StopReason | None = None  # why it gets no more runs; None: still open
    redone: bool = False  # its one redo of a slowed run is spent

    def times(self) -> list[float]:
        return [s.seconds for s in self.samples if s.kept]

    def unit_cost(self, margin: float) -> float:
        """What one more run is expected to cost at most: the slowest run so far, plus a margin."""
        return max(MIN_COST_S, (1 + margin) * max(s.cost for s in self.samples))


class _Refinement:
    """The refinement's state: the tests, the runner, what is spent."""

    def __init__(self, tests: list[_Test], run: Runner, budget_s: float,
                 config: PolicyConfig) -> None:
        self.tests = tests  # every test, in the suite's order
        self.run = run  # runs one test once
        self.budget_s = budget_s  # device seconds allowed
        self.spent_s = 0.0  # device seconds spent
        self.runs = 0  # runs made
        self.config = config  # limits and targets

    def fits(self, test: _Test, runs: int) -> bool:
        return self.spent_s + runs * test.unit_cost(self.config.cost_margin) <= self.budget_s

    def run_once(self, test: _Test) -> None:
        """One more run of `test`: a failure ends its repeats, a slowed run is redone once."""
        sample = self.run(test.id)
        self.spent_s += sample.cost
        self.runs += 1
        if not sample.passed:
            test.samples.append(dataclasses.replace(sample, kept=False))
            test.stop = StopReason.FAILED_REPEAT
            return
        test.samples.append(sample)
        if sample.throttled:
            self.redo_last(test)

    def redo_last(self, test: _Test) -> None:
        """Leave the test's last (slowed) run out and run it again: once per test, in budget."""
        if not self.config.redo_throttled or test.redone or not self.fits(test, 1):
            return
        test.redone = True
        test.samples[-1] = dataclasses.replace(test.samples[-1], kept=False)
        self.run_once(test)

    def gain(self, test: _Test, runs: int) -> float:
        """How much `runs` more runs cut the total's variance, per device second."""
        times = test.times()
        sigma = run_sigma(times, self.config.noise)
        n = len(times)
        return sigma**2 * (1 / n - 1 / (n + runs)) / (runs * test.unit_cost(0.0))

    def step_size(self, test: _Test) -> int:
        return 2 if len(test.times()) % 2 == 1 else 1

    def next_test(self) -> _Test | None:
        """The open test whose next step is worth most; those under min_runs first."""
        open_ = [t for t in self.tests if t.stop is None]
        if not open_:
            return None
        return max(open_, key=lambda t: (len(t.times()) < self.config.min_runs,
                                         self.gain(t, self.step_size(t))))

    def step(self, test: _Test) -> None:
        """Give `test` its next runs, or stop it when the budget cannot pay for one."""
        runs = self.step_size(test)
        if not self.fits(test, runs):
            runs = 1
        if not self.fits(test, runs):
            test.stop = StopReason.BUDGET
            return
        for _ in range(runs):
            if test.stop is None:
                self.run_once(test)
        self.settle(test)

    def settle(self, test: _Test) -> None:
        """Stop `test` if it has reached the target or the most runs."""
        if test.stop is not None:
            return
        times = test.times()
        if len(times) >= self.config.max_runs:
            test.stop = StopReason.MAX_RUNS
        elif (len(times) >= self.config.min_runs
              and estimate(times, self.config.noise).rse <= self.config.target_rse):
            test.stop = StopReason.TARGET

    def spend(self) -> None:
        while (test := self.next_test()) is not None:
            self.step(test)


def _triage(tests: list[_Test], config: PolicyConfig) -> None:
    """Stop the failed and the tiny tests before any run."""
    total = sum(t.samples[0].seconds for t in tests)
    for test in tests:
        first = test.samples[0]
        if not first.passed:
            test.stop = StopReason.FAILED
        elif first.seconds < config.tiny_s and first.seconds < config.tiny_share * total:
            test.stop = StopReason.TINY


def _report(work: _Refinement, first_pass_s: float) -> TimingReport:
    noise = work.config.noise
    timings = [TestTiming(t.id, t.samples, estimate(t.times() or [t.samples[0].seconds], noise),
                          t.stop or StopReason.BUDGET) for t in work.tests]
    stopped = "budget" if any(t.stop == StopReason.BUDGET for t in timings) else "settled"
    return TimingReport(timings, total_estimate([t.estimate for t in timings], noise),
                        first_pass_s, work.budget_s, work.spent_s, work.runs, stopped)


def refine(first_pass: Mapping[str, Sample], run: Runner,
           config: PolicyConfig = PolicyConfig()) -> TimingReport:
    """Re-run tests after the verdict pass (`first_pass`: test id -> its one sample, in the
    suite's order) through `run`, within the budget; the tests' statistics and the total's band."""
    tests = [_Test(test_id, [sample]) for test_id, sample in first_pass.items()]
    first_pass_s = sum(s.cost for s in first_pass.values())
    work = _Refinement(tests, run, config.extra_share * first_pass_s, config)
    _triage(tests, config)
    for test in sorted(tests, key=lambda t: -t.samples[0].seconds):
        if test.stop is None and test.samples[0].throttled:
            work.redo_last(test)
    work.spend()
    return _report(work, first_pass_s)
